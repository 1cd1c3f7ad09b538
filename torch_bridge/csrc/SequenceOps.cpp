// Tensors computed from their indices: arange (IOTA), tril and triu (TRI).
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/arange_ops.h>
#include <ATen/ops/tril_ops.h>
#include <ATen/ops/triu_ops.h>
#include <torch/library.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

namespace npu::bridge {

namespace {

// IOTA's start and step are 32-bit patterns: int32 (sign-extended for
// int64) or binary32. The lowering takes what IOTA computes exactly as the
// CPU does: integer starts and steps of int32 range; float32 sequences of
// integers below 2^24 in magnitude, where binary32(i) * step + start is
// exact (the CPU computes start + i * step in double and rounds once, so a
// fractional step such as 0.1 could round differently: it falls back).
struct IotaOperands {
  uint32_t start, step;
};

std::optional<IotaOperands> iotaOperands(double start, double step, int64_t n,
                                         c10::ScalarType type) {
  auto int32 = [](double v) {
    return v == std::trunc(v) && v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
  };
  if (!int32(start) || !int32(step))
    return std::nullopt;
  if (type == at::kFloat) {
    constexpr double kExact = double(1 << 24);
    if (std::abs(start) + std::abs(step) * double(n) > kExact)
      return std::nullopt;
    return IotaOperands{std::bit_cast<uint32_t>(float(start)),
                        std::bit_cast<uint32_t>(float(step))};
  }
  return IotaOperands{uint32_t(int32_t(start)), uint32_t(int32_t(step))};
}

// The length of arange(start, end, step) as PyTorch's CPU kernel computes
// it (in double for float types, in integers for integer types), or none
// for the arguments it refuses (the fallback reports them) and lengths
// beyond IOTA's count.
std::optional<int64_t> arangeLength(double start, double end, double step) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || (step > 0 && end < start) ||
      (step < 0 && end > start))
    return std::nullopt;
  const double size = std::ceil((end - start) / step);
  if (!(size >= 0) || size > double(std::numeric_limits<uint32_t>::max()))
    return std::nullopt;
  return int64_t(size);
}

std::optional<int64_t> arangeLength(int64_t start, int64_t end, int64_t step) {
  constexpr int64_t kBound = int64_t(1) << 62; // no overflow below
  if (step == 0 || (step > 0 && end < start) || (step < 0 && end > start) ||
      std::abs(start) > kBound || std::abs(end) > kBound)
    return std::nullopt;
  const int64_t sign = step > 0 ? 1 : -1;
  const int64_t size = (end - start + step - sign) / step;
  if (size > int64_t(std::numeric_limits<uint32_t>::max()))
    return std::nullopt;
  return size;
}

at::Tensor &arangeOut(const at::Scalar &start, const at::Scalar &end, const at::Scalar &step,
                      at::Tensor &out) {
  static OpCounter counter("arange.start_out");
  const c10::ScalarType type = out.scalar_type();
  // Integer sequences with a float bound are sized by PyTorch from the
  // unconverted bounds: those stay on the CPU.
  const bool integral = c10::isIntegralType(type, /*includeBool=*/false);
  const bool integerBounds =
      !start.isFloatingPoint() && !end.isFloatingPoint() && !step.isFloatingPoint();
  std::optional<int64_t> n;
  if (integral && integerBounds)
    n = arangeLength(start.toLong(), end.toLong(), step.toLong());
  else if (!integral && !start.isComplex() && !end.isComplex() && !step.isComplex())
    n = arangeLength(start.toDouble(), end.toDouble(), step.toDouble());
  std::optional<IotaOperands> operands;
  if (n && isNpu(out) && accepts<isa::inst::Iota>(type))
    operands = iotaOperands(start.toDouble(), step.toDouble(), *n, type);
  if (!operands)
    return fallbackTo<NPU_ATEN_OP2(arange, start_out)>(start, end, step, out);
  OpScope scope(counter);
  if (logOps())
    scope.describe(std::to_string(*n) + " from " + c10::str(start) + " by " + c10::str(step));
  at::native::resize_output(out, {*n});
  checkInternalOverlap(out);
  if (*n == 0)
    return out;
  storeResult(out, [&](const at::Tensor &dst) {
    isa::inst::Iota iota;
    iota.dst = addressOf(dst);
    iota.n = u32(*n, "element count");
    iota.start = operands->start;
    iota.step = operands->step;
    iota.dtype = *isaType(type);
    emit(iota);
  });
  return out;
}

// --- tril / triu (TRI) ----------------------------------------------------------
//
// TRI keeps one triangle of a rows x cols matrix and fills the rest with
// zero; a batch of matrices is one packet per matrix (up to kMaxMatrices,
// beyond which the op falls back).
constexpr int64_t kMaxMatrices = 4096;

bool triLowerable(const at::Tensor &self) {
  return isNpu(self) && self.dim() >= 2 && accepts<isa::inst::Tri>(self.scalar_type()) &&
         self.size(-1) < (int64_t(1) << 31) && self.size(-2) < (int64_t(1) << 31) &&
         (self.numel() == 0 || self.numel() / (self.size(-1) * self.size(-2)) <= kMaxMatrices);
}

// out (contiguous, self's shape and type) = the triangle of self.
void emitTri(const at::Tensor &out, const at::Tensor &self, int64_t diagonal, bool upper) {
  if (self.numel() == 0)
    return;
  const at::Tensor src = contiguousOnDevice(self);
  const int64_t rows = self.size(-2), cols = self.size(-1);
  const int64_t bytes = rows * cols * self.element_size();
  // The diagonal clamped to where it still decides (a 32-bit operand).
  const int64_t limit = std::max(rows, cols) + 1;
  const int64_t clamped = std::clamp(diagonal, -limit, limit);
  // A matrix of a narrow type may start inside a word: it goes through an
  // aligned buffer (packets address whole words).
  const at::Tensor staging =
      bytes % 4 == 0 ? at::Tensor() : emptyNpu({rows, cols}, self.scalar_type());
  for (int64_t m = 0; m < self.numel() / (rows * cols); ++m) {
    const uint64_t from = addressOf(src) + m * bytes, to = addressOf(out) + m * bytes;
    const bool aligned = from % 4 == 0 && to % 4 == 0;
    if (!aligned)
      emitGather(addressOf(staging), src.view({-1, rows, cols})[m]);
    isa::inst::Tri tri;
    tri.dst = aligned ? to : addressOf(staging);
    tri.src = aligned ? from : addressOf(staging);
    tri.rows = u32(rows, "rows");
    tri.cols = u32(cols, "columns");
    tri.diagonal = static_cast<int32_t>(clamped);
    tri.value = 0;
    tri.upper = upper;
    tri.dtype = *isaType(self.scalar_type());
    emit(tri);
    if (!aligned)
      emitGather(to, staging);
  }
}

template <bool kUpper> struct TriKernels {
  using Functional = std::conditional_t<kUpper, NPU_ATEN_OP(triu), NPU_ATEN_OP(tril)>;
  using Inplace = std::conditional_t<kUpper, NPU_ATEN_OP(triu_), NPU_ATEN_OP(tril_)>;
  using Out = std::conditional_t<kUpper, NPU_ATEN_OP2(triu, out), NPU_ATEN_OP2(tril, out)>;

  static void store(OpCounter &counter, const at::Tensor &out, const at::Tensor &self,
                    int64_t diagonal) {
    OpScope scope(counter);
    if (logOps())
      scope.describe(shapeString(self) + " diagonal " + std::to_string(diagonal));
    // TRI reads each element before writing it: out may be self.
    if (out.is_contiguous() && (!mayOverlap(out, self) || out.is_same(self))) {
      emitTri(out, self, diagonal, kUpper);
    } else {
      const at::Tensor dense = emptyNpuLike(out);
      emitTri(dense, self, diagonal, kUpper);
      storeInto(out, addressOf(dense));
    }
  }
  static at::Tensor functional(const at::Tensor &self, int64_t diagonal) {
    static OpCounter counter(baseName<Functional>());
    if (!triLowerable(self))
      return fallbackTo<Functional>(self, diagonal);
    at::Tensor out = emptyNpuLike(self);
    store(counter, out, self, diagonal);
    return out;
  }
  static at::Tensor &inplace(at::Tensor &self, int64_t diagonal) {
    static OpCounter counter(baseName<Inplace>());
    if (!triLowerable(self))
      return fallbackTo<Inplace>(self, diagonal);
    store(counter, self, self, diagonal);
    return self;
  }
  static at::Tensor &outForm(const at::Tensor &self, int64_t diagonal, at::Tensor &out) {
    static OpCounter counter(operatorName<Out>());
    if (!triLowerable(self) || !isNpu(out) || out.scalar_type() != self.scalar_type())
      return fallbackTo<Out>(self, diagonal, out);
    at::native::resize_output(out, self.sizes());
    store(counter, out, self, diagonal);
    return out;
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<Functional>(), functional);
    m.impl(operatorName<Inplace>(), inplace);
    m.impl(operatorName<Out>(), outForm);
  }
};

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("arange.start_out", arangeOut);
  TriKernels<false>::registerIn(m);
  TriKernels<true>::registerIn(m);
}

} // namespace npu::bridge
