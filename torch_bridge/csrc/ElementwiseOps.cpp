// Elementwise ops: binary with broadcasting (ADD/SUB/MUL/DIV/MAX/MIN and
// their row, column and scalar broadcast modes), scalar forms (ADDS ...
// RDIVS) and the unary family, each in functional, in-place and out form.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/cos_ops.h>
#include <ATen/ops/div_ops.h>
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

namespace npu::bridge {

namespace {

// Broadcast patterns of b that need one packet per outer slice are used up
// to this many slices; beyond it b is materialised at full size.
constexpr int64_t kMaxSlices = 64;

template <class Inst>
void emitBinaryPacket(uint64_t dst, uint64_t a, uint64_t b, int64_t rows, int64_t cols,
                      isa::Broadcast bcast, float alpha) {
  Inst inst;
  inst.dst = dst;
  inst.a = a;
  inst.b = b;
  inst.rows = u32(rows, "rows");
  inst.cols = u32(cols, "columns");
  inst.bcast = bcast;
  if constexpr (requires { inst.alpha; })
    inst.alpha = alpha;
  emit(inst);
}

using BinaryEmitter = void (*)(uint64_t, uint64_t, uint64_t, int64_t, int64_t, isa::Broadcast,
                               float);

BinaryEmitter binaryEmitter(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return &emitBinaryPacket<isa::inst::Add>;
  case BinaryOp::Sub: return &emitBinaryPacket<isa::inst::Sub>;
  case BinaryOp::Mul: return &emitBinaryPacket<isa::inst::Mul>;
  case BinaryOp::Div: return &emitBinaryPacket<isa::inst::Div>;
  case BinaryOp::Max: return &emitBinaryPacket<isa::inst::Max>;
  case BinaryOp::Min: return &emitBinaryPacket<isa::inst::Min>;
  }
  TORCH_CHECK(false, "unknown binary op");
}

bool commutes(BinaryOp op, float alpha) {
  return op == BinaryOp::Mul || op == BinaryOp::Max || op == BinaryOp::Min ||
         (op == BinaryOp::Add && alpha == 1.0f);
}

// One run of out dims over which b either varies (Full) or is broadcast.
struct Segment {
  bool broadcast;
  int64_t size;
};

} // namespace

void emitBinary(BinaryOp op, const at::Tensor &dst, const at::Tensor &aIn, const at::Tensor &bIn,
                float alpha) {
  const c10::IntArrayRef shape = dst.sizes();
  const int64_t n = dst.numel();
  if (n == 0)
    return;
  at::Tensor a = aIn, b = bIn;
  const bool aFull = a.sizes() == shape && a.is_contiguous();
  if (!aFull && commutes(op, alpha) && b.sizes() == shape && b.is_contiguous())
    std::swap(a, b);
  if (a.sizes() != shape || !a.is_contiguous() ||
      (mayOverlap(a, dst) && addressOf(a) != addressOf(dst)))
    a = materialize(a, shape);
  // b in compact form (its own elements contiguous), broadcast by strides 0.
  // b may alias dst only exactly and unbroadcast; otherwise it gets a private copy.
  if (!b.is_contiguous() ||
      (mayOverlap(b, dst) && !(addressOf(b) == addressOf(dst) && b.sizes() == shape))) {
    at::Tensor copy = emptyNpuLike(b);
    emitGather(addressOf(copy), b);
    b = copy;
  }
  const at::Tensor bx = b.expand(shape);
  c10::SmallVector<Segment, 6> segments;
  for (int64_t d = 0; d < dst.dim(); ++d) {
    if (shape[d] == 1)
      continue;
    const bool broadcast = bx.stride(d) == 0;
    if (!segments.empty() && segments.back().broadcast == broadcast)
      segments.back().size *= shape[d];
    else
      segments.push_back({broadcast, shape[d]});
  }
  const BinaryEmitter emitter = binaryEmitter(op);
  const uint64_t dstAddr = addressOf(dst), aAddr = addressOf(a), bAddr = addressOf(b);
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
    emitter(dstAddr, aAddr, bAddr, 1, n, B::none, alpha);
  } else if (pattern({true})) {
    emitter(dstAddr, aAddr, bAddr, 1, n, B::scalar, alpha);
  } else if (pattern({true, false})) {
    emitter(dstAddr, aAddr, bAddr, segments[0].size, segments[1].size, B::row, alpha);
  } else if (pattern({false, true})) {
    emitter(dstAddr, aAddr, bAddr, segments[0].size, segments[1].size, B::col, alpha);
  } else if (pattern({false, true, false}) && segments[0].size <= kMaxSlices) {
    // Per outer slice: b's slice is a row reused by every middle index.
    const int64_t slice = segments[1].size * segments[2].size;
    for (int64_t s = 0; s < segments[0].size; ++s)
      emitter(dstAddr + 4 * s * slice, aAddr + 4 * s * slice, bAddr + 4 * s * segments[2].size,
              segments[1].size, segments[2].size, B::row, alpha);
  } else if (pattern({true, false, true}) && segments[0].size <= kMaxSlices) {
    // Per outer slice: the same column vector b.
    const int64_t slice = segments[1].size * segments[2].size;
    for (int64_t s = 0; s < segments[0].size; ++s)
      emitter(dstAddr + 4 * s * slice, aAddr + 4 * s * slice, bAddr, segments[1].size,
              segments[2].size, B::col, alpha);
  } else {
    const at::Tensor full = materialize(b, shape);
    emitter(dstAddr, aAddr, addressOf(full), 1, n, B::none, alpha);
  }
}

namespace {

template <class Inst> void emitScalarPacket(uint64_t dst, uint64_t a, float s, int64_t n) {
  Inst inst;
  inst.dst = dst;
  inst.a = a;
  inst.s = s;
  inst.n = u32(n, "element count");
  emit(inst);
}

template <class Inst> void emitUnaryPacket(uint64_t dst, uint64_t src, int64_t n) {
  Inst inst;
  inst.dst = dst;
  inst.src = src;
  inst.n = u32(n, "element count");
  emit(inst);
}

} // namespace

void emitScalar(ScalarOp op, uint64_t dst, uint64_t a, float s, int64_t n) {
  if (n == 0)
    return;
  switch (op) {
  case ScalarOp::Add: return emitScalarPacket<isa::inst::Adds>(dst, a, s, n);
  case ScalarOp::Sub: return emitScalarPacket<isa::inst::Subs>(dst, a, s, n);
  case ScalarOp::Mul: return emitScalarPacket<isa::inst::Muls>(dst, a, s, n);
  case ScalarOp::Div: return emitScalarPacket<isa::inst::Divs>(dst, a, s, n);
  case ScalarOp::Max: return emitScalarPacket<isa::inst::Maxs>(dst, a, s, n);
  case ScalarOp::Min: return emitScalarPacket<isa::inst::Mins>(dst, a, s, n);
  case ScalarOp::ReverseSub: return emitScalarPacket<isa::inst::Rsubs>(dst, a, s, n);
  case ScalarOp::ReverseDiv: return emitScalarPacket<isa::inst::Rdivs>(dst, a, s, n);
  }
}

void emitUnary(UnaryOp op, uint64_t dst, uint64_t src, int64_t n) {
  if (n == 0)
    return;
  switch (op) {
  case UnaryOp::Neg: return emitUnaryPacket<isa::inst::Neg>(dst, src, n);
  case UnaryOp::Exp: return emitUnaryPacket<isa::inst::Exp>(dst, src, n);
  case UnaryOp::Log: return emitUnaryPacket<isa::inst::Log>(dst, src, n);
  case UnaryOp::Rsqrt: return emitUnaryPacket<isa::inst::Rsqrt>(dst, src, n);
  case UnaryOp::Sqrt: return emitUnaryPacket<isa::inst::Sqrt>(dst, src, n);
  case UnaryOp::Reciprocal: return emitUnaryPacket<isa::inst::Recip>(dst, src, n);
  case UnaryOp::Abs: return emitUnaryPacket<isa::inst::Abs>(dst, src, n);
  case UnaryOp::Relu: return emitUnaryPacket<isa::inst::Relu>(dst, src, n);
  case UnaryOp::Sigmoid: return emitUnaryPacket<isa::inst::Sigmoid>(dst, src, n);
  case UnaryOp::Tanh: return emitUnaryPacket<isa::inst::Tanh>(dst, src, n);
  case UnaryOp::Silu: return emitUnaryPacket<isa::inst::Silu>(dst, src, n);
  case UnaryOp::Gelu: return emitUnaryPacket<isa::inst::Gelu>(dst, src, n);
  case UnaryOp::Sin: return emitUnaryPacket<isa::inst::Sin>(dst, src, n);
  case UnaryOp::Cos: return emitUnaryPacket<isa::inst::Cos>(dst, src, n);
  }
}

namespace {

// --- Binary ops --------------------------------------------------------------

// An operand the binary lowering takes: a float32 npu tensor or a CPU scalar.
bool lowerable(const at::Tensor &t) {
  return isFloatNpu(t) || (isCpuScalar(t) && !c10::isComplexType(t.scalar_type()));
}

bool lowerable(const at::Tensor &a, const at::Tensor &b) {
  return lowerable(a) && lowerable(b) && (isFloatNpu(a) || isFloatNpu(b));
}

bool lowerableOut(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b) {
  return isFloatNpu(out) && lowerable(a, b);
}

ScalarOp scalarForm(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return ScalarOp::Add;
  case BinaryOp::Sub: return ScalarOp::Sub;
  case BinaryOp::Mul: return ScalarOp::Mul;
  case BinaryOp::Div: return ScalarOp::Div;
  case BinaryOp::Max: return ScalarOp::Max;
  case BinaryOp::Min: return ScalarOp::Min;
  }
  TORCH_CHECK(false, "unknown binary op");
}

// dst (contiguous, the result shape) = a op alpha*b, where one side may be a
// CPU scalar.
void binaryInto(BinaryOp op, const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b,
                float alpha) {
  const int64_t n = dst.numel();
  if (isCpuScalar(b)) {
    const double s = b.item<double>();
    const bool scaled = op == BinaryOp::Add || op == BinaryOp::Sub;
    emitScalar(scalarForm(op), addressOf(dst), addressOf(denseOperand(a, dst)),
               static_cast<float>(scaled ? alpha * s : s), n);
  } else if (isCpuScalar(a)) {
    const float s = static_cast<float>(a.item<double>());
    at::Tensor other = denseOperand(b, dst);
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && alpha != 1.0f) {
      emitScalar(ScalarOp::Mul, addressOf(dst), addressOf(other), alpha, n);
      other = dst;
    }
    switch (op) {
    case BinaryOp::Sub:
      emitScalar(ScalarOp::ReverseSub, addressOf(dst), addressOf(other), s, n);
      break;
    case BinaryOp::Div:
      emitScalar(ScalarOp::ReverseDiv, addressOf(dst), addressOf(other), s, n);
      break;
    default: emitScalar(scalarForm(op), addressOf(dst), addressOf(other), s, n);
    }
  } else {
    emitBinary(op, dst, a, b, alpha);
  }
}

std::string binaryDescription(const at::Tensor &a, const at::Tensor &b) {
  auto shape = [](const at::Tensor &t) {
    return isNpu(t) ? shapeString(t) : std::string("scalar");
  };
  return shape(a) + ", " + shape(b);
}

// The result of `out = a op alpha*b` written into out (any layout).
void binaryStore(OpCounter &counter, BinaryOp op, const at::Tensor &out, const at::Tensor &a,
                 const at::Tensor &b, float alpha) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(binaryDescription(a, b));
  storeResult(out, [&](const at::Tensor &dst) { binaryInto(op, dst, a, b, alpha); });
}

at::Tensor binaryFunctional(OpCounter &counter, BinaryOp op, const at::Tensor &a,
                            const at::Tensor &b, float alpha) {
  const at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), at::kFloat);
  binaryStore(counter, op, out, a, b, alpha);
  return out;
}

at::Tensor &binaryInplace(OpCounter &counter, BinaryOp op, at::Tensor &self, const at::Tensor &b,
                          float alpha) {
  TORCH_CHECK(at::infer_size(self.sizes(), b.sizes()) == self.sizes(), "output with shape ",
              self.sizes(), " doesn't match the broadcast shape ",
              at::infer_size(self.sizes(), b.sizes()));
  checkPointwiseWrite(self, {b});
  binaryStore(counter, op, self, self, b, alpha);
  return self;
}

at::Tensor &binaryOut(OpCounter &counter, BinaryOp op, const at::Tensor &a, const at::Tensor &b,
                      float alpha, at::Tensor &out) {
  at::native::resize_output(out, at::infer_size(a.sizes(), b.sizes()));
  checkPointwiseWrite(out, {a, b});
  binaryStore(counter, op, out, a, b, alpha);
  return out;
}

float alphaOf(const at::Scalar &alpha) {
  return static_cast<float>(alpha.toDouble());
}

#define NPU_BINARY_WITH_ALPHA(name, kind)                                                          \
  at::Tensor name##Tensor(const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha) {     \
    static OpCounter counter(#name);                                                               \
    if (!lowerable(a, b))                                                                          \
      return fallbackTo<NPU_ATEN_OP2(name, Tensor)>(a, b, alpha);                                  \
    return binaryFunctional(counter, BinaryOp::kind, a, b, alphaOf(alpha));                        \
  }                                                                                                \
  at::Tensor &name##Inplace(at::Tensor &self, const at::Tensor &b, const at::Scalar &alpha) {      \
    static OpCounter counter(#name "_");                                                           \
    if (!isFloatNpu(self) || !lowerable(self, b))                                                  \
      return fallbackTo<NPU_ATEN_OP2(name##_, Tensor)>(self, b, alpha);                            \
    return binaryInplace(counter, BinaryOp::kind, self, b, alphaOf(alpha));                        \
  }                                                                                                \
  at::Tensor &name##Out(const at::Tensor &a, const at::Tensor &b, const at::Scalar &alpha,         \
                        at::Tensor &out) {                                                         \
    static OpCounter counter(#name ".out");                                                        \
    if (!lowerableOut(out, a, b))                                                                  \
      return fallbackTo<NPU_ATEN_OP2(name, out)>(a, b, alpha, out);                                \
    return binaryOut(counter, BinaryOp::kind, a, b, alphaOf(alpha), out);                          \
  }

#define NPU_BINARY(name, kind)                                                                     \
  at::Tensor name##Tensor(const at::Tensor &a, const at::Tensor &b) {                              \
    static OpCounter counter(#name);                                                               \
    if (!lowerable(a, b))                                                                          \
      return fallbackTo<NPU_ATEN_OP2(name, Tensor)>(a, b);                                         \
    return binaryFunctional(counter, BinaryOp::kind, a, b, 1.0f);                                  \
  }                                                                                                \
  at::Tensor &name##Inplace(at::Tensor &self, const at::Tensor &b) {                               \
    static OpCounter counter(#name "_");                                                           \
    if (!isFloatNpu(self) || !lowerable(self, b))                                                  \
      return fallbackTo<NPU_ATEN_OP2(name##_, Tensor)>(self, b);                                   \
    return binaryInplace(counter, BinaryOp::kind, self, b, 1.0f);                                  \
  }                                                                                                \
  at::Tensor &name##Out(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {               \
    static OpCounter counter(#name ".out");                                                        \
    if (!lowerableOut(out, a, b))                                                                  \
      return fallbackTo<NPU_ATEN_OP2(name, out)>(a, b, out);                                       \
    return binaryOut(counter, BinaryOp::kind, a, b, 1.0f, out);                                    \
  }

NPU_BINARY_WITH_ALPHA(add, Add)
NPU_BINARY_WITH_ALPHA(sub, Sub)
NPU_BINARY(mul, Mul)
NPU_BINARY(div, Div)

at::Tensor rsubTensor(const at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha) {
  static OpCounter counter("rsub");
  if (!lowerable(self, other))
    return fallbackTo<NPU_ATEN_OP2(rsub, Tensor)>(self, other, alpha);
  return binaryFunctional(counter, BinaryOp::Sub, other, self, alphaOf(alpha));
}

#define NPU_MINMAX(name, kind)                                                                     \
  at::Tensor name##Functional(const at::Tensor &a, const at::Tensor &b) {                          \
    static OpCounter counter(#name);                                                               \
    if (!isFloatNpu(a) || !isFloatNpu(b))                                                          \
      return fallbackTo<NPU_ATEN_OP(name)>(a, b);                                                  \
    return binaryFunctional(counter, BinaryOp::kind, a, b, 1.0f);                                  \
  }                                                                                                \
  at::Tensor &name##Out(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {               \
    static OpCounter counter(#name ".out");                                                        \
    if (!isFloatNpu(a) || !isFloatNpu(b) || !isFloatNpu(out))                                      \
      return fallbackTo<NPU_ATEN_OP2(name, out)>(a, b, out);                                       \
    return binaryOut(counter, BinaryOp::kind, a, b, 1.0f, out);                                    \
  }

NPU_MINMAX(maximum, Max)
NPU_MINMAX(minimum, Min)

// --- Unary ops ---------------------------------------------------------------

void checkPointwiseOut(const at::Tensor &out, const at::Tensor &self) {
  checkPointwiseWrite(out, {self});
}

void checkCopiedOut(const at::Tensor &out, const at::Tensor & /*self*/) {
  checkInternalOverlap(out);
}

// out <- op(self) for a float32 npu self and out of self's shape.
void unaryStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &self,
                auto &&emitInto) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self));
  const at::Tensor src = contiguousOnDevice(self);
  const bool direct =
      out.is_contiguous() && (!mayOverlap(out, src) || addressOf(out) == addressOf(src));
  const at::Tensor dst = direct ? out : emptyNpuLike(out);
  emitInto(addressOf(dst), addressOf(src), self.numel());
  if (!direct)
    storeInto(out, addressOf(dst));
}

// checkOut is what the out= form checks: checkPointwiseWrite for the ops
// that are TensorIterator kernels on the CPU, checkInternalOverlap for those
// whose out= form PyTorch generates (the functional op, then a copy into out).
#define NPU_UNARY(name, kind, checkOut)                                                            \
  at::Tensor name##Functional(const at::Tensor &self) {                                            \
    static OpCounter counter(#name);                                                               \
    if (!isFloatNpu(self))                                                                         \
      return fallbackTo<NPU_ATEN_OP(name)>(self);                                                  \
    at::Tensor out = emptyNpuLike(self);                                                           \
    unaryStore(counter, out, self,                                                                 \
               [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::kind, d, s, n); });      \
    return out;                                                                                    \
  }                                                                                                \
  at::Tensor &name##Inplace(at::Tensor &self) {                                                    \
    static OpCounter counter(#name "_");                                                           \
    if (!isFloatNpu(self))                                                                         \
      return fallbackTo<NPU_ATEN_OP(name##_)>(self);                                               \
    checkInternalOverlap(self);                                                                    \
    unaryStore(counter, self, self,                                                                \
               [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::kind, d, s, n); });      \
    return self;                                                                                   \
  }                                                                                                \
  at::Tensor &name##Out(const at::Tensor &self, at::Tensor &out) {                                 \
    static OpCounter counter(#name ".out");                                                        \
    if (!isFloatNpu(self) || !isFloatNpu(out))                                                     \
      return fallbackTo<NPU_ATEN_OP2(name, out)>(self, out);                                       \
    at::native::resize_output(out, self.sizes());                                                  \
    checkOut(out, self);                                                                           \
    unaryStore(counter, out, self,                                                                 \
               [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::kind, d, s, n); });      \
    return out;                                                                                    \
  }

NPU_UNARY(neg, Neg, checkPointwiseOut)
NPU_UNARY(exp, Exp, checkPointwiseOut)
NPU_UNARY(log, Log, checkPointwiseOut)
NPU_UNARY(rsqrt, Rsqrt, checkPointwiseOut)
NPU_UNARY(sqrt, Sqrt, checkPointwiseOut)
NPU_UNARY(reciprocal, Reciprocal, checkPointwiseOut)
NPU_UNARY(abs, Abs, checkPointwiseOut)
NPU_UNARY(relu, Relu, checkCopiedOut)
NPU_UNARY(sigmoid, Sigmoid, checkPointwiseOut)
NPU_UNARY(tanh, Tanh, checkPointwiseOut)
NPU_UNARY(silu, Silu, checkPointwiseOut)
NPU_UNARY(sin, Sin, checkPointwiseOut)
NPU_UNARY(cos, Cos, checkPointwiseOut)

// GELU: the tanh approximation is an instruction; the exact (erf) form is not.
at::Tensor geluFunctional(const at::Tensor &self, c10::string_view approximate) {
  static OpCounter counter("gelu");
  if (!isFloatNpu(self) || approximate != "tanh")
    return fallbackTo<NPU_ATEN_OP(gelu)>(self, approximate);
  at::Tensor out = emptyNpuLike(self);
  unaryStore(counter, out, self,
             [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::Gelu, d, s, n); });
  return out;
}

at::Tensor &geluInplace(at::Tensor &self, c10::string_view approximate) {
  static OpCounter counter("gelu_");
  if (!isFloatNpu(self) || approximate != "tanh")
    return fallbackTo<NPU_ATEN_OP(gelu_)>(self, approximate);
  checkInternalOverlap(self);
  unaryStore(counter, self, self,
             [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::Gelu, d, s, n); });
  return self;
}

at::Tensor &geluOut(const at::Tensor &self, c10::string_view approximate, at::Tensor &out) {
  static OpCounter counter("gelu.out");
  if (!isFloatNpu(self) || !isFloatNpu(out) || approximate != "tanh")
    return fallbackTo<NPU_ATEN_OP2(gelu, out)>(self, approximate, out);
  at::native::resize_output(out, self.sizes());
  checkPointwiseWrite(out, {self});
  unaryStore(counter, out, self,
             [](uint64_t d, uint64_t s, int64_t n) { emitUnary(UnaryOp::Gelu, d, s, n); });
  return out;
}

// x^p: exponents with an exact or cheaper form use it, as the CPU kernel
// does (x*x for 2, sqrt for 0.5, ...); the rest are POWS.
void emitPow(uint64_t dst, uint64_t src, int64_t n, double p) {
  if (p == 2.0) {
    isa::inst::Mul square;
    square.dst = dst;
    square.a = src;
    square.b = src;
    square.rows = 1;
    square.cols = u32(n, "element count");
    emit(square);
  } else if (p == 1.0) {
    emitScalar(ScalarOp::Mul, dst, src, 1.0f, n);
  } else if (p == 0.5) {
    emitUnary(UnaryOp::Sqrt, dst, src, n);
  } else if (p == -0.5) {
    emitUnary(UnaryOp::Rsqrt, dst, src, n);
  } else if (p == -1.0) {
    emitUnary(UnaryOp::Reciprocal, dst, src, n);
  } else {
    isa::inst::Pows pows;
    pows.dst = dst;
    pows.src = src;
    pows.n = u32(n, "element count");
    pows.p = static_cast<float>(p);
    emit(pows);
  }
}

bool powLowerable(const at::Tensor &self, const at::Scalar &exponent) {
  return isFloatNpu(self) && !exponent.isComplex();
}

at::Tensor powFunctional(const at::Tensor &self, const at::Scalar &exponent) {
  static OpCounter counter("pow");
  if (!powLowerable(self, exponent))
    return fallbackTo<NPU_ATEN_OP2(pow, Tensor_Scalar)>(self, exponent);
  const double p = exponent.toDouble();
  at::Tensor out = emptyNpuLike(self);
  unaryStore(counter, out, self, [p](uint64_t d, uint64_t s, int64_t n) { emitPow(d, s, n, p); });
  return out;
}

at::Tensor &powInplace(at::Tensor &self, const at::Scalar &exponent) {
  static OpCounter counter("pow_");
  if (!powLowerable(self, exponent))
    return fallbackTo<NPU_ATEN_OP2(pow_, Scalar)>(self, exponent);
  checkInternalOverlap(self);
  const double p = exponent.toDouble();
  unaryStore(counter, self, self, [p](uint64_t d, uint64_t s, int64_t n) { emitPow(d, s, n, p); });
  return self;
}

at::Tensor &powOut(const at::Tensor &self, const at::Scalar &exponent, at::Tensor &out) {
  static OpCounter counter("pow.out");
  if (!powLowerable(self, exponent) || !isFloatNpu(out))
    return fallbackTo<NPU_ATEN_OP2(pow, Tensor_Scalar_out)>(self, exponent, out);
  const double p = exponent.toDouble();
  at::native::resize_output(out, self.sizes());
  checkPointwiseWrite(out, {self});
  unaryStore(counter, out, self, [p](uint64_t d, uint64_t s, int64_t n) { emitPow(d, s, n, p); });
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
#define NPU_REGISTER_BINARY(name)                                                                  \
  m.impl(#name ".Tensor", name##Tensor);                                                           \
  m.impl(#name "_.Tensor", name##Inplace);                                                         \
  m.impl(#name ".out", name##Out);
  NPU_REGISTER_BINARY(add)
  NPU_REGISTER_BINARY(sub)
  NPU_REGISTER_BINARY(mul)
  NPU_REGISTER_BINARY(div)
  m.impl("rsub.Tensor", rsubTensor);
  m.impl("maximum", maximumFunctional);
  m.impl("maximum.out", maximumOut);
  m.impl("minimum", minimumFunctional);
  m.impl("minimum.out", minimumOut);
#define NPU_REGISTER_UNARY(name)                                                                   \
  m.impl(#name, name##Functional);                                                                 \
  m.impl(#name "_", name##Inplace);                                                                \
  m.impl(#name ".out", name##Out);
  NPU_REGISTER_UNARY(neg)
  NPU_REGISTER_UNARY(exp)
  NPU_REGISTER_UNARY(log)
  NPU_REGISTER_UNARY(rsqrt)
  NPU_REGISTER_UNARY(sqrt)
  NPU_REGISTER_UNARY(reciprocal)
  NPU_REGISTER_UNARY(abs)
  NPU_REGISTER_UNARY(relu)
  NPU_REGISTER_UNARY(sigmoid)
  NPU_REGISTER_UNARY(tanh)
  NPU_REGISTER_UNARY(silu)
  NPU_REGISTER_UNARY(sin)
  NPU_REGISTER_UNARY(cos)
  NPU_REGISTER_UNARY(gelu)
  m.impl("pow.Tensor_Scalar", powFunctional);
  m.impl("pow_.Scalar", powInplace);
  m.impl("pow.Tensor_Scalar_out", powOut);
}

} // namespace npu::bridge
