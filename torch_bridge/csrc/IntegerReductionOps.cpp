// Integer reductions and cumsum: sums of int32/int64/bool tensors, maxima
// and minima of all elements, composed of the typed elementwise
// instructions (ADD, MAX, MIN) in log2(n) packets, and cumsum on CUMSUM.
// Integer addition wraps around and is associative, so a pairwise tree
// gives exactly the CPU's sequential result; maxima and minima are exact
// in any order. Float
// sums keep ROW_SUM (ReductionOps.cpp): a tree would round differently from
// the CPU's order.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cumsum_ops.h>
#include <ATen/ops/max_ops.h>
#include <ATen/ops/min_ops.h>
#include <ATen/ops/sum_ops.h>
#include <torch/library.h>

#include <bitset>

namespace npu::bridge {

namespace {

// Rows [first, first + count) of the contiguous [n, width] tensor t.
at::Tensor rowsOf(const at::Tensor &t, int64_t first, int64_t count) {
  return t.narrow(0, first, count);
}

// The reduction over dim 0 of the contiguous [n, width] tensor x (n >= 1)
// by Inst: halves combined pairwise until one row is left.
template <class Inst> at::Tensor treeReduce(at::Tensor x) {
  while (x.size(0) > 1) {
    const int64_t n = x.size(0), half = n / 2;
    at::Tensor next = emptyNpu({n - half, x.size(1)}, x.scalar_type());
    emitBinary<Inst>(rowsOf(next, 0, half), rowsOf(x, 0, half), rowsOf(x, half, half));
    if (n % 2 != 0)
      copyResult(rowsOf(next, half, 1), rowsOf(x, n - 1, 1));
    x = next;
  }
  return x[0];
}

// self with its `dims` first and the rest after, as a contiguous
// [reduced, kept] tensor of `type`.
at::Tensor reducedFirst(const at::Tensor &self, const std::bitset<64> &dims, c10::ScalarType type,
                        int64_t &reduced, std::vector<int64_t> &keptShape) {
  std::vector<int64_t> order;
  reduced = 1;
  int64_t kept = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (dims[d]) {
      order.push_back(d);
      reduced *= self.size(d);
    }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!dims[d]) {
      order.push_back(d);
      kept *= self.size(d);
      keptShape.push_back(self.size(d));
    }
  at::Tensor arranged = emptyNpu({reduced, kept}, type);
  if (arranged.numel() > 0)
    copyInto(arranged.view(self.permute(order).sizes()), self.permute(order));
  return arranged;
}

// The reduction of `dims` of self by Inst in `type` (self cast on the
// device first), shaped as PyTorch shapes it. An empty reduction is
// `identity` (sums; maxima and minima of nothing are the CPU's error).
template <class Inst>
at::Tensor integerReduce(OpCounter &counter, const at::Tensor &self, at::OptionalIntArrayRef dim,
                         bool keepdim, c10::ScalarType type) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self));
  const std::bitset<64> dims = reductionDims(self, dim);
  int64_t reduced = 0;
  std::vector<int64_t> keptShape;
  const at::Tensor arranged = reducedFirst(self, dims, type, reduced, keptShape);
  const std::vector<int64_t> shape = reducedShape(self, dims, keepdim);
  if (reduced == 0) {
    at::Tensor zeros = emptyNpu(shape, type);
    zeros.zero_();
    return zeros;
  }
  const at::Tensor result = treeReduce<Inst>(arranged);
  at::Tensor out = emptyNpu(shape, type);
  if (out.numel() > 0)
    copyResult(out.view(result.sizes()), result);
  return out;
}

bool isInteger(const at::Tensor &t) {
  return c10::isIntegralType(t.scalar_type(), /*includeBool=*/true);
}

// The type an integer sum computes in: int64 for every integer and bool
// input (PyTorch's promotion), or the dtype asked for.
std::optional<c10::ScalarType> integerSumType(const at::Tensor &self,
                                              std::optional<c10::ScalarType> dtype) {
  if (!isNpu(self) || !isInteger(self) || self.dim() > 64 ||
      !accepts<isa::inst::Cast>(self.scalar_type(), "stype"))
    return std::nullopt;
  const c10::ScalarType type = dtype.value_or(at::kLong);
  if (!c10::isIntegralType(type, false) || !accepts<isa::inst::Add>(type))
    return std::nullopt;
  return type;
}

// The maximum or minimum of all of a tensor's elements (max(), min()): a
// tree of MAX or MIN in the tensor's own type, exact in any order (a NaN
// anywhere gives NaN, as on the CPU).
template <class Inst, class Op> at::Tensor extremum(const at::Tensor &self) {
  static OpCounter counter(baseName<Op>());
  if (!isNpu(self) || self.numel() == 0 || !accepts<Inst>(self.scalar_type()) || self.dim() > 64)
    return fallbackTo<Op>(self);
  return integerReduce<Inst>(counter, self, std::nullopt, false, self.scalar_type());
}

// The type cumsum computes in on the device: dtype, else int64 for integer
// and bool inputs (PyTorch's rule) or the input's float type; CUMSUM must
// take it and CAST reach it from the input.
std::optional<c10::ScalarType> cumsumType(const at::Tensor &self,
                                          std::optional<c10::ScalarType> dtype) {
  if (!isNpu(self) || !isaType(self.scalar_type()))
    return std::nullopt;
  const c10::ScalarType type = dtype.value_or(isInteger(self) ? at::kLong : self.scalar_type());
  if (!accepts<isa::inst::Cumsum>(type) ||
      (type != self.scalar_type() && !(accepts<isa::inst::Cast>(self.scalar_type(), "stype") &&
                                       accepts<isa::inst::Cast>(type, "dtype"))))
    return std::nullopt;
  return type;
}

// cumsum along dim: one CUMSUM over the tensor with dim last (rows the
// other dims' elements), on a contiguous copy in the computing type.
// Integers wrap as on the CPU; floats add in binary32 in element order
// (PyTorch's CPU keeps a float32 running sum in binary64, so f32 results
// differ in the last bits; bf16/f16 equal it but for denormals:
// docs/arith.md).
at::Tensor cumsumCompute(OpCounter &counter, const at::Tensor &self, int64_t dim,
                         c10::ScalarType type) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " dim " + std::to_string(dim));
  at::Tensor result = emptyNpu(self.sizes(), type);
  if (self.numel() == 0)
    return result;
  if (self.dim() == 0) {
    copyInto(result, self);
    return result;
  }
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor moved = self.movedim(d, -1);
  const int64_t cols = moved.size(-1), rows = moved.numel() / cols;
  at::Tensor x = emptyNpu(moved.sizes(), type);
  copyInto(x, moved);
  isa::inst::Cumsum scan;
  scan.dst = addressOf(x);
  scan.src = addressOf(x);
  scan.rows = u32(rows, "rows");
  scan.cols = u32(cols, "columns");
  scan.dtype = *isaType(type);
  emit(scan);
  copyResult(result.movedim(d, -1), x);
  return result;
}

at::Tensor cumsum(const at::Tensor &self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("cumsum");
  const std::optional<c10::ScalarType> type = cumsumType(self, dtype);
  if (!type)
    return fallbackTo<NPU_ATEN_OP(cumsum)>(self, dim, dtype);
  return cumsumCompute(counter, self, dim, *type);
}

at::Tensor &cumsumOut(const at::Tensor &self, int64_t dim, std::optional<c10::ScalarType> dtype,
                      at::Tensor &out) {
  static OpCounter counter("cumsum.out");
  const std::optional<c10::ScalarType> type = cumsumType(self, dtype);
  if (!type || !isNpu(out) || out.scalar_type() != *type)
    return fallbackTo<NPU_ATEN_OP2(cumsum, out)>(self, dim, dtype, out);
  at::native::resize_output(out, self.sizes());
  // The CPU kernel's checks, with its messages.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  const at::Tensor result = cumsumCompute(counter, self, dim, *type);
  copyResult(out, result);
  return out;
}

at::Tensor &cumsumInplace(at::Tensor &self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("cumsum_");
  // In place, the sum keeps self's type unless dtype says otherwise.
  const std::optional<c10::ScalarType> type = cumsumType(self, dtype.value_or(self.scalar_type()));
  if (!type || *type != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP(cumsum_)>(self, dim, dtype);
  checkInternalOverlap(self);
  const at::Tensor result = cumsumCompute(counter, self, dim, *type);
  copyResult(self, result);
  return self;
}

} // namespace

// The integer sums of sum.dim_IntList and sum (ReductionOps.cpp sends
// integer and bool inputs here when no exact float count applies).
std::optional<at::Tensor> integerSum(const at::Tensor &self, at::OptionalIntArrayRef dim,
                                     bool keepdim, std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("sum");
  const std::optional<c10::ScalarType> type = integerSumType(self, dtype);
  if (!type)
    return std::nullopt;
  return integerReduce<isa::inst::Add>(counter, self, dim, keepdim, *type);
}

at::Tensor integerExtremaKeepdim(const at::Tensor &self, std::optional<int64_t> dim, bool min) {
  static OpCounter maxCounter("amax"), minCounter("amin");
  const at::OptionalIntArrayRef dims = dim ? at::OptionalIntArrayRef(*dim) : std::nullopt;
  return min ? integerReduce<isa::inst::Min>(minCounter, self, dims, true, self.scalar_type())
             : integerReduce<isa::inst::Max>(maxCounter, self, dims, true, self.scalar_type());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max", extremum<isa::inst::Max, NPU_ATEN_OP(max)>);
  m.impl("min", extremum<isa::inst::Min, NPU_ATEN_OP(min)>);
  m.impl("cumsum", cumsum);
  m.impl("cumsum.out", cumsumOut);
  m.impl("cumsum_", cumsumInplace);
}

} // namespace npu::bridge
