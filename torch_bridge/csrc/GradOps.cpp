// Gradients of the activations, which autograd calls from the backward pass:
// silu_backward (SILU_BWD), gelu_backward (GELU_ERF_BWD, exact; GELU_BWD,
// the tanh approximation), and those that the elementwise instructions
// express exactly: sigmoid_backward, tanh_backward and threshold_backward
// (relu's); clamp's (CLAMP_BWD) through clamp's autograd kernel.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/core/grad_mode.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/clamp_ops.h>
#include <ATen/ops/gelu_backward_ops.h>
#include <ATen/ops/sigmoid_backward_ops.h>
#include <ATen/ops/silu_backward_ops.h>
#include <ATen/ops/tanh_backward_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <cmath>
#include <type_traits>

namespace npu::bridge {

namespace {

// out (any layout, the broadcast shape of dy and x) = the gradient that
// emitInto(dst, dy, x) writes into a contiguous dst.
template <class Emit>
void gradStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &dy, const at::Tensor &x,
               Emit emitInto) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(dy) + ", " + shapeString(x));
  if (out.numel() > 0)
    storeResult(out, [&](const at::Tensor &dst) { emitInto(dst, dy, x); });
}

template <class Emit>
at::Tensor gradFunctional(OpCounter &counter, const at::Tensor &dy, const at::Tensor &x,
                          Emit emitInto) {
  at::Tensor out = emptyNpu(at::infer_size(dy.sizes(), x.sizes()), dy.scalar_type());
  gradStore(counter, out, dy, x, emitInto);
  return out;
}

// The .grad_input form. PyTorch's CPU kernels of these gradients are
// TensorIterator ops with its overlap checks, except threshold_backward's,
// which autograd runs in place (no checks: `checked` false).
template <class Emit>
at::Tensor &gradOut(OpCounter &counter, const at::Tensor &dy, const at::Tensor &x, at::Tensor &out,
                    Emit emitInto, bool checked = true) {
  at::native::resize_output(out, at::infer_size(dy.sizes(), x.sizes()));
  if (checked)
    checkPointwiseWrite(out, {dy, x});
  gradStore(counter, out, dy, x, emitInto);
  return out;
}

// float32 npu operands; bf16 or f16 ones of one type too where the gradient
// is the one instruction Inst that takes the type (computing in binary32,
// rounded once on store as the CPU's kernels round), not a composition,
// which would round at every step.
template <class Inst = void> bool lowerable(const at::Tensor &dy, const at::Tensor &x) {
  if (isFloatNpu(dy) && isFloatNpu(x))
    return true;
  if constexpr (std::is_void_v<Inst>) {
    return false;
  } else {
    return ofAcceptedFloatType<Inst>(dy) && isNpu(x) && x.scalar_type() == dy.scalar_type();
  }
}


// dst = dy * f'(x) by the backward instruction Inst (SILU_BWD, GELU_BWD).
template <class Inst>
void emitPointwiseGrad(const at::Tensor &dst, const at::Tensor &dy, const at::Tensor &x) {
  static_assert(kF32Operands<Inst> == 0, "the instruction has f32 operands to set");
  const at::Tensor xs = denseOperand(x, dst), dys = denseOperand(dy, dst);
  Inst inst;
  inst.dx = addressOf(dst);
  inst.x = addressOf(xs);
  inst.dy = addressOf(dys);
  inst.n = u32(dst.numel(), "element count");
  inst.dtype = *isaType(dst.scalar_type());
  emit(inst);
}

// sigmoid_backward(dy, y) = (dy * (1 - y)) * y, in the CPU kernel's order.
void emitSigmoidGrad(const at::Tensor &dst, const at::Tensor &dy, const at::Tensor &y) {
  const at::Tensor ys = denseOperand(y, dst);
  const at::Tensor oneMinusY = emptyNpuLike(dst);
  emitScalar<isa::inst::Rsubs>(addressOf(oneMinusY), addressOf(ys), 1.0f, dst.numel());
  emitBinary<isa::inst::Mul>(oneMinusY, oneMinusY, dy);
  emitBinary<isa::inst::Mul>(dst, oneMinusY, ys);
}

// threshold_backward(dy, x, t) = x <= t ? 0 : dy. With no compare
// instruction, the step function of d = x - t is built from scalar ops:
// min(max(d * 2^127, 0), 1) is 1 for every d >= 2^-126 (the least normal
// float; smaller differences are flushed to zero by the NPU's arithmetic)
// and 0 for d <= 0; dy times it is dy or 0.
void emitThresholdGrad(const at::Tensor &dst, const at::Tensor &dy, const at::Tensor &x,
                       float threshold) {
  const at::Tensor xs = denseOperand(x, dst);
  const at::Tensor step = emptyNpuLike(dst);
  const uint64_t s = addressOf(step);
  const int64_t n = dst.numel();
  emitScalar<isa::inst::Subs>(s, addressOf(xs), threshold, n);
  emitScalar<isa::inst::Muls>(s, s, std::ldexp(1.0f, 127), n);
  emitScalar<isa::inst::Maxs>(s, s, 0.0f, n);
  emitScalar<isa::inst::Mins>(s, s, 1.0f, n);
  emitBinary<isa::inst::Mul>(dst, step, dy);
}

// The kernels of a gradient op `name`(dy, x) (name, name.grad_input) that
// emitInto(dst, dy, x) computes: npu tensors of the types lowerable<Inst>
// takes (Inst: the one instruction emitInto emits, if it is one); anything
// else falls back.
using GradEmitter = void (*)(const at::Tensor &dst, const at::Tensor &dy, const at::Tensor &x);
template <GradEmitter emitInto, class FunctionalOp, class OutOp, class Inst = void>
struct GradKernels {
  static at::Tensor functional(const at::Tensor &dy, const at::Tensor &x) {
    static OpCounter counter(baseName<FunctionalOp>());
    if (!lowerable<Inst>(dy, x))
      return fallbackTo<FunctionalOp>(dy, x);
    return gradFunctional(counter, dy, x, emitInto);
  }
  static at::Tensor &outForm(const at::Tensor &dy, const at::Tensor &x, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!lowerable<Inst>(dy, x) || !sameTypeNpu(out, dy))
      return fallbackTo<OutOp>(dy, x, out);
    return gradOut(counter, dy, x, out, emitInto);
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<OutOp>(), outForm);
  }
};

// The gradient op computed by the one pointwise backward instruction Inst.
template <class Inst, class FunctionalOp, class OutOp>
struct PointwiseGradKernels : GradKernels<&emitPointwiseGrad<Inst>, FunctionalOp, OutOp, Inst> {
  static void registerIn(torch::Library &m) {
    GradKernels<&emitPointwiseGrad<Inst>, FunctionalOp, OutOp, Inst>::registerIn(m);
    recordInstructionOps<Inst, FunctionalOp, OutOp>();
  }
};

// The backward instruction of GELU with `approximate` (GELU_ERF_BWD for
// "none", the exact GELU; GELU_BWD for the tanh approximation), or nullptr
// for a value ATen rejects: the CPU fallback reports it.
GradEmitter geluGradEmitter(c10::string_view approximate) {
  if (approximate == "none")
    return &emitPointwiseGrad<isa::inst::GeluErfBwd>;
  if (approximate == "tanh")
    return &emitPointwiseGrad<isa::inst::GeluBwd>;
  return nullptr;
}

bool geluLowerable(const at::Tensor &dy, const at::Tensor &x, c10::string_view approximate) {
  return approximate == "none" ? lowerable<isa::inst::GeluErfBwd>(dy, x)
                               : lowerable<isa::inst::GeluBwd>(dy, x);
}

at::Tensor geluBackward(const at::Tensor &dy, const at::Tensor &x, c10::string_view approximate) {
  static OpCounter counter("gelu_backward");
  const GradEmitter emitter = geluGradEmitter(approximate);
  if (!geluLowerable(dy, x, approximate) || !emitter)
    return fallbackTo<NPU_ATEN_OP(gelu_backward)>(dy, x, approximate);
  return gradFunctional(counter, dy, x, emitter);
}

at::Tensor &geluBackwardOut(const at::Tensor &dy, const at::Tensor &x, c10::string_view approximate,
                            at::Tensor &out) {
  static OpCounter counter("gelu_backward.grad_input");
  const GradEmitter emitter = geluGradEmitter(approximate);
  if (!geluLowerable(dy, x, approximate) || !sameTypeNpu(out, dy) || !emitter)
    return fallbackTo<NPU_ATEN_OP2(gelu_backward, grad_input)>(dy, x, approximate, out);
  return gradOut(counter, dy, x, out, emitter);
}

bool thresholdLowerable(const at::Tensor &dy, const at::Tensor &x, const at::Scalar &threshold) {
  return lowerable(dy, x) && !threshold.isComplex();
}

at::Tensor thresholdBackward(const at::Tensor &dy, const at::Tensor &x,
                             const at::Scalar &threshold) {
  static OpCounter counter("threshold_backward");
  if (!thresholdLowerable(dy, x, threshold))
    return fallbackTo<NPU_ATEN_OP(threshold_backward)>(dy, x, threshold);
  const float t = threshold.toFloat();
  return gradFunctional(counter, dy, x,
                        [t](const at::Tensor &dst, const at::Tensor &g, const at::Tensor &in) {
                          emitThresholdGrad(dst, g, in, t);
                        });
}

at::Tensor &thresholdBackwardOut(const at::Tensor &dy, const at::Tensor &x,
                                 const at::Scalar &threshold, at::Tensor &out) {
  static OpCounter counter("threshold_backward.grad_input");
  if (!thresholdLowerable(dy, x, threshold) || !isFloatNpu(out))
    return fallbackTo<NPU_ATEN_OP2(threshold_backward, grad_input)>(dy, x, threshold, out);
  const float t = threshold.toFloat();
  return gradOut(
      counter, dy, x, out,
      [t](const at::Tensor &dst, const at::Tensor &g, const at::Tensor &in) {
        emitThresholdGrad(dst, g, in, t);
      },
      /*checked=*/false);
}

// clamp's gradient, dy where lo <= x <= hi, else 0. Autograd's formula for
// clamp is no ATen op (a where over ge, le and logical_and, which would fall
// back), so clamp's autograd kernel for npu tensors is this Function, whose
// backward is CLAMP_BWD; a bound left out is the infinity on its side. Its
// backward on operands it cannot lower is autograd's formula.
class ClampFunction : public torch::autograd::Function<ClampFunction> {
public:
  static at::Tensor forward(torch::autograd::AutogradContext *ctx, const at::Tensor &self,
                            const std::optional<at::Scalar> &min,
                            const std::optional<at::Scalar> &max) {
    ctx->save_for_backward({self});
    ctx->saved_data["min"] = min ? c10::IValue(*min) : c10::IValue();
    ctx->saved_data["max"] = max ? c10::IValue(*max) : c10::IValue();
    at::AutoDispatchBelowADInplaceOrView guard;
    return NPU_ATEN_OP(clamp)::call(self, min, max);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor self = ctx->get_saved_variables()[0];
    const at::Tensor &dy = grads[0];
    const c10::IValue min = ctx->saved_data["min"], max = ctx->saved_data["max"];
    if (!lowerable<isa::inst::ClampBwd>(dy, self) || dy.sizes() != self.sizes() ||
        (!min.isNone() && min.toScalar().isComplex()) ||
        (!max.isNone() && max.toScalar().isComplex())) {
      at::Tensor mask = at::ones_like(self, at::kBool);
      if (!min.isNone())
        mask.logical_and_(self.ge(min.toScalar()));
      if (!max.isNone())
        mask.logical_and_(self.le(max.toScalar()));
      return {at::where(mask, dy, at::zeros({}, dy.options())), at::Tensor(), at::Tensor()};
    }
    static OpCounter counter("clamp_backward");
    const float lo = min.isNone() ? -INFINITY : static_cast<float>(min.toScalar().toDouble());
    const float hi = max.isNone() ? INFINITY : static_cast<float>(max.toScalar().toDouble());
    at::Tensor dx =
        gradFunctional(counter, dy, self,
                       [lo, hi](const at::Tensor &dst, const at::Tensor &g, const at::Tensor &x) {
                         const at::Tensor xs = denseOperand(x, dst), gs = denseOperand(g, dst);
                         isa::inst::ClampBwd inst;
                         inst.dx = addressOf(dst);
                         inst.x = addressOf(xs);
                         inst.dy = addressOf(gs);
                         inst.n = u32(dst.numel(), "element count");
                         inst.lo = lo;
                         inst.hi = hi;
                         inst.dtype = *isaType(dst.scalar_type());
                         emit(inst);
                       });
    return {dx, at::Tensor(), at::Tensor()};
  }
};

at::Tensor clampAutograd(const at::Tensor &self, const std::optional<at::Scalar> &min,
                         const std::optional<at::Scalar> &max) {
  if (at::GradMode::is_enabled() && self.requires_grad())
    return ClampFunction::apply(self, min, max);
  at::AutoDispatchBelowADInplaceOrView guard;
  return NPU_ATEN_OP(clamp)::call(self, min, max);
}

} // namespace

// The registration lines: each names the ATen gradient op and what computes
// it, and registers its functional and .grad_input kernels.
#define NPU_GRAD(name, emitInto)                                                                   \
  GradKernels<emitInto, NPU_ATEN_OP(name), NPU_ATEN_OP2(name, grad_input)>::registerIn(m)
#define NPU_POINTWISE_GRAD(name, Inst)                                                             \
  PointwiseGradKernels<Inst, NPU_ATEN_OP(name), NPU_ATEN_OP2(name, grad_input)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NPU_POINTWISE_GRAD(silu_backward, isa::inst::SiluBwd);
  NPU_GRAD(sigmoid_backward, &emitSigmoidGrad);
  NPU_POINTWISE_GRAD(tanh_backward, isa::inst::TanhBwd);
  m.impl("gelu_backward", geluBackward);
  m.impl("gelu_backward.grad_input", geluBackwardOut);
  m.impl("threshold_backward", thresholdBackward);
  m.impl("threshold_backward.grad_input", thresholdBackwardOut);
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("clamp", clampAutograd);
}

} // namespace npu::bridge
