// Reductions over any set of dims: the kept dims become rows and the
// reduced ones columns (gathered into that order on the device when the
// tensor is not already laid out so), then ROW_SUM / ROW_MEAN / ROW_MAX.
// Sums over leading dims of a contiguous tensor use COL_SUM directly.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/all_ops.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amax_ops.h>
#include <ATen/ops/any_ops.h>
#include <ATen/ops/argmax_ops.h>
#include <ATen/ops/argmin_ops.h>
#include <ATen/ops/count_nonzero_ops.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/linalg_vector_norm_ops.h>
#include <ATen/ops/mean_ops.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/sum_ops.h>
#include <torch/library.h>

#include <bitset>
#include <limits>
#include <optional>
#include <type_traits>

namespace npu::bridge {

// The shape of the result of reducing `dims` of self.
std::vector<int64_t> reducedShape(const at::Tensor &self, const std::bitset<64> &dims,
                                  bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!dims[d])
      shape.push_back(self.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

std::bitset<64> reductionDims(const at::Tensor &self, at::OptionalIntArrayRef dim) {
  // An empty or absent list reduces every dim.
  if (!dim || dim->empty()) {
    std::bitset<64> all;
    for (int64_t d = 0; d < self.dim(); ++d)
      all.set(d);
    return all;
  }
  return at::dim_list_to_bitset(*dim, self.dim());
}

namespace {

template <class Inst>
void emitRowReduction(uint64_t dst, uint64_t src, int64_t rows, int64_t cols,
                      c10::ScalarType type) {
  Inst inst;
  inst.dst = dst;
  inst.src = src;
  inst.rows = u32(rows, "rows");
  inst.cols = u32(cols, "columns");
  inst.dtype = *isaType(type);
  emit(inst);
}

// Whether every reduced dim of size > 1 precedes every kept one.
bool reducedDimsLead(const at::Tensor &self, const std::bitset<64> &dims) {
  bool keptSeen = false;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) == 1)
      continue;
    if (!dims[d])
      keptSeen = true;
    else if (keptSeen)
      return false;
  }
  return true;
}

// self's dims in the order that makes the reduced ones (`dims`) columns:
// the kept dims first, each group in its own order, with the element
// counts of both groups.
struct RowsCols {
  std::vector<int64_t> order;
  int64_t rows = 1, cols = 1;
};

RowsCols reducedLast(const at::Tensor &self, const std::bitset<64> &dims) {
  RowsCols r;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!dims[d]) {
      r.order.push_back(d);
      r.rows *= self.size(d);
    }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (dims[d]) {
      r.order.push_back(d);
      r.cols *= self.size(d);
    }
  return r;
}

// A mask reduction of a bool tensor over `dims` in the reduced shape: one
// Inst over the mask with the reduced dims last (gathered into that order
// first when it is not laid out so): COUNT (the number of true elements,
// int64, exact for any count), ANY or ALL (bool). Reducing nothing gives
// `empty`.
template <class Inst>
at::Tensor maskReduce(const at::Tensor &mask, const std::bitset<64> &dims, bool keepdim,
                      c10::ScalarType resultType, bool empty) {
  at::Tensor result = emptyNpu(reducedShape(mask, dims, keepdim), resultType);
  const auto [order, rows, cols] = reducedLast(mask, dims);
  if (rows == 0)
    return result;
  if (cols == 0)
    return result.fill_(empty);
  const at::Tensor source = contiguousOnDevice(mask.permute(order));
  Inst inst;
  inst.dst = addressOf(result);
  inst.src = addressOf(source);
  inst.rows = u32(rows, "rows");
  inst.cols = u32(cols, "columns");
  emit(inst);
  return result;
}

at::Tensor countTrueOver(const at::Tensor &mask, const std::bitset<64> &dims, bool keepdim) {
  return maskReduce<isa::inst::Count>(mask, dims, keepdim, at::kLong, false);
}

// The truth of self's elements (nonzero, NaN included) as bool: self
// itself when it is bool, else a CAST.
at::Tensor truthOf(const at::Tensor &self) {
  if (self.scalar_type() == at::kBool)
    return self;
  at::Tensor mask = emptyNpu(self.sizes(), at::kBool);
  copyInto(mask, self);
  return mask;
}

// Where the reductions differ: the mean of no elements is NaN (the sum's is
// 0) and the max of none an error; only the sum and the mean have a column
// form (COL_SUM, then a division for the mean).
template <class RowInst>
inline constexpr bool kIsMean = std::is_same_v<RowInst, isa::inst::RowMean>;
template <class RowInst> inline constexpr bool kIsMax = std::is_same_v<RowInst, isa::inst::RowMax>;

// out (contiguous, the kept elements in order, of self's type) = the
// reduction of self by the row reduction RowInst (ROW_SUM, ROW_MEAN,
// ROW_MAX). A bf16 or f16 self is reduced on its typed streams in binary32
// and rounded once on store, as the CPU's kernels do, by the row form
// (COL_SUM's sums are binary32 whatever the type).
template <class RowInst>
void emitReduction(const at::Tensor &out, const at::Tensor &self, const std::bitset<64> &dims) {
  const auto [order, rows, cols] = reducedLast(self, dims);
  if (rows == 0)
    return;
  const uint64_t dst = addressOf(out);
  const c10::ScalarType type = self.scalar_type();
  if (cols == 0) {
    TORCH_CHECK(!kIsMax<RowInst>, "amax(): Expected reduction dim to be specified for "
                                  "input.numel() == 0. Specify the reduction dim with the "
                                  "'dim' argument.");
    const double empty = kIsMean<RowInst> ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    fillContiguous(dst, rows, out.element_size(), scalarBits(empty, type));
    return;
  }
  const at::Tensor arranged = self.permute(order);
  if (!arranged.is_contiguous() && !kIsMax<RowInst> && type == at::kFloat && self.is_contiguous() &&
      reducedDimsLead(self, dims)) {
    // One column sum per kept element, straight from self.
    emitRowReduction<isa::inst::ColSum>(dst, addressOf(self), cols, rows, type);
    if (kIsMean<RowInst>)
      emitScalar<isa::inst::Divs>(dst, dst, static_cast<float>(cols), rows);
    return;
  }
  const at::Tensor source = contiguousOnDevice(arranged);
  emitRowReduction<RowInst>(dst, addressOf(source), rows, cols, type);
}

template <class RowInst>
void reduceStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &self,
                 const std::bitset<64> &dims) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " -> " + shapeString(out));
  // The reductions read self while they write: an out that overlaps it
  // gets the result through a fresh buffer.
  if (out.is_contiguous() && !mayOverlap(out, self)) {
    emitReduction<RowInst>(out, self, dims);
  } else {
    const at::Tensor dense = emptyNpuLike(out);
    emitReduction<RowInst>(dense, self, dims);
    storeInto(out, addressOf(dense));
  }
}

// A float npu tensor of a type RowInst takes, reduced in its own type (no
// dtype argument choosing another).
template <class RowInst>
bool lowerable(const at::Tensor &self, std::optional<c10::ScalarType> dtype) {
  return ofAcceptedFloatType<RowInst>(self) && self.dim() <= 64 &&
         (!dtype || *dtype == self.scalar_type());
}


template <class RowInst>
at::Tensor reduce(OpCounter &counter, const at::Tensor &self, at::OptionalIntArrayRef dim,
                  bool keepdim) {
  const std::bitset<64> dims = reductionDims(self, dim);
  at::Tensor out = emptyNpu(reducedShape(self, dims, keepdim), self.scalar_type());
  reduceStore<RowInst>(counter, out, self, dims);
  return out;
}

// The out= form. PyTorch's CPU reductions do not check overlaps, except
// mean's (`checked`), which refuses an out with internal overlap.
template <class RowInst>
at::Tensor &reduceOut(OpCounter &counter, const at::Tensor &self, at::OptionalIntArrayRef dim,
                      bool keepdim, at::Tensor &out, bool checked = false) {
  const std::bitset<64> dims = reductionDims(self, dim);
  at::native::resize_output(out, reducedShape(self, dims, keepdim));
  if (checked)
    checkInternalOverlap(out);
  reduceStore<RowInst>(counter, out, self, dims);
  return out;
}

// A count of true elements (the sum of a bool tensor, int64 by default):
// COUNT, then CAST to another integer dtype (wrapping as the CPU's int64
// sum converted does) or to a float one. A float count is exact below 2^24,
// where the CPU's float summation is too; larger float counts fall back.
constexpr int64_t kExactFloatCount = int64_t(1) << 24;

bool countLowerable(const at::Tensor &self, at::OptionalIntArrayRef dim,
                    std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType type = dtype.value_or(at::kLong);
  if (!isNpu(self) || self.scalar_type() != at::kBool || self.dim() > 64 ||
      !(type == at::kLong || type == at::kInt || at::isFloatingType(type)) ||
      !accepts<isa::inst::Cast>(type))
    return false;
  if (!at::isFloatingType(type))
    return true;
  return reducedLast(self, reductionDims(self, dim)).cols < kExactFloatCount;
}

at::Tensor countTrue(OpCounter &counter, const at::Tensor &self, at::OptionalIntArrayRef dim,
                     bool keepdim, std::optional<c10::ScalarType> dtype) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self));
  const at::Tensor counts = countTrueOver(self, reductionDims(self, dim), keepdim);
  if (dtype.value_or(at::kLong) == at::kLong)
    return counts;
  at::Tensor result = emptyNpu(counts.sizes(), *dtype);
  copyInto(result, counts);
  return result;
}

at::Tensor sumDim(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("sum");
  if (countLowerable(self, dim, dtype))
    return countTrue(counter, self, dim, keepdim, dtype);
  if (std::optional<at::Tensor> sum = integerSum(self, dim, keepdim, dtype))
    return *sum;
  if (!lowerable<isa::inst::RowSum>(self, dtype))
    return fallbackTo<NPU_ATEN_OP2(sum, dim_IntList)>(self, dim, keepdim, dtype);
  return reduce<isa::inst::RowSum>(counter, self, dim, keepdim);
}

at::Tensor sumAll(const at::Tensor &self, std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("sum");
  if (countLowerable(self, std::nullopt, dtype))
    return countTrue(counter, self, std::nullopt, false, dtype);
  if (std::optional<at::Tensor> sum = integerSum(self, std::nullopt, false, dtype))
    return *sum;
  if (!lowerable<isa::inst::RowSum>(self, dtype))
    return fallbackTo<NPU_ATEN_OP(sum)>(self, dtype);
  return reduce<isa::inst::RowSum>(counter, self, std::nullopt, false);
}

at::Tensor &sumOut(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype, at::Tensor &out) {
  static OpCounter counter("sum.out");
  if (!lowerable<isa::inst::RowSum>(self, dtype) || !sameTypeNpu(out, self))
    return fallbackTo<NPU_ATEN_OP2(sum, IntList_out)>(self, dim, keepdim, dtype, out);
  return reduceOut<isa::inst::RowSum>(counter, self, dim, keepdim, out);
}

at::Tensor meanDim(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("mean");
  if (!lowerable<isa::inst::RowMean>(self, dtype))
    return fallbackTo<NPU_ATEN_OP2(mean, dim)>(self, dim, keepdim, dtype);
  return reduce<isa::inst::RowMean>(counter, self, dim, keepdim);
}

at::Tensor &meanOut(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor &out) {
  static OpCounter counter("mean.out");
  if (!lowerable<isa::inst::RowMean>(self, dtype) || !sameTypeNpu(out, self))
    return fallbackTo<NPU_ATEN_OP2(mean, out)>(self, dim, keepdim, dtype, out);
  return reduceOut<isa::inst::RowMean>(counter, self, dim, keepdim, out, /*checked=*/true);
}

at::Tensor amax(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  static OpCounter counter("amax");
  if (!lowerable<isa::inst::RowMax>(self, std::nullopt))
    return fallbackTo<NPU_ATEN_OP(amax)>(self, dim, keepdim);
  return reduce<isa::inst::RowMax>(counter, self, dim, keepdim);
}

at::Tensor &amaxOut(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, at::Tensor &out) {
  static OpCounter counter("amax.out");
  if (!lowerable<isa::inst::RowMax>(self, std::nullopt) || !sameTypeNpu(out, self))
    return fallbackTo<NPU_ATEN_OP2(amax, out)>(self, dim, keepdim, out);
  return reduceOut<isa::inst::RowMax>(counter, self, dim, keepdim, out);
}

// linalg_vector_norm of order 2 (SQRT of the ROW_SUM of the squares), 1
// (ROW_SUM of ABS) and +inf (ROW_MAX of ABS), composed of the native ops;
// nullopt for another order, a dtype other than float32 or an empty
// tensor (the CPU's rules). The squares are summed in float32 where the
// CPU accumulates in double: elements past about 1e19 overflow to inf
// here (docs/pytorch.md, "Tolerances").
std::optional<at::Tensor> vectorNorm(const at::Tensor &self, const at::Scalar &ord,
                                     at::OptionalIntArrayRef dim, bool keepdim,
                                     std::optional<c10::ScalarType> dtype) {
  // float32 only: a composition in bf16 or f16 would round at every step.
  if (!isFloatNpu(self) || !lowerable<isa::inst::RowSum>(self, dtype) || self.numel() == 0 ||
      ord.isComplex())
    return std::nullopt;
  const double p = ord.toDouble();
  if (p == 2)
    return at::sqrt(at::sum(at::mul(self, self), dim, keepdim));
  if (p == 1)
    return at::sum(at::abs(self), dim, keepdim);
  if (p == std::numeric_limits<double>::infinity())
    return at::amax(at::abs(self), dim.value_or(at::IntArrayRef{}), keepdim);
  return std::nullopt;
}

at::Tensor linalgVectorNorm(const at::Tensor &self, const at::Scalar &ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<c10::ScalarType> dtype) {
  if (std::optional<at::Tensor> norm = vectorNorm(self, ord, dim, keepdim, dtype))
    return *norm;
  return fallbackTo<NPU_ATEN_OP(linalg_vector_norm)>(self, ord, dim, keepdim, dtype);
}

at::Tensor &linalgVectorNormOut(const at::Tensor &self, const at::Scalar &ord,
                                at::OptionalIntArrayRef dim, bool keepdim,
                                std::optional<c10::ScalarType> dtype, at::Tensor &out) {
  std::optional<at::Tensor> norm;
  if (isFloatNpu(out))
    norm = vectorNorm(self, ord, dim, keepdim, dtype);
  if (!norm)
    return fallbackTo<NPU_ATEN_OP2(linalg_vector_norm, out)>(self, ord, dim, keepdim, dtype, out);
  at::native::resize_output(out, norm->sizes());
  copyResult(out, *norm);
  return out;
}

// --- argmax / argmin ----------------------------------------------------------
//
// ARGMAX / ARGMIN per row of the tensor with dim last (a contiguous copy
// unless it already is): the first index of the row's extreme as an int64,
// floats by value (-0 == +0) and the first NaN for both, as on the CPU.
// The types the instructions take (f32, bf16, f16, i32), and int64 by a
// composition (int64Arg).
template <class Inst> bool argLowerable(const at::Tensor &self) {
  return isNpu(self) && self.numel() > 0 && self.dim() <= 64 &&
         (accepts<Inst>(self.scalar_type()) ||
          (self.scalar_type() == at::kLong && accepts<isa::inst::Max>(at::kLong) &&
           accepts<isa::inst::Eq>(at::kLong) && accepts<Inst>(at::kInt)));
}

template <class Inst>
at::Tensor argExtremum(OpCounter &counter, const at::Tensor &self, std::optional<int64_t> dim,
                       bool keepdim) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self));
  const int64_t d = dim && self.dim() > 0 ? at::maybe_wrap_dim(*dim, self.dim()) : -1;
  const at::Tensor moved = d >= 0 ? self.movedim(d, -1) : self.reshape({-1});
  const int64_t cols = moved.dim() == 0 ? 1 : moved.size(-1), rows = moved.numel() / cols;
  const at::Tensor rowsOf = contiguousOnDevice(moved);
  const std::bitset<64> dims =
      d >= 0 ? std::bitset<64>().set(d) : reductionDims(self, std::nullopt);
  at::Tensor indices = emptyNpu(reducedShape(self, dims, keepdim), at::kLong);
  Inst inst;
  inst.dst = addressOf(indices);
  inst.src = addressOf(rowsOf);
  inst.rows = u32(rows, "rows");
  inst.cols = u32(cols, "columns");
  inst.dtype = *isaType(self.scalar_type());
  emit(inst);
  return indices;
}

// argmax/argmin of int64, which ARGMAX does not take: the extremum of
// each row (a MAX or MIN tree), the mask of the elements equal to it (EQ,
// the extremum broadcast), and ARGMAX of that mask as int32 0/1 (CAST):
// its first 1 is the first extremum. Exact.
template <class Inst>
at::Tensor int64Arg(OpCounter &counter, const at::Tensor &self, std::optional<int64_t> dim,
                    bool keepdim) {
  constexpr bool kMin = std::is_same_v<Inst, isa::inst::Argmin>;
  const at::Tensor extrema = integerExtremaKeepdim(self, dim, kMin);
  at::Tensor mask = emptyNpu(self.sizes(), at::kInt);
  copyInto(mask, at::eq(self, extrema));
  return argExtremum<isa::inst::Argmax>(counter, mask, dim, keepdim);
}

template <bool kMin> struct ArgKernels {
  using Inst = std::conditional_t<kMin, isa::inst::Argmin, isa::inst::Argmax>;
  using Functional = std::conditional_t<kMin, NPU_ATEN_OP(argmin), NPU_ATEN_OP(argmax)>;
  using Out = std::conditional_t<kMin, NPU_ATEN_OP2(argmin, out), NPU_ATEN_OP2(argmax, out)>;
  static at::Tensor compute(OpCounter &counter, const at::Tensor &self, std::optional<int64_t> dim,
                            bool keepdim) {
    if (self.scalar_type() == at::kLong && !accepts<Inst>(at::kLong))
      return int64Arg<Inst>(counter, self, dim, keepdim);
    return argExtremum<Inst>(counter, self, dim, keepdim);
  }
  static at::Tensor functional(const at::Tensor &self, std::optional<int64_t> dim, bool keepdim) {
    static OpCounter counter(baseName<Functional>());
    if (!argLowerable<Inst>(self))
      return fallbackTo<Functional>(self, dim, keepdim);
    return compute(counter, self, dim, keepdim);
  }
  static at::Tensor &outForm(const at::Tensor &self, std::optional<int64_t> dim, bool keepdim,
                             at::Tensor &out) {
    static OpCounter counter(operatorName<Out>());
    if (!argLowerable<Inst>(self) || !isNpu(out) || out.scalar_type() != at::kLong)
      return fallbackTo<Out>(self, dim, keepdim, out);
    const at::Tensor result = compute(counter, self, dim, keepdim);
    at::native::resize_output(out, result.sizes());
    copyResult(out, result);
    return out;
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<Functional>(), functional);
    m.impl(operatorName<Out>(), outForm);
  }
};

// --- any / all / count_nonzero ----------------------------------------------
//
// Over the truth of self's elements (nonzero, NaN included): one ANY or
// ALL over the mask (after a CAST to bool for another dtype). An empty
// reduction is false for any, true for all.

bool logicalLowerable(const at::Tensor &self) {
  return isNpu(self) && self.dim() <= 64 && accepts<isa::inst::Cast>(self.scalar_type(), "stype");
}

at::Tensor logicalReduce(const at::Tensor &self, const std::bitset<64> &dims, bool keepdim,
                         bool all) {
  const at::Tensor mask = truthOf(self);
  return all ? maskReduce<isa::inst::All>(mask, dims, keepdim, at::kBool, true)
             : maskReduce<isa::inst::Any>(mask, dims, keepdim, at::kBool, false);
}

// The kernels of any and all: functional forms over all dims, one dim or a
// list, and their out= forms (a bool out only; PyTorch also allows uint8).
template <bool kAll> struct LogicalKernels {
  static OpCounter &counter() {
    static OpCounter c(kAll ? "all" : "any");
    return c;
  }
  static at::Tensor compute(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim) {
    OpScope scope(counter());
    if (logOps())
      scope.describe(shapeString(self));
    return logicalReduce(self, reductionDims(self, dim), keepdim, kAll);
  }
  template <class Op, class... Args>
  static at::Tensor functionalOr(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                                 Args &&...args) {
    if (!logicalLowerable(self))
      return fallbackTo<Op>(self, std::forward<Args>(args)...);
    return compute(self, dim, keepdim);
  }
  template <class Op, class... Args>
  static at::Tensor &outOr(at::Tensor &out, const at::Tensor &self, at::OptionalIntArrayRef dim,
                           bool keepdim, Args &&...args) {
    if (!logicalLowerable(self) || !isNpu(out) || out.scalar_type() != at::kBool)
      return fallbackTo<Op>(self, std::forward<Args>(args)..., out);
    const at::Tensor result = compute(self, dim, keepdim);
    at::native::resize_output(out, result.sizes());
    copyResult(out, result);
    return out;
  }
};

template <bool kAll, class AllOp, class DimOp, class DimsOp, class AllOutOp, class DimOutOp,
          class DimsOutOp>
void registerLogical(torch::Library &m) {
  using K = LogicalKernels<kAll>;
  m.impl(operatorName<AllOp>(), [](const at::Tensor &self) {
    return K::template functionalOr<AllOp>(self, std::nullopt, false);
  });
  m.impl(operatorName<DimOp>(), [](const at::Tensor &self, int64_t dim, bool keepdim) {
    return K::template functionalOr<DimOp>(self, at::IntArrayRef(dim), keepdim, dim, keepdim);
  });
  m.impl(operatorName<DimsOp>(),
         [](const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim) {
           return K::template functionalOr<DimsOp>(self, dim, keepdim, dim, keepdim);
         });
  m.impl(operatorName<AllOutOp>(), [](const at::Tensor &self, at::Tensor &out) -> at::Tensor & {
    return K::template outOr<AllOutOp>(out, self, std::nullopt, false);
  });
  m.impl(operatorName<DimOutOp>(),
         [](const at::Tensor &self, int64_t dim, bool keepdim, at::Tensor &out) -> at::Tensor & {
           return K::template outOr<DimOutOp>(out, self, at::IntArrayRef(dim), keepdim, dim,
                                              keepdim);
         });
  m.impl(operatorName<DimsOutOp>(),
         [](const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
            at::Tensor &out) -> at::Tensor & {
           return K::template outOr<DimsOutOp>(out, self, dim, keepdim, dim, keepdim);
         });
}

// count_nonzero over a list of dims (empty: all of them), int64.
at::Tensor countNonzero(const at::Tensor &self, at::IntArrayRef dim) {
  static OpCounter counter("count_nonzero");
  if (!logicalLowerable(self))
    return fallbackTo<NPU_ATEN_OP2(count_nonzero, dim_IntList)>(self, dim);
  return countTrue(counter, truthOf(self), dim, false, std::nullopt);
}

at::Tensor &countNonzeroOut(const at::Tensor &self, at::IntArrayRef dim, at::Tensor &out) {
  static OpCounter counter("count_nonzero.out");
  if (!logicalLowerable(self) || !isNpu(out) || out.scalar_type() != at::kLong)
    return fallbackTo<NPU_ATEN_OP2(count_nonzero, dim_IntList_out)>(self, dim, out);
  const at::Tensor result = countTrue(counter, truthOf(self), dim, false, std::nullopt);
  at::native::resize_output(out, result.sizes());
  // The CPU's out form is the functional one copied into out, whose copy_
  // refuses an out with internal overlap.
  checkInternalOverlap(out);
  copyResult(out, result);
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  ArgKernels<false>::registerIn(m);
  ArgKernels<true>::registerIn(m);
  registerLogical<false, NPU_ATEN_OP(any), NPU_ATEN_OP2(any, dim), NPU_ATEN_OP2(any, dims),
                  NPU_ATEN_OP2(any, all_out), NPU_ATEN_OP2(any, out), NPU_ATEN_OP2(any, dims_out)>(
      m);
  registerLogical<true, NPU_ATEN_OP(all), NPU_ATEN_OP2(all, dim), NPU_ATEN_OP2(all, dims),
                  NPU_ATEN_OP2(all, all_out), NPU_ATEN_OP2(all, out), NPU_ATEN_OP2(all, dims_out)>(
      m);
  m.impl("count_nonzero.dim_IntList", countNonzero);
  m.impl("count_nonzero.dim_IntList_out", countNonzeroOut);
  m.impl("sum.dim_IntList", sumDim);
  m.impl("sum", sumAll);
  m.impl("sum.IntList_out", sumOut);
  m.impl("mean.dim", meanDim);
  m.impl("mean.out", meanOut);
  m.impl("amax", amax);
  m.impl("amax.out", amaxOut);
  m.impl("linalg_vector_norm", linalgVectorNorm);
  m.impl("linalg_vector_norm.out", linalgVectorNormOut);
}

} // namespace npu::bridge
