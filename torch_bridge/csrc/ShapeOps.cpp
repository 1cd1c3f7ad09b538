// cat, and where/masked_fill for attention masks.
//
// There is no select instruction: where(c, a, b) is built from a +-inf
// mask M (+inf where c) looked up per element by EMBEDDING (see
// selectByFlag): max(min(a, M), min(b, -M)) is a where c holds and b
// elsewhere, exactly, for every non-NaN a and b (a NaN in the branch not
// taken propagates). Two scalar branches are a single table lookup.
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

#include <limits>

namespace npu::bridge {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// --- where / masked_fill -----------------------------------------------------

// A branch of where: a float32 npu tensor or a CPU scalar.
bool branchLowerable(const at::Tensor &t) {
  return isFloatNpu(t) || (isCpuScalar(t) && !c10::isComplexType(t.scalar_type()));
}

bool whereLowerable(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  return isNpu(cond) && cond.scalar_type() == at::kBool && branchLowerable(a) &&
         branchLowerable(b) && (isFloatNpu(a) || isFloatNpu(b));
}

// dst (contiguous, the broadcast shape) = cond ? a : b.
void emitWhere(const at::Tensor &dst, const at::Tensor &cond, const at::Tensor &a,
               const at::Tensor &b) {
  const c10::IntArrayRef shape = dst.sizes();
  const at::Tensor flags = cond.expand(shape);
  if (isCpuScalar(a) && isCpuScalar(b)) {
    emitSelectByFlag(addressOf(dst), flags, static_cast<float>(b.item<double>()),
                     static_cast<float>(a.item<double>()));
    return;
  }
  const at::Tensor mask = selectByFlag(flags, -kInf, kInf);
  const at::Tensor inverse = emptyNpuLike(mask);
  emitUnary<isa::inst::Neg>(addressOf(inverse), addressOf(mask), mask.numel());
  // min(x, m): x where m = +inf, -inf where m = -inf.
  auto keepWhere = [&](const at::Tensor &target, const at::Tensor &x, const at::Tensor &m) {
    if (isCpuScalar(x))
      emitScalar<isa::inst::Mins>(addressOf(target), addressOf(m),
                                  static_cast<float>(x.item<double>()), target.numel());
    else
      emitBinary<isa::inst::Min>(target, m, x);
  };
  const at::Tensor fromA = emptyNpu(shape, at::kFloat);
  keepWhere(fromA, a, mask);
  keepWhere(inverse, b, inverse);
  emitBinary<isa::inst::Max>(dst, fromA, inverse);
}

void whereStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &cond,
                const at::Tensor &a, const at::Tensor &b) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(cond) + " ? " + shapeString(a) + " : " + shapeString(b));
  if (out.numel() == 0)
    return;
  // emitWhere reads cond, a and b completely before it writes dst, so dst
  // may alias any of them.
  storeResult(out, [&](const at::Tensor &dst) { emitWhere(dst, cond, a, b); });
}

std::vector<int64_t> whereShape(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  return at::infer_size(at::infer_size(cond.sizes(), a.sizes()), b.sizes());
}

at::Tensor whereSelf(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b) {
  static OpCounter counter("where");
  if (!whereLowerable(cond, a, b))
    return fallbackTo<NPU_ATEN_OP2(where, self)>(cond, a, b);
  at::Tensor out = emptyNpu(whereShape(cond, a, b), at::kFloat);
  whereStore(counter, out, cond, a, b);
  return out;
}

at::Tensor &whereOut(const at::Tensor &cond, const at::Tensor &a, const at::Tensor &b,
                     at::Tensor &out) {
  static OpCounter counter("where.out");
  if (!whereLowerable(cond, a, b) || !isFloatNpu(out))
    return fallbackTo<NPU_ATEN_OP2(where, self_out)>(cond, a, b, out);
  at::native::resize_output(out, whereShape(cond, a, b));
  checkPointwiseWrite(out, {cond, a, b});
  whereStore(counter, out, cond, a, b);
  return out;
}

at::Tensor scalarTensor(const at::Scalar &value) {
  return at::scalar_tensor(value, at::TensorOptions().dtype(at::kDouble));
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

bool maskLowerable(const at::Tensor &self, const at::Tensor &mask, const at::Tensor &value) {
  return whereLowerable(mask, value, self) && isFloatNpu(self) &&
         at::infer_size(self.sizes(), mask.sizes()) == self.sizes();
}

// masked_fill of an integer tensor with an integer value: self + m *
// (value - self) with the mask as 0/1 of self's type (CAST), by integer
// SUB, MUL and ADD, which wrap: exactly value where m is 1, self where 0.
bool integerMaskLowerable(const at::Tensor &self, const at::Tensor &mask, const at::Scalar &value) {
  const c10::ScalarType type = self.scalar_type();
  return isNpu(self) && isNpu(mask) && mask.scalar_type() == at::kBool &&
         !value.isFloatingPoint() && !value.isComplex() && !value.isBoolean() &&
         accepts<isa::inst::Sub>(type) && accepts<isa::inst::Mul>(type) &&
         accepts<isa::inst::Add>(type) &&
         at::infer_size(self.sizes(), mask.sizes()) == self.sizes();
}

void integerMaskedFill(OpCounter &counter, const at::Tensor &out, const at::Tensor &self,
                       const at::Tensor &mask, const at::Scalar &value) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " where " + shapeString(mask));
  if (self.numel() == 0)
    return;
  const c10::ScalarType type = self.scalar_type();
  at::Tensor chosen = emptyNpu(self.sizes(), type);
  copyInto(chosen, mask.expand(self.sizes()));
  const at::Tensor change = emptyNpu(self.sizes(), type);
  emitBinary<isa::inst::Sub>(change, deviceScalar(value, type), self);
  emitBinary<isa::inst::Mul>(chosen, chosen, change);
  storeResult(out, [&](const at::Tensor &dst) { emitBinary<isa::inst::Add>(dst, self, chosen); });
}

at::Tensor maskedFillScalar(const at::Tensor &self, const at::Tensor &mask,
                            const at::Scalar &value) {
  static OpCounter counter("masked_fill");
  const at::Tensor v = scalarTensor(value);
  if (integerMaskLowerable(self, mask, value)) {
    at::Tensor out = emptyNpuLike(self);
    integerMaskedFill(counter, out, self, mask, value);
    return out;
  }
  if (!maskLowerable(self, mask, v))
    return fallbackTo<NPU_ATEN_OP2(masked_fill, Scalar)>(self, mask, value);
  at::Tensor out = emptyNpuLike(self);
  whereStore(counter, out, mask, v, self);
  return out;
}

at::Tensor &maskedFillScalarInplace(at::Tensor &self, const at::Tensor &mask,
                                    const at::Scalar &value) {
  static OpCounter counter("masked_fill_");
  const at::Tensor v = scalarTensor(value);
  if (integerMaskLowerable(self, mask, value)) {
    checkMaskedFillWrite(self, mask);
    integerMaskedFill(counter, self, self, mask, value);
    return self;
  }
  if (!maskLowerable(self, mask, v))
    return fallbackTo<NPU_ATEN_OP2(masked_fill_, Scalar)>(self, mask, value);
  checkMaskedFillWrite(self, mask);
  whereStore(counter, self, mask, v, self);
  return self;
}

at::Tensor maskedFillTensor(const at::Tensor &self, const at::Tensor &mask,
                            const at::Tensor &value) {
  static OpCounter counter("masked_fill");
  if (value.dim() != 0 || !maskLowerable(self, mask, value))
    return fallbackTo<NPU_ATEN_OP2(masked_fill, Tensor)>(self, mask, value);
  at::Tensor out = emptyNpuLike(self);
  whereStore(counter, out, mask, value, self);
  return out;
}

at::Tensor &maskedFillTensorInplace(at::Tensor &self, const at::Tensor &mask,
                                    const at::Tensor &value) {
  static OpCounter counter("masked_fill_");
  if (value.dim() != 0 || !maskLowerable(self, mask, value))
    return fallbackTo<NPU_ATEN_OP2(masked_fill_, Tensor)>(self, mask, value);
  checkMaskedFillWrite(self, mask);
  whereStore(counter, self, mask, value, self);
  return self;
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
