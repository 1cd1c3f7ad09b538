// cat, and where/masked_fill on SELECT and SELECTS.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cat_ops.h>
#include <ATen/ops/masked_fill_ops.h>
#include <ATen/ops/where_ops.h>
#include <torch/library.h>

#include <bit>
#include <c10/util/accumulate.h>
#include <limits>

namespace npu::bridge {

namespace {

// --- where / masked_fill -----------------------------------------------------
//
// dst = cond ? a : b is one SELECT of two tensors (f32, i32; other types
// carried exactly in i32 words, emitSelectTensors), or one SELECTS when b
// is a scalar (every type, the scalar its 32-bit immediate). With a scalar a or a broadcast a, the
// mask is inverted (NOT) so that the full tensor is SELECT's first operand. Elements move as bits:
// a NaN's payload and -0 survive as on the CPU.

// A branch of where: an npu tensor or a CPU scalar (a Python number or
// 0-dim tensor).
bool branchLowerable(const at::Tensor &t) {
  return (isNpu(t) && isaType(t.scalar_type())) ||
         (isCpuScalar(t) && !c10::isComplexType(t.scalar_type()));
}

bool whereLowerable(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  return isNpu(cond) && cond.scalar_type() == at::kBool && branchLowerable(a) &&
         branchLowerable(b) && accepts<isa::inst::Selects>(at::result_type(a, b));
}

// The length of the row that t repeats over `shape`: t expanded to shape is
// contiguous over its trailing dims and broadcast over the leading ones.
// numel(shape) when t covers shape itself; 0 when t is neither.
int64_t repeatedRow(const at::Tensor &t, c10::IntArrayRef shape) {
  const at::Tensor e = t.expand(shape);
  int64_t d = e.dim(), length = 1;
  while (d > 0 && (shape[d - 1] == 1 || e.stride(d - 1) == length))
    length *= shape[--d];
  for (int64_t k = 0; k < d; ++k)
    if (shape[k] != 1 && e.stride(k) != 0)
      return 0;
  return length;
}

// An operand of a select packet: a word-aligned buffer that covers the
// packet's elements (cols == n) or repeats one row of cols elements.
struct Cover {
  at::Tensor buffer;
  int64_t cols;
};

// t as a select packet writing dst reads it: t itself when it is a full
// or repeated row, word-aligned, and either disjoint from dst or dst itself
// (mayAlias); otherwise a full-size copy.
Cover coverOf(const at::Tensor &t, const at::Tensor &dst, bool mayAlias) {
  const int64_t n = dst.numel();
  const int64_t cols = repeatedRow(t, dst.sizes());
  const bool alias = mayOverlap(t, dst);
  if (cols != 0 && wordAligned(t) &&
      (!alias || (mayAlias && cols == n && addressOf(t) == addressOf(dst))))
    return {t, cols};
  return {materialize(t, dst.sizes()), n};
}

// The mask's row (its cols elements) as a 1-D view.
at::Tensor maskRow(const Cover &mask) {
  return mask.buffer.as_strided({mask.cols}, {1});
}

// The inverted mask, covering what `mask` covers.
Cover inverted(const Cover &mask) {
  at::Tensor flipped = emptyNpu({mask.cols}, at::kBool);
  emitNot(flipped, maskRow(mask));
  return {flipped, mask.cols};
}

// The rows x cols split of n elements a mask of `maskCols` and an operand
// of `operandCols` share (n: full), or 0 when they need different ones.
int64_t sharedCols(int64_t n, int64_t maskCols, int64_t operandCols) {
  if (maskCols == n)
    return operandCols;
  if (operandCols == n || operandCols == maskCols)
    return maskCols;
  return 0;
}

isa::Broadcast maskBroadcast(const Cover &mask, int64_t n) {
  return mask.cols == n ? isa::Broadcast::none : isa::Broadcast::row;
}

// The 32-bit immediate of SELECTS that stores `value` as `type` does
// (binary32 for the float types, exact for bf16/f16 values; int32 for the
// integers, sign-extended for i64; 0 or 1 for b8), if there is one.
std::optional<uint32_t> selectImmediate(const at::Scalar &value, c10::ScalarType type) {
  const at::Tensor stored = at::scalar_tensor(value, at::TensorOptions().dtype(type));
  if (c10::isFloatingType(type))
    return std::bit_cast<uint32_t>(stored.to(at::kFloat).item<float>());
  const int64_t v = stored.to(at::kLong).item<int64_t>();
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return static_cast<uint32_t>(v);
}

// dst = mask ? a : s, a a full dense operand of dst.
void emitSelects(const at::Tensor &dst, const Cover &mask, const at::Tensor &a, uint32_t s) {
  const int64_t n = dst.numel();
  isa::inst::Selects inst;
  inst.dst = addressOf(dst);
  inst.a = addressOf(a);
  inst.mask = addressOf(mask.buffer);
  inst.rows = u32(n / mask.cols, "rows");
  inst.cols = u32(mask.cols, "columns");
  inst.s = s;
  inst.mbcast = maskBroadcast(mask, n);
  inst.dtype = *isaType(dst.scalar_type());
  emit(inst);
}

// dst = mask ? a : b for npu tensors of a type SELECT takes.
void emitSelect(const at::Tensor &dst, Cover mask, const at::Tensor &a, const at::Tensor &b) {
  const int64_t n = dst.numel();
  const Cover first = coverOf(a, dst, true);
  const at::Tensor full = first.cols == n ? first.buffer : materialize(a, dst.sizes());
  Cover other =
      b.numel() == 1 && wordAligned(b) && !mayOverlap(b, dst) ? Cover{b, 0} : coverOf(b, dst, true);
  int64_t cols = other.cols == 0 ? mask.cols : sharedCols(n, mask.cols, other.cols);
  if (cols == 0) {
    other = {materialize(b, dst.sizes()), n};
    cols = mask.cols;
  }
  isa::inst::Select inst;
  inst.dst = addressOf(dst);
  inst.a = addressOf(full);
  inst.b = addressOf(other.buffer);
  inst.mask = addressOf(mask.buffer);
  inst.rows = u32(n / cols, "rows");
  inst.cols = u32(cols, "columns");
  inst.bcast = other.cols == 0   ? isa::Broadcast::scalar
               : other.cols == n ? isa::Broadcast::none
                                 : isa::Broadcast::row;
  inst.mbcast = maskBroadcast(mask, n);
  inst.dtype = *isaType(dst.scalar_type());
  emit(inst);
}

// dst = mask ? a : b, a and b npu tensors of dst's type: SELECT, which
// takes every type but i64 (its mask, a and b would need five input
// slots); an i64 is two i32 words under a doubled mask, exact.
void emitSelectTensors(const at::Tensor &dst, const Cover &mask, const at::Tensor &a,
                       const at::Tensor &b) {
  const c10::ScalarType type = dst.scalar_type();
  if (accepts<isa::inst::Select>(type)) {
    emitSelect(dst, mask, a, b);
    return;
  }
  TORCH_INTERNAL_ASSERT(type == at::kLong, "no select carrier for ", type);
  const int64_t n = dst.numel();
  auto asWords = [&](const at::Tensor &t) { return t.view({n}).view(at::kInt); };
  const at::Tensor doubled = emptyNpu({n, 2}, at::kBool);
  emitGather(addressOf(doubled), mask.buffer.as_strided({n / mask.cols, mask.cols, 2}, {0, 1, 0}));
  emitSelect(asWords(dst), {doubled, 2 * n}, asWords(denseOperand(a, dst)),
             asWords(denseOperand(b, dst)));
}

// dst (contiguous, the broadcast shape, of its computing type) = cond ? a : b
// for a bool npu cond and branches that are npu tensors or CPU scalars.
void emitWhere(const at::Tensor &dst, const at::Tensor &cond, const at::Tensor &aIn,
               const at::Tensor &bIn) {
  const c10::ScalarType type = dst.scalar_type();
  const Cover mask = coverOf(cond, dst, false);
  auto immediate = [&](const at::Tensor &t) -> std::optional<uint32_t> {
    return isCpuScalar(t) ? selectImmediate(t.item(), type) : std::nullopt;
  };
  auto onDevice = [&](const at::Tensor &t) {
    if (isCpuScalar(t))
      return deviceScalar(t.item(), type);
    return binaryOperand(t, type);
  };
  if (const std::optional<uint32_t> s = immediate(bIn)) {
    emitSelects(dst, mask, denseOperand(onDevice(aIn), dst), *s);
    return;
  }
  const at::Tensor b = onDevice(bIn);
  const bool bFull = repeatedRow(b, dst.sizes()) == dst.numel();
  if (const std::optional<uint32_t> s = immediate(aIn)) {
    emitSelects(dst, inverted(mask), denseOperand(b, dst), *s);
    return;
  }
  const at::Tensor a = onDevice(aIn);
  const bool aFull = repeatedRow(a, dst.sizes()) == dst.numel();
  if (!aFull && bFull)
    emitSelectTensors(dst, inverted(mask), b, a);
  else
    emitSelectTensors(dst, mask, a, b);
}

void whereStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &cond,
                const at::Tensor &a, const at::Tensor &b) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(cond) + " ? " + (isNpu(a) ? shapeString(a) : "scalar") + " : " +
                   (isNpu(b) ? shapeString(b) : "scalar"));
  if (out.numel() == 0)
    return;
  storeResult(out, [&](const at::Tensor &dst) {
    emitAligned(dst, [&](const at::Tensor &target) { emitWhere(target, cond, a, b); });
  });
}

std::vector<int64_t> whereShape(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  return at::infer_size(at::infer_size(cond.sizes(), a.sizes()), b.sizes());
}

at::Tensor whereSelf(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  static OpCounter counter("where");
  if (!whereLowerable(cond, a, b))
    return fallbackTo<NPU_ATEN_OP2(where, self)>(cond, a, b);
  at::Tensor out = emptyNpu(whereShape(cond, a, b), at::result_type(a, b));
  whereStore(counter, out, cond, a, b);
  return out;
}

at::Tensor &whereOut(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b,
                     at::Tensor &out) {
  static OpCounter counter("where.out");
  if (!whereLowerable(cond, a, b) || !isNpu(out) || out.scalar_type() != at::result_type(a, b))
    return fallbackTo<NPU_ATEN_OP2(where, self_out)>(cond, a, b, out);
  at::native::resize_output(out, whereShape(cond, a, b));
  checkPointwiseWrite(out, {cond, a, b});
  whereStore(counter, out, cond, a, b);
  return out;
}

// What PyTorch's CPU masked_fill_ checks before writing: a warning for an
// expanded self (each of its elements is written with the value of its
// last position), an error for a mask that partly overlaps it.
void checkMaskedFillWrite(const at::Tensor &self, const at::Tensor &mask) {
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes)
    TORCH_WARN("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
               "before performing this operation. This also applies to advanced indexing e.g. "
               "tensor[mask] = scalar");
  at::assert_no_partial_overlap(self, mask);
}

// masked_fill(self, mask, value) = where(mask, value, self) in self's type:
// the value, a CPU scalar or 0-dim npu tensor, converted to it.
bool maskLowerable(const at::Tensor &self, const at::Tensor &mask, const at::Tensor &value) {
  return isNpu(self) && isNpu(mask) && mask.scalar_type() == at::kBool &&
         accepts<isa::inst::Selects>(self.scalar_type()) && value.dim() == 0 &&
         branchLowerable(value) && !c10::isComplexType(value.scalar_type()) &&
         at::infer_size(self.sizes(), mask.sizes()) == self.sizes();
}

// value as a branch of self's type.
at::Tensor fillValue(const at::Tensor &self, const at::Tensor &value) {
  if (isCpuScalar(value))
    return at::scalar_tensor(value.item(), at::TensorOptions().dtype(self.scalar_type()));
  return value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
}

at::Tensor maskedFill(const at::Tensor &self, const at::Tensor &mask, const at::Tensor &value) {
  static OpCounter counter("masked_fill");
  at::Tensor out = emptyNpuLike(self);
  whereStore(counter, out, mask, fillValue(self, value), self);
  return out;
}

at::Tensor &maskedFillInplace(at::Tensor &self, const at::Tensor &mask, const at::Tensor &value) {
  static OpCounter counter("masked_fill_");
  checkMaskedFillWrite(self, mask);
  whereStore(counter, self, mask, fillValue(self, value), self);
  return self;
}

at::Tensor scalarTensor(const at::Scalar &value) {
  return at::scalar_tensor(value, at::TensorOptions().dtype(at::kDouble));
}

at::Tensor maskedFillScalar(const at::Tensor &self, const at::Tensor &mask,
                            const at::Scalar &value) {
  if (!maskLowerable(self, mask, scalarTensor(value)))
    return fallbackTo<NPU_ATEN_OP2(masked_fill, Scalar)>(self, mask, value);
  return maskedFill(self, mask, scalarTensor(value));
}

at::Tensor &maskedFillScalarInplace(at::Tensor &self, const at::Tensor &mask,
                                    const at::Scalar &value) {
  if (!maskLowerable(self, mask, scalarTensor(value)))
    return fallbackTo<NPU_ATEN_OP2(masked_fill_, Scalar)>(self, mask, value);
  return maskedFillInplace(self, mask, scalarTensor(value));
}

at::Tensor maskedFillTensor(const at::Tensor &self, const at::Tensor &mask,
                            const at::Tensor &value) {
  if (!maskLowerable(self, mask, value))
    return fallbackTo<NPU_ATEN_OP2(masked_fill, Tensor)>(self, mask, value);
  return maskedFill(self, mask, value);
}

at::Tensor &maskedFillTensorInplace(at::Tensor &self, const at::Tensor &mask,
                                    const at::Tensor &value) {
  if (!maskLowerable(self, mask, value))
    return fallbackTo<NPU_ATEN_OP2(masked_fill_, Tensor)>(self, mask, value);
  return maskedFillInplace(self, mask, value);
}

// --- cat ---------------------------------------------------------------------

// Legacy rule: 1-D empty tensors take no part in cat.
bool skipped(const at::Tensor &t) {
  return t.dim() == 1 && t.size(0) == 0;
}

bool catLowerable(const at::ITensorListRef &tensors) {
  std::optional<c10::ScalarType> dtype;
  for (const at::Tensor &t : tensors) {
    if (!isNpu(t))
      return false;
    if (dtype && *dtype != t.scalar_type())
      return false;
    dtype = t.scalar_type();
  }
  return dtype.has_value();
}

// out (contiguous) = the inputs joined along dim: each input is gathered,
// dim outermost, into its slab of a staging buffer; one final gather
// moves dim back into place (when dim is not already outermost).
void emitCat(const at::Tensor &out, const std::vector<at::Tensor> &inputs, int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= out.size(d);
  const size_t itemsize = out.element_size();
  const at::Tensor staging = outer == 1 ? out : emptyNpuLike(out.movedim(dim, 0));
  uint64_t offset = 0;
  for (const at::Tensor &t : inputs) {
    emitGather(addressOf(staging) + offset * itemsize, t.movedim(dim, 0));
    offset += t.numel();
  }
  if (outer != 1)
    emitGather(addressOf(out), staging.movedim(0, dim));
}

std::vector<int64_t> catShape(const std::vector<at::Tensor> &inputs, int64_t dim) {
  std::vector<int64_t> shape(inputs[0].sizes().begin(), inputs[0].sizes().end());
  shape[dim] = 0;
  for (const at::Tensor &t : inputs) {
    TORCH_CHECK(t.dim() == int64_t(shape.size()),
                "Tensors must have same number of dimensions: got ", shape.size(), " and ",
                t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      TORCH_CHECK(d == dim || t.size(d) == shape[d],
                  "Sizes of tensors must match except in "
                  "dimension ",
                  dim, ". Expected size ", shape[d], " but got size ", t.size(d),
                  " for tensor number in the list.");
    shape[dim] += t.size(dim);
  }
  return shape;
}

// The inputs joined along dim into out, or into a new tensor when out is
// undefined; returns the result.
at::Tensor catInto(OpCounter &counter, const at::ITensorListRef &tensors, int64_t dim,
                   at::Tensor out) {
  OpScope scope(counter);
  const c10::ScalarType dtype = (*tensors.begin()).scalar_type();
  std::vector<at::Tensor> inputs;
  for (const at::Tensor &t : tensors)
    if (!skipped(t))
      inputs.push_back(t);
  std::vector<int64_t> shape{0};
  if (!inputs.empty()) {
    dim = c10::maybe_wrap_dim(dim, inputs[0].dim());
    shape = catShape(inputs, dim);
  }
  if (logOps())
    scope.describe(std::to_string(inputs.size()) + " tensors -> " + c10::str(shape));
  if (!out.defined()) {
    out = emptyNpu(shape, dtype);
  } else {
    at::native::resize_output(out, shape);
    checkPointwiseWrite(out, inputs);
  }
  if (out.numel() == 0)
    return out;
  bool direct = out.is_contiguous();
  for (const at::Tensor &t : inputs)
    direct = direct && !mayOverlap(out, t);
  const at::Tensor dst = direct ? out : emptyNpu(shape, dtype);
  emitCat(dst, inputs, dim);
  if (!direct)
    storeInto(out, addressOf(dst));
  return out;
}

at::Tensor cat(const at::ITensorListRef &tensors, int64_t dim) {
  static OpCounter counter("cat");
  if (!catLowerable(tensors))
    return fallbackTo<NPU_ATEN_OP(cat)>(tensors, dim);
  return catInto(counter, tensors, dim, at::Tensor());
}

at::Tensor &catOut(const at::ITensorListRef &tensors, int64_t dim, at::Tensor &out) {
  static OpCounter counter("cat.out");
  if (!catLowerable(tensors) || !isNpu(out) ||
      out.scalar_type() != (*tensors.begin()).scalar_type())
    return fallbackTo<NPU_ATEN_OP2(cat, out)>(tensors, dim, out);
  catInto(counter, tensors, dim, out);
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("where.self", whereSelf);
  m.impl("where.self_out", whereOut);
  m.impl("masked_fill.Scalar", maskedFillScalar);
  m.impl("masked_fill_.Scalar", maskedFillScalarInplace);
  m.impl("masked_fill.Tensor", maskedFillTensor);
  m.impl("masked_fill_.Tensor", maskedFillTensorInplace);
  m.impl("cat", cat);
  m.impl("cat.out", catOut);
}

} // namespace npu::bridge
