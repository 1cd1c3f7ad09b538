// Elementwise ops: binary with broadcasting (ADD/SUB/MUL/DIV/MAX/MIN and
// their row, column and scalar broadcast modes), scalar forms (ADDS ...
// RDIVS) and the unary family, each in functional, in-place and out form.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/bitwise_and.h>
#include <ATen/ops/clamp_max_ops.h>
#include <ATen/ops/clamp_min_ops.h>
#include <ATen/ops/clamp_ops.h>
#include <ATen/ops/cos_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/erf_ops.h>
#include <ATen/ops/exp_ops.h>
#include <ATen/ops/gelu_ops.h>
#include <ATen/ops/log_ops.h>
#include <ATen/ops/maximum_ops.h>
#include <ATen/ops/minimum_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/pow_ops.h>
#include <ATen/ops/reciprocal_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/rsqrt_ops.h>
#include <ATen/ops/rsub_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/silu_ops.h>
#include <ATen/ops/sin_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <torch/library.h>

#include <cmath>

namespace npu::bridge {

namespace {

// Broadcast patterns of b that need one packet per outer slice are used up
// to this many slices; beyond it b is materialised at full size.
constexpr int64_t kMaxSlices = 64;

// One run of out dims over which b either varies (Full) or is broadcast.
struct Segment {
  bool broadcast;
  int64_t size;
};

} // namespace

void emitBinaryWith(BinaryPacketEmitter emitPacket, bool operandsSwap, const at::Tensor &dst,
                    const at::Tensor &aIn, const at::Tensor &bIn, float alpha) {
  const c10::IntArrayRef shape = dst.sizes();
  const int64_t n = dst.numel();
  if (n == 0)
    return;
  if (!wordAligned(dst)) {
    emitAligned(dst, [&](const at::Tensor &target) {
      emitBinaryWith(emitPacket, operandsSwap, target, aIn, bIn, alpha);
    });
    return;
  }
  at::Tensor a = aIn, b = bIn;
  const bool aFull = a.sizes() == shape && a.is_contiguous() && wordAligned(a);
  if (!aFull && operandsSwap && b.sizes() == shape && b.is_contiguous() && wordAligned(b))
    std::swap(a, b);
  if (a.sizes() != shape || !a.is_contiguous() || !wordAligned(a) ||
      (mayOverlap(a, dst) && addressOf(a) != addressOf(dst)))
    a = materialize(a, shape);
  // b in compact form (its own elements contiguous), broadcast by strides 0.
  // b may alias dst only exactly and unbroadcast; otherwise it gets a private copy.
  if (!b.is_contiguous() || !wordAligned(b) ||
      (mayOverlap(b, dst) && !(addressOf(b) == addressOf(dst) && b.sizes() == shape))) {
    at::Tensor copy = emptyNpuLike(b);
    emitGather(addressOf(copy), b);
    b = copy;
  }
  // b's strides broadcast to shape (computed, not a view: a view per op
  // costs more host time than the rest of the op).
  const at::DimVector bStrides =
      at::inferExpandGeometry_dimvector(b.sizes(), b.strides(), shape).strides;
  c10::SmallVector<Segment, 6> segments;
  for (int64_t d = 0; d < dst.dim(); ++d) {
    if (shape[d] == 1)
      continue;
    const bool broadcast = bStrides[d] == 0;
    if (!segments.empty() && segments.back().broadcast == broadcast)
      segments.back().size *= shape[d];
    else
      segments.push_back({broadcast, shape[d]});
  }
  const uint64_t dstAddr = addressOf(dst), aAddr = addressOf(a), bAddr = addressOf(b);
  // The operands' type; dst's may differ (a compare writes b8).
  const uint64_t size = a.element_size(), dstSize = dst.element_size();
  const isa::DType type = *isaType(a.scalar_type());
  using B = isa::Broadcast;
  auto pattern = [&](std::initializer_list<bool> flags) {
    if (segments.size() != flags.size())
      return false;
    size_t i = 0;
    for (bool f : flags)
      if (segments[i++].broadcast != f)
        return false;
    return true;
  };
  if (segments.empty() || pattern({false})) {
    emitPacket(dstAddr, aAddr, bAddr, 1, n, B::none, alpha, type);
  } else if (pattern({true})) {
    emitPacket(dstAddr, aAddr, bAddr, 1, n, B::scalar, alpha, type);
  } else if (pattern({true, false})) {
    emitPacket(dstAddr, aAddr, bAddr, segments[0].size, segments[1].size, B::row, alpha, type);
  } else if (pattern({false, true})) {
    emitPacket(dstAddr, aAddr, bAddr, segments[0].size, segments[1].size, B::col, alpha, type);
  } else if (pattern({false, true, false}) && segments[0].size <= kMaxSlices &&
             std::min(size, dstSize) * segments[2].size % 4 == 0) {
    // Per outer slice: b's slice is a row reused by every middle index.
    const int64_t slice = segments[1].size * segments[2].size;
    for (int64_t s = 0; s < segments[0].size; ++s)
      emitPacket(dstAddr + dstSize * s * slice, aAddr + size * s * slice,
                 bAddr + size * s * segments[2].size, segments[1].size, segments[2].size, B::row,
                 alpha, type);
  } else if (pattern({true, false, true}) && segments[0].size <= kMaxSlices &&
             std::min(size, dstSize) * segments[1].size * segments[2].size % 4 == 0) {
    // Per outer slice: the same column vector b.
    const int64_t slice = segments[1].size * segments[2].size;
    for (int64_t s = 0; s < segments[0].size; ++s)
      emitPacket(dstAddr + dstSize * s * slice, aAddr + size * s * slice, bAddr, segments[1].size,
                 segments[2].size, B::col, alpha, type);
  } else {
    const at::Tensor full = materialize(b, shape);
    emitPacket(dstAddr, aAddr, addressOf(full), 1, n, B::none, alpha, type);
  }
}

bool deviceOperands(const at::Tensor &a, const at::Tensor &b) {
  auto usable = [](const at::Tensor &t) {
    return (isNpu(t) && isaType(t.scalar_type())) ||
           (isCpuScalar(t) && !c10::isComplexType(t.scalar_type()));
  };
  return usable(a) && usable(b) && (isNpu(a) || isNpu(b));
}

bool convertibleTo(c10::ScalarType type, const at::Tensor &a, const at::Tensor &b) {
  for (const at::Tensor *t : {&a, &b})
    if (isNpu(*t) && t->scalar_type() != type &&
        !(accepts<isa::inst::Cast>(t->scalar_type(), "stype") &&
          accepts<isa::inst::Cast>(type, "dtype")))
      return false;
  return true;
}

at::Tensor binaryOperand(const at::Tensor &t, c10::ScalarType type) {
  if (isCpuScalar(t))
    return type == at::kFloat ? t : deviceScalar(t.item(), type);
  if (t.scalar_type() == type)
    return t;
  at::Tensor converted = emptyNpu(t.sizes(), type);
  copyInto(converted, t);
  return converted;
}

namespace {

// --- Binary ops --------------------------------------------------------------

// dst (contiguous, the result shape, of the computing type) = a op alpha*b
// by the binary instruction Inst; a float32 op with a CPU scalar side uses
// one of Inst's scalar forms.
template <class Inst>
void binaryInto(const at::Tensor &dst, const at::Tensor &aIn, const at::Tensor &bIn, float alpha) {
  if (!wordAligned(dst)) {
    emitAligned(dst, [&](const at::Tensor &target) { binaryInto<Inst>(target, aIn, bIn, alpha); });
    return;
  }
  const c10::ScalarType type = dst.scalar_type();
  if constexpr (!kHasScalarForms<Inst>) {
    // A CPU scalar side becomes a device scalar the packet broadcasts.
    auto operand = [&](const at::Tensor &t) {
      return isCpuScalar(t) ? deviceScalar(t.item(), type) : binaryOperand(t, type);
    };
    emitBinary<Inst>(dst, operand(aIn), operand(bIn), alpha);
  } else {
    const int64_t n = dst.numel();
    // The float types keep a CPU scalar for the scalar forms' binary32 s.
    auto operand = [&](const at::Tensor &t) {
      return c10::isFloatingType(type) && isCpuScalar(t) ? t : binaryOperand(t, type);
    };
    const at::Tensor a = operand(aIn), b = operand(bIn);
    const isa::DType stored = *isaType(type);
    if (isCpuScalar(b)) {
      const double s = b.item<double>();
      emitScalar<typename ScalarForms<Inst>::Right>(
          addressOf(dst), addressOf(denseOperand(a, dst)),
          static_cast<float>(kScalesOperand<Inst> ? alpha * s : s), n, stored);
    } else if (isCpuScalar(a)) {
      const float s = static_cast<float>(a.item<double>());
      at::Tensor other = denseOperand(b, dst);
      if (kScalesOperand<Inst> && alpha != 1.0f) {
        emitScalar<isa::inst::Muls>(addressOf(dst), addressOf(other), alpha, n, stored);
        other = dst;
      }
      emitScalar<typename ScalarForms<Inst>::Left>(addressOf(dst), addressOf(other), s, n, stored);
    } else {
      emitBinary<Inst>(dst, a, b, alpha);
    }
  }
}

std::string binaryDescription(const at::Tensor &a, const at::Tensor &b) {
  auto shape = [](const at::Tensor &t) {
    return isNpu(t) ? shapeString(t) : std::string("scalar");
  };
  return shape(a) + ", " + shape(b);
}

// The result of `out = a op alpha*b` written into out (any layout).
template <class Inst>
void binaryStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &a,
                 const at::Tensor &b, float alpha) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(binaryDescription(a, b));
  storeResult(out, [&](const at::Tensor &dst) { binaryInto<Inst>(dst, a, b, alpha); });
}

template <class Inst>
at::Tensor binaryFunctional(OpCounter &counter, const at::Tensor &a, const at::Tensor &b,
                            float alpha, c10::ScalarType type) {
  const at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), type);
  binaryStore<Inst>(counter, out, a, b, alpha);
  return out;
}

template <class Inst>
at::Tensor &binaryInplace(OpCounter &counter, at::Tensor &self, const at::Tensor &b, float alpha) {
  TORCH_CHECK(at::infer_size(self.sizes(), b.sizes()) == self.sizes(), "output with shape ",
              self.sizes(), " doesn't match the broadcast shape ",
              at::infer_size(self.sizes(), b.sizes()));
  checkPointwiseWrite(self, {b});
  binaryStore<Inst>(counter, self, self, b, alpha);
  return self;
}

template <class Inst>
at::Tensor &binaryOut(OpCounter &counter, const at::Tensor &a, const at::Tensor &b, float alpha,
                      at::Tensor &out) {
  at::native::resize_output(out, at::infer_size(a.sizes(), b.sizes()));
  checkPointwiseWrite(out, {a, b});
  binaryStore<Inst>(counter, out, a, b, alpha);
  return out;
}

float alphaOf() {
  return 1.0f;
}

float alphaOf(const at::Scalar &alpha) {
  return static_cast<float>(alpha.toDouble());
}

// The kernels of a binary ATen op `name` (name.Tensor, name_.Tensor,
// name.out; with the trailing `alpha` argument when Alpha is at::Scalar)
// computed by the binary instruction Inst in a type it accepts (binaryType);
// anything else falls back. In-place and out= kernels compute in the type
// of the tensor they write, as PyTorch casts the result into it.
template <class Inst, class FunctionalOp, class InplaceOp, class OutOp, class... Alpha>
struct BinaryKernels {
  static at::Tensor functional(const at::Tensor &a, const at::Tensor &b, const Alpha &...alpha) {
    static OpCounter counter(baseName<FunctionalOp>());
    const float scale = alphaOf(alpha...);
    // bool * bool is a logical and (bool's own kernel, LogicalOps.cpp).
    if (std::is_same_v<Inst, isa::inst::Mul> && isNpu(a) && isNpu(b) &&
        a.scalar_type() == at::kBool && b.scalar_type() == at::kBool)
      return at::bitwise_and(a, b);
    const std::optional<c10::ScalarType> type = binaryType<Inst>(a, b, scale);
    if (!type)
      return fallbackTo<FunctionalOp>(a, b, alpha...);
    return binaryFunctional<Inst>(counter, a, b, scale, *type);
  }
  static at::Tensor &inplace(at::Tensor &self, const at::Tensor &b, const Alpha &...alpha) {
    static OpCounter counter(baseName<InplaceOp>());
    const float scale = alphaOf(alpha...);
    if (!isNpu(self) || binaryType<Inst>(self, b, scale) != self.scalar_type())
      return fallbackTo<InplaceOp>(self, b, alpha...);
    return binaryInplace<Inst>(counter, self, b, scale);
  }
  static at::Tensor &outForm(const at::Tensor &a, const at::Tensor &b, const Alpha &...alpha,
                             at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    const float scale = alphaOf(alpha...);
    if (!isNpu(out) || binaryType<Inst>(a, b, scale) != out.scalar_type())
      return fallbackTo<OutOp>(a, b, alpha..., out);
    return binaryOut<Inst>(counter, a, b, scale, out);
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<InplaceOp>(), inplace);
    m.impl(operatorName<OutOp>(), outForm);
    recordInstructionOps<Inst, FunctionalOp, InplaceOp, OutOp>();
  }
};

// The kernels of a binary ATen op `name` (name, name.out) of two npu
// tensors, computed by the binary instruction Inst in a type it accepts;
// anything else falls back.
template <class Inst, class FunctionalOp, class OutOp> struct TensorBinaryKernels {
  static std::optional<c10::ScalarType> type(const at::Tensor &a, const at::Tensor &b) {
    return isNpu(a) && isNpu(b) ? binaryType<Inst>(a, b) : std::nullopt;
  }
  static at::Tensor functional(const at::Tensor &a, const at::Tensor &b) {
    static OpCounter counter(baseName<FunctionalOp>());
    const std::optional<c10::ScalarType> computed = type(a, b);
    if (!computed)
      return fallbackTo<FunctionalOp>(a, b);
    return binaryFunctional<Inst>(counter, a, b, 1.0f, *computed);
  }
  static at::Tensor &outForm(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!isNpu(out) || type(a, b) != out.scalar_type())
      return fallbackTo<OutOp>(a, b, out);
    return binaryOut<Inst>(counter, a, b, 1.0f, out);
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<OutOp>(), outForm);
    recordInstructionOps<Inst, FunctionalOp, OutOp>();
  }
};

// pow(Scalar, Tensor): the base as a wrapped number (PyTorch's result type
// rules), a device scalar that POW broadcasts.
at::Tensor powScalarBase(const at::Scalar &base, const at::Tensor &exponent) {
  static OpCounter counter("pow.Scalar");
  const at::Tensor a = at::native::wrapped_scalar_tensor(base);
  const std::optional<c10::ScalarType> type = binaryType<isa::inst::Pow>(a, exponent);
  if (!type)
    return fallbackTo<NPU_ATEN_OP2(pow, Scalar)>(base, exponent);
  return binaryFunctional<isa::inst::Pow>(counter, a, exponent, 1.0f, *type);
}

at::Tensor &powScalarBaseOut(const at::Scalar &base, const at::Tensor &exponent, at::Tensor &out) {
  static OpCounter counter("pow.Scalar_out");
  const at::Tensor a = at::native::wrapped_scalar_tensor(base);
  if (!isNpu(out) || binaryType<isa::inst::Pow>(a, exponent) != out.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(pow, Scalar_out)>(base, exponent, out);
  return binaryOut<isa::inst::Pow>(counter, a, exponent, 1.0f, out);
}

at::Tensor rsubTensor(const at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha) {
  static OpCounter counter("rsub");
  const std::optional<c10::ScalarType> type =
      binaryType<isa::inst::Sub>(other, self, alphaOf(alpha));
  if (!type)
    return fallbackTo<NPU_ATEN_OP2(rsub, Tensor)>(self, other, alpha);
  return binaryFunctional<isa::inst::Sub>(counter, other, self, alphaOf(alpha), *type);
}

// --- Unary ops ---------------------------------------------------------------

// What an out= kernel checks of out: checkPointwiseWrite for the ops that
// are TensorIterator kernels on the CPU, checkInternalOverlap for those
// whose out= form PyTorch generates (the functional op, then a copy into out).
using OutCheck = void (*)(const at::Tensor &out, const at::Tensor &self);

void checkPointwiseOut(const at::Tensor &out, const at::Tensor &self) {
  checkPointwiseWrite(out, {self});
}

void checkCopiedOut(const at::Tensor &out, const at::Tensor & /*self*/) {
  checkInternalOverlap(out);
}

// out <- op(self) for an npu self and out of self's shape and type, where
// emitInto(dst, src, n, type) computes op over n > 0 contiguous elements (an
// instruction's element count is at least 1: an empty self emits nothing).
void unaryStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &self,
                auto &&emitInto) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self));
  if (self.numel() == 0)
    return;
  at::Tensor src = contiguousOnDevice(self);
  if (!wordAligned(src)) {
    src = emptyNpuLike(self);
    emitGather(addressOf(src), self);
  }
  const bool direct = out.is_contiguous() && wordAligned(out) &&
                      (!mayOverlap(out, src) || addressOf(out) == addressOf(src));
  const at::Tensor dst = direct ? out : emptyNpuLike(out);
  emitInto(addressOf(dst), addressOf(src), self.numel(), *isaType(self.scalar_type()));
  if (!direct)
    storeInto(out, addressOf(dst));
}

at::Tensor unaryFunctional(OpCounter &counter, const at::Tensor &self, auto &&emitInto) {
  at::Tensor out = emptyNpuLike(self);
  unaryStore(counter, out, self, emitInto);
  return out;
}

at::Tensor &unaryInplace(OpCounter &counter, at::Tensor &self, auto &&emitInto) {
  checkInternalOverlap(self);
  unaryStore(counter, self, self, emitInto);
  return self;
}

at::Tensor &unaryOut(OpCounter &counter, const at::Tensor &self, at::Tensor &out, OutCheck checkOut,
                     auto &&emitInto) {
  at::native::resize_output(out, self.sizes());
  checkOut(out, self);
  unaryStore(counter, out, self, emitInto);
  return out;
}

// The kernels of a unary ATen op `name` (name, name_, name.out) computed by
// the unary instruction Inst on the types it accepts (the float types, and
// for NEG the integers); anything else falls back.
template <class Inst, OutCheck checkOut, class FunctionalOp, class InplaceOp, class OutOp>
struct UnaryKernels {
  static bool lowerable(const at::Tensor &self) {
    return isNpu(self) && accepts<Inst>(self.scalar_type());
  }
  static at::Tensor functional(const at::Tensor &self) {
    static OpCounter counter(baseName<FunctionalOp>());
    if (!lowerable(self))
      return fallbackTo<FunctionalOp>(self);
    return unaryFunctional(counter, self, emitUnary<Inst>);
  }
  static at::Tensor &inplace(at::Tensor &self) {
    static OpCounter counter(baseName<InplaceOp>());
    if (!lowerable(self))
      return fallbackTo<InplaceOp>(self);
    return unaryInplace(counter, self, emitUnary<Inst>);
  }
  static at::Tensor &outForm(const at::Tensor &self, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!lowerable(self) || !isNpu(out) || out.scalar_type() != self.scalar_type())
      return fallbackTo<OutOp>(self, out);
    return unaryOut(counter, self, out, checkOut, emitUnary<Inst>);
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<InplaceOp>(), inplace);
    m.impl(operatorName<OutOp>(), outForm);
    recordInstructionOps<Inst, FunctionalOp, InplaceOp, OutOp>();
  }
};

// The GELU instruction of `approximate` ("none" is the exact, erf-based
// GELU), or nullptr for a value ATen rejects: the CPU fallback reports it.
using UnaryEmitter = void (*)(uint64_t dst, uint64_t src, int64_t n, isa::DType type);
UnaryEmitter geluEmitter(c10::string_view approximate) {
  if (approximate == "none")
    return &emitUnary<isa::inst::GeluErf>;
  if (approximate == "tanh")
    return &emitUnary<isa::inst::Gelu>;
  return nullptr;
}

bool geluLowerable(const at::Tensor &self, c10::string_view approximate) {
  return isNpu(self) && geluEmitter(approximate) &&
         accepts<isa::inst::GeluErf>(self.scalar_type()) &&
         accepts<isa::inst::Gelu>(self.scalar_type());
}

at::Tensor geluFunctional(const at::Tensor &self, c10::string_view approximate) {
  static OpCounter counter("gelu");
  if (!geluLowerable(self, approximate))
    return fallbackTo<NPU_ATEN_OP(gelu)>(self, approximate);
  return unaryFunctional(counter, self, geluEmitter(approximate));
}

at::Tensor &geluInplace(at::Tensor &self, c10::string_view approximate) {
  static OpCounter counter("gelu_");
  if (!geluLowerable(self, approximate))
    return fallbackTo<NPU_ATEN_OP(gelu_)>(self, approximate);
  return unaryInplace(counter, self, geluEmitter(approximate));
}

at::Tensor &geluOut(const at::Tensor &self, c10::string_view approximate, at::Tensor &out) {
  static OpCounter counter("gelu.out");
  if (!geluLowerable(self, approximate) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(gelu, out)>(self, approximate, out);
  return unaryOut(counter, self, out, checkPointwiseOut, geluEmitter(approximate));
}

// x^p: exponents with an exact or cheaper form use it, as the CPU kernel
// does (x*x for 2, sqrt for 0.5, ...); the rest are POWS.
void emitPow(uint64_t dst, uint64_t src, int64_t n, isa::DType type, double p) {
  if (p == 2.0) {
    isa::inst::Mul square;
    square.dst = dst;
    square.a = src;
    square.b = src;
    square.rows = 1;
    square.cols = u32(n, "element count");
    square.dtype = type;
    emit(square);
  } else if (p == 1.0) {
    emitScalar<isa::inst::Muls>(dst, src, 1.0f, n, type);
  } else if (p == 0.5) {
    emitUnary<isa::inst::Sqrt>(dst, src, n, type);
  } else if (p == -0.5) {
    emitUnary<isa::inst::Rsqrt>(dst, src, n, type);
  } else if (p == -1.0) {
    emitUnary<isa::inst::Recip>(dst, src, n, type);
  } else {
    isa::inst::Pows pows;
    pows.dst = dst;
    pows.src = src;
    pows.n = u32(n, "element count");
    pows.p = static_cast<float>(p);
    pows.dtype = type;
    emit(pows);
  }
}

// The float types POWS takes; x^2 of bf16/f16 (MUL, whose tensor form
// takes f32 only) computes on binary32 copies (Widening.cpp).
bool powLowerable(const at::Tensor &self, const at::Scalar &exponent) {
  return isNpu(self) && !exponent.isComplex() && accepts<isa::inst::Pows>(self.scalar_type()) &&
         (accepts<isa::inst::Mul>(self.scalar_type()) || exponent.toDouble() != 2.0);
}

auto powEmitter(const at::Scalar &exponent) {
  return [p = exponent.toDouble()](uint64_t d, uint64_t s, int64_t n, isa::DType type) {
    emitPow(d, s, n, type, p);
  };
}

at::Tensor powFunctional(const at::Tensor &self, const at::Scalar &exponent) {
  static OpCounter counter("pow");
  if (!powLowerable(self, exponent))
    return fallbackTo<NPU_ATEN_OP2(pow, Tensor_Scalar)>(self, exponent);
  return unaryFunctional(counter, self, powEmitter(exponent));
}

at::Tensor &powInplace(at::Tensor &self, const at::Scalar &exponent) {
  static OpCounter counter("pow_");
  if (!powLowerable(self, exponent))
    return fallbackTo<NPU_ATEN_OP2(pow_, Scalar)>(self, exponent);
  return unaryInplace(counter, self, powEmitter(exponent));
}

at::Tensor &powOut(const at::Tensor &self, const at::Scalar &exponent, at::Tensor &out) {
  static OpCounter counter("pow.out");
  if (!powLowerable(self, exponent) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(pow, Tensor_Scalar_out)>(self, exponent, out);
  return unaryOut(counter, self, out, checkPointwiseOut, powEmitter(exponent));
}

// clamp with scalar bounds: CLAMP with both, MAXS or MINS with one (the
// bounds rounded to float32 as the CPU kernel does).
struct ClampBounds {
  std::optional<float> lo, hi;

  ClampBounds(const std::optional<at::Scalar> &min, const std::optional<at::Scalar> &max) {
    TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (min)
      lo = static_cast<float>(min->toDouble());
    if (max)
      hi = static_cast<float>(max->toDouble());
  }
  void operator()(uint64_t dst, uint64_t src, int64_t n, isa::DType type) const {
    if (!hi)
      return emitScalar<isa::inst::Maxs>(dst, src, *lo, n, type);
    if (!lo)
      return emitScalar<isa::inst::Mins>(dst, src, *hi, n, type);
    isa::inst::Clamp clamp;
    clamp.dst = dst;
    clamp.src = src;
    clamp.n = u32(n, "element count");
    clamp.lo = *lo;
    clamp.hi = *hi;
    clamp.dtype = type;
    emit(clamp);
  }
};

// The float types: a bf16/f16 result of binary32 bounds rounds as the
// CPU's clamp between bounds rounded to the type does (rounding is
// monotone, and x is of the type).
bool clampLowerable(const at::Tensor &self, const std::optional<at::Scalar> &min,
                    const std::optional<at::Scalar> &max) {
  const c10::ScalarType type = self.scalar_type();
  return isNpu(self) && accepts<isa::inst::Clamp>(type) && accepts<isa::inst::Maxs>(type) &&
         accepts<isa::inst::Mins>(type) && !(min && min->isComplex()) && !(max && max->isComplex());
}

at::Tensor clampFunctional(const at::Tensor &self, const std::optional<at::Scalar> &min,
                           const std::optional<at::Scalar> &max) {
  static OpCounter counter("clamp");
  if (!clampLowerable(self, min, max))
    return fallbackTo<NPU_ATEN_OP(clamp)>(self, min, max);
  return unaryFunctional(counter, self, ClampBounds(min, max));
}

at::Tensor &clampInplace(at::Tensor &self, const std::optional<at::Scalar> &min,
                         const std::optional<at::Scalar> &max) {
  static OpCounter counter("clamp_");
  if (!clampLowerable(self, min, max))
    return fallbackTo<NPU_ATEN_OP(clamp_)>(self, min, max);
  return unaryInplace(counter, self, ClampBounds(min, max));
}

at::Tensor &clampOut(const at::Tensor &self, const std::optional<at::Scalar> &min,
                     const std::optional<at::Scalar> &max, at::Tensor &out) {
  static OpCounter counter("clamp.out");
  if (!clampLowerable(self, min, max) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(clamp, out)>(self, min, max, out);
  return unaryOut(counter, self, out, checkPointwiseOut, ClampBounds(min, max));
}

// clamp_min and clamp_max: clamp with one scalar bound (MAXS, MINS).
template <bool kLower, class FunctionalOp, class InplaceOp, class OutOp> struct OneBoundKernels {
  static ClampBounds bounds(const at::Scalar &bound) {
    return kLower ? ClampBounds(bound, std::nullopt) : ClampBounds(std::nullopt, bound);
  }
  static bool lowerable(const at::Tensor &self, const at::Scalar &bound) {
    return clampLowerable(self, bound, std::nullopt);
  }
  static at::Tensor functional(const at::Tensor &self, const at::Scalar &bound) {
    static OpCounter counter(baseName<FunctionalOp>());
    if (!lowerable(self, bound))
      return fallbackTo<FunctionalOp>(self, bound);
    return unaryFunctional(counter, self, bounds(bound));
  }
  static at::Tensor &inplace(at::Tensor &self, const at::Scalar &bound) {
    static OpCounter counter(baseName<InplaceOp>());
    if (!lowerable(self, bound))
      return fallbackTo<InplaceOp>(self, bound);
    return unaryInplace(counter, self, bounds(bound));
  }
  static at::Tensor &outForm(const at::Tensor &self, const at::Scalar &bound, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!lowerable(self, bound) || !isNpu(out) || out.scalar_type() != self.scalar_type())
      return fallbackTo<OutOp>(self, bound, out);
    return unaryOut(counter, self, out, checkPointwiseOut, bounds(bound));
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<InplaceOp>(), inplace);
    m.impl(operatorName<OutOp>(), outForm);
  }
};

} // namespace

// The registration lines: each names the ATen op and the instruction that
// computes it, and registers its functional, in-place and out= kernels.
// A binary instruction's scalar forms come from its .td record (ScalarForms).
#define NPU_UNARY_WITH_OUT_CHECK(name, Inst, checkOut)                                             \
  UnaryKernels<Inst, checkOut, NPU_ATEN_OP(name), NPU_ATEN_OP(name##_),                            \
               NPU_ATEN_OP2(name, out)>::registerIn(m)
#define NPU_UNARY(name, Inst) NPU_UNARY_WITH_OUT_CHECK(name, Inst, checkPointwiseOut)
#define NPU_BINARY(name, Inst)                                                                     \
  BinaryKernels<Inst, NPU_ATEN_OP2(name, Tensor), NPU_ATEN_OP2(name##_, Tensor),                   \
                NPU_ATEN_OP2(name, out)>::registerIn(m)
#define NPU_BINARY_WITH_ALPHA(name, Inst)                                                          \
  BinaryKernels<Inst, NPU_ATEN_OP2(name, Tensor), NPU_ATEN_OP2(name##_, Tensor),                   \
                NPU_ATEN_OP2(name, out), at::Scalar>::registerIn(m)
#define NPU_BINARY_TENSORS(name, Inst)                                                             \
  TensorBinaryKernels<Inst, NPU_ATEN_OP(name), NPU_ATEN_OP2(name, out)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NPU_BINARY_WITH_ALPHA(add, isa::inst::Add);
  NPU_BINARY_WITH_ALPHA(sub, isa::inst::Sub);
  NPU_BINARY(mul, isa::inst::Mul);
  NPU_BINARY(div, isa::inst::Div);
  NPU_BINARY_TENSORS(maximum, isa::inst::Max);
  NPU_BINARY_TENSORS(minimum, isa::inst::Min);
  m.impl("rsub.Tensor", rsubTensor);

  NPU_UNARY(neg, isa::inst::Neg);
  NPU_UNARY(exp, isa::inst::Exp);
  NPU_UNARY(log, isa::inst::Log);
  NPU_UNARY(rsqrt, isa::inst::Rsqrt);
  NPU_UNARY(sqrt, isa::inst::Sqrt);
  NPU_UNARY(reciprocal, isa::inst::Recip);
  NPU_UNARY(abs, isa::inst::Abs);
  NPU_UNARY_WITH_OUT_CHECK(relu, isa::inst::Relu, checkCopiedOut);
  NPU_UNARY(sigmoid, isa::inst::Sigmoid);
  NPU_UNARY(tanh, isa::inst::Tanh);
  NPU_UNARY(silu, isa::inst::Silu);
  NPU_UNARY(sin, isa::inst::Sin);
  NPU_UNARY(cos, isa::inst::Cos);
  NPU_UNARY(erf, isa::inst::Erf);
  m.impl("gelu", geluFunctional);
  m.impl("gelu_", geluInplace);
  m.impl("gelu.out", geluOut);
  m.impl("pow.Tensor_Scalar", powFunctional);
  m.impl("pow_.Scalar", powInplace);
  m.impl("pow.Tensor_Scalar_out", powOut);
  BinaryKernels<isa::inst::Pow, NPU_ATEN_OP2(pow, Tensor_Tensor), NPU_ATEN_OP2(pow_, Tensor),
                NPU_ATEN_OP2(pow, Tensor_Tensor_out)>::registerIn(m);
  m.impl("pow.Scalar", powScalarBase);
  m.impl("pow.Scalar_out", powScalarBaseOut);
  m.impl("clamp", clampFunctional);
  m.impl("clamp_", clampInplace);
  m.impl("clamp.out", clampOut);
  OneBoundKernels<true, NPU_ATEN_OP(clamp_min), NPU_ATEN_OP(clamp_min_),
                  NPU_ATEN_OP2(clamp_min, out)>::registerIn(m);
  OneBoundKernels<false, NPU_ATEN_OP(clamp_max), NPU_ATEN_OP(clamp_max_),
                  NPU_ATEN_OP2(clamp_max, out)>::registerIn(m);
}

} // namespace npu::bridge
