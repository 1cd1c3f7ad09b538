// What torch.optim's Adam and AdamW run on npu parameters.
//
// fused=True calls _fused_adamw_ / _fused_adam_ once per step with every
// parameter: one ADAMW packet per parameter, its hyper-parameter block
// (lr, betas, eps, weight decay and the bias corrections of the parameter's
// step, computed on the host in double precision as the CPU kernel does)
// uploaded with the others in one copy. Adam's L2 weight decay (g + wd*p)
// is an ADD before an ADAMW with no decay; maximize negates the gradient
// first. amsgrad (a running maximum of the second moments, which ADAMW does
// not keep) and AMP gradient scaling fall back to the CPU, with the reason.
//
// The default (foreach) implementation runs per-tensor ops; those that are
// not elementwise instructions already are lowered here: lerp (the first
// moment), addcmul (the second) and addcdiv (the update).
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_fused_adam_ops.h>
#include <ATen/ops/_fused_adamw_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/lerp_ops.h>
#include <torch/library.h>

#include <array>
#include <cmath>
#include <vector>

namespace npu::bridge {

namespace {

// --- Fused Adam / AdamW ----------------------------------------------------------

struct AdamArguments {
  at::TensorList params, grads, expAvgs, expAvgSqs, maxExpAvgSqs, steps;
  double lr, beta1, beta2, weightDecay, eps;
  bool amsgrad, maximize, decoupled; // decoupled: AdamW, else Adam's L2 decay
  bool scaled;                       // grad_scale or found_inf given
};

// The value of a one-element tensor on any device.
double scalarValue(const at::Tensor &t, const char *what) {
  TORCH_CHECK(t.numel() == 1, "fused Adam: ", what, " must have one element, got shape ",
              t.sizes());
  return (isNpu(t) ? download(t) : t).item<double>();
}

// The values of the one-element tensors `steps`: those that are float32 on
// the NPU are collected on the device and read with one wait.
std::vector<double> stepValues(at::TensorList steps) {
  std::vector<double> values(steps.size());
  std::vector<size_t> collected;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (isFloatNpu(steps[i]) && steps[i].numel() == 1)
      collected.push_back(i);
    else
      values[i] = scalarValue(steps[i], "state_step");
  }
  if (collected.empty())
    return values;
  const at::Tensor staged = emptyNpu({static_cast<int64_t>(collected.size())}, at::kFloat);
  for (size_t k = 0; k < collected.size(); ++k)
    emitGather(addressOf(staged) + 4 * k, steps[collected[k]]);
  const at::Tensor host = download(staged);
  for (size_t k = 0; k < collected.size(); ++k)
    values[collected[k]] = host[static_cast<int64_t>(k)].item<double>();
  return values;
}

// Why the call cannot become ADAMW packets, or "" when it can.
std::string unsupported(const AdamArguments &a) {
  if (a.amsgrad)
    return "amsgrad=True keeps a running maximum of the second moments, which the ADAMW "
           "instruction has no operand for";
  if (a.scaled)
    return "grad_scale/found_inf (AMP gradient scaling) are not lowered";
  for (size_t i = 0; i < a.params.size(); ++i) {
    const at::Tensor &p = a.params[i];
    for (const at::Tensor &t : {p, a.grads[i], a.expAvgs[i], a.expAvgSqs[i]})
      if (!isFloatNpu(t))
        return "ADAMW needs float32 npu tensors, got " +
               std::string(c10::toString(t.scalar_type())) + " on " + t.device().str();
    if (!p.is_contiguous() || !a.expAvgs[i].is_contiguous() || !a.expAvgSqs[i].is_contiguous())
      return "ADAMW updates contiguous parameters and moments in place, got a parameter of "
             "shape " +
             shapeString(p) + " with other strides";
    if (mayOverlap(p, a.expAvgs[i]) || mayOverlap(p, a.expAvgSqs[i]) ||
        mayOverlap(a.expAvgs[i], a.expAvgSqs[i]))
      return "ADAMW updates a parameter and its moments in place and needs them in separate "
             "memory";
  }
  return "";
}

void checkAdamLists(const AdamArguments &a) {
  const size_t n = a.params.size();
  TORCH_CHECK(a.grads.size() == n && a.expAvgs.size() == n && a.expAvgSqs.size() == n &&
                  a.steps.size() == n && (a.maxExpAvgSqs.empty() || a.maxExpAvgSqs.size() == n),
              "fused Adam: the tensor lists must have the same length (", n, " params, ",
              a.grads.size(), " grads, ", a.expAvgs.size(), " exp_avgs, ", a.expAvgSqs.size(),
              " exp_avg_sqs, ", a.steps.size(), " state_steps)");
  for (size_t i = 0; i < n; ++i)
    for (const at::Tensor &t : {a.grads[i], a.expAvgs[i], a.expAvgSqs[i]})
      TORCH_CHECK(t.sizes() == a.params[i].sizes(), "fused Adam: parameter ", i, " has shape ",
                  a.params[i].sizes(), " but its gradient or state has shape ", t.sizes());
}

// The 8-float hyper-parameter block of one parameter's step.
std::array<float, 8> hyperBlock(const AdamArguments &a, double step) {
  const double biasCorrection1 = 1.0 - std::pow(a.beta1, step);
  const double biasCorrection2 = 1.0 - std::pow(a.beta2, step);
  return {static_cast<float>(a.lr),
          static_cast<float>(a.beta1),
          static_cast<float>(a.beta2),
          static_cast<float>(a.eps),
          static_cast<float>(a.decoupled ? a.weightDecay : 0.0),
          static_cast<float>(biasCorrection1),
          static_cast<float>(std::sqrt(biasCorrection2)),
          0.0f};
}

void emitAdamSteps(const AdamArguments &a) {
  const int64_t count = static_cast<int64_t>(a.params.size());
  // Every parameter's block in one buffer (32-byte aligned: the allocator
  // aligns blocks to 64 bytes and each block is 32 bytes).
  at::Tensor hostBlocks = at::empty({count, 8}, at::kFloat);
  const std::vector<double> steps = stepValues(a.steps);
  for (int64_t i = 0; i < count; ++i) {
    const std::array<float, 8> block = hyperBlock(a, steps[i]);
    std::copy(block.begin(), block.end(), hostBlocks[i].data_ptr<float>());
  }
  at::Tensor blocks = emptyNpu({count, 8}, at::kFloat);
  upload(blocks, hostBlocks);
  for (int64_t i = 0; i < count; ++i) {
    const at::Tensor &param = a.params[i];
    const int64_t n = param.numel();
    if (n == 0)
      continue;
    at::Tensor grad = a.grads[i];
    const bool shared = mayOverlap(grad, param) || mayOverlap(grad, a.expAvgs[i]) ||
                        mayOverlap(grad, a.expAvgSqs[i]);
    if (a.maximize || (!a.decoupled && a.weightDecay != 0.0) || !grad.is_contiguous() || shared) {
      // The gradient ADAMW sees, in a private buffer (ADAMW reads it while
      // it writes the parameter and moments): -g with maximize, plus wd * p
      // for Adam's L2 decay (the CPU kernel's order).
      at::Tensor effective = emptyNpuLike(param);
      emitGather(addressOf(effective), grad);
      if (a.maximize)
        emitUnary<isa::inst::Neg>(addressOf(effective), addressOf(effective), n);
      if (!a.decoupled && a.weightDecay != 0.0)
        emitBinary<isa::inst::Add>(effective, effective, param, static_cast<float>(a.weightDecay));
      grad = effective;
    }
    isa::inst::Adamw step;
    step.param = addressOf(param);
    step.grad = addressOf(grad);
    step.exp_avg = addressOf(a.expAvgs[i]);
    step.exp_avg_sq = addressOf(a.expAvgSqs[i]);
    step.hyper = addressOf(blocks) + 32 * i;
    step.n = u32(n, "parameter size");
    emit(step);
  }
}

// Runs one fused Adam(W) step natively, or returns false (after saying why)
// when it must fall back.
bool adamStep(OpCounter &counter, const char *op, const AdamArguments &a) {
  checkAdamLists(a);
  if (const std::string reason = unsupported(a); !reason.empty()) {
    explainFallback(op, reason);
    return false;
  }
  OpScope scope(counter);
  if (logOps())
    scope.describe(std::to_string(a.params.size()) + " parameters");
  emitAdamSteps(a);
  return true;
}

AdamArguments adamArguments(at::TensorList self, at::TensorList grads, at::TensorList expAvgs,
                            at::TensorList expAvgSqs, at::TensorList maxExpAvgSqs,
                            at::TensorList steps, double lr, double beta1, double beta2,
                            double weightDecay, double eps, bool amsgrad, bool maximize,
                            bool decoupled, const std::optional<at::Tensor> &gradScale,
                            const std::optional<at::Tensor> &foundInf) {
  const bool scaled = (gradScale && gradScale->defined()) || (foundInf && foundInf->defined());
  return {self,  grads,       expAvgs, expAvgSqs, maxExpAvgSqs, steps,     lr,    beta1,
          beta2, weightDecay, eps,     amsgrad,   maximize,     decoupled, scaled};
}

#define NPU_FUSED_ADAM(function, op, decoupled)                                                    \
  void function(at::TensorList self, at::TensorList grads, at::TensorList expAvgs,                 \
                at::TensorList expAvgSqs, at::TensorList maxExpAvgSqs, at::TensorList steps,       \
                double lr, double beta1, double beta2, double weightDecay, double eps,             \
                bool amsgrad, bool maximize, const std::optional<at::Tensor> &gradScale,           \
                const std::optional<at::Tensor> &foundInf) {                                       \
    static OpCounter counter(#op);                                                                 \
    if (!adamStep(counter, "aten::" #op,                                                           \
                  adamArguments(self, grads, expAvgs, expAvgSqs, maxExpAvgSqs, steps, lr, beta1,   \
                                beta2, weightDecay, eps, amsgrad, maximize, decoupled, gradScale,  \
                                foundInf)))                                                        \
      fallbackTo<NPU_ATEN_OP(op)>(self, grads, expAvgs, expAvgSqs, maxExpAvgSqs, steps, lr, beta1, \
                                  beta2, weightDecay, eps, amsgrad, maximize, gradScale,           \
                                  foundInf);                                                       \
  }                                                                                                \
  void function##TensorLr(                                                                         \
      at::TensorList self, at::TensorList grads, at::TensorList expAvgs, at::TensorList expAvgSqs, \
      at::TensorList maxExpAvgSqs, at::TensorList steps, const at::Tensor &lr, double beta1,       \
      double beta2, double weightDecay, double eps, bool amsgrad, bool maximize,                   \
      const std::optional<at::Tensor> &gradScale, const std::optional<at::Tensor> &foundInf) {     \
    static OpCounter counter(#op ".tensor_lr");                                                    \
    if (!adamStep(counter, "aten::" #op ".tensor_lr",                                              \
                  adamArguments(self, grads, expAvgs, expAvgSqs, maxExpAvgSqs, steps,              \
                                scalarValue(lr, "lr"), beta1, beta2, weightDecay, eps, amsgrad,    \
                                maximize, decoupled, gradScale, foundInf)))                        \
      fallbackTo<NPU_ATEN_OP2(op, tensor_lr)>(self, grads, expAvgs, expAvgSqs, maxExpAvgSqs,       \
                                              steps, lr, beta1, beta2, weightDecay, eps, amsgrad,  \
                                              maximize, gradScale, foundInf);                      \
  }

NPU_FUSED_ADAM(fusedAdamw, _fused_adamw_, true)
NPU_FUSED_ADAM(fusedAdam, _fused_adam_, false)

// --- lerp, addcmul, addcdiv ------------------------------------------------------------

bool lowerable(std::initializer_list<at::Tensor> tensors) {
  for (const at::Tensor &t : tensors)
    if (!isFloatNpu(t))
      return false;
  return true;
}

std::vector<int64_t> broadcastShape(std::initializer_list<at::Tensor> tensors) {
  at::DimVector shape;
  for (const at::Tensor &t : tensors)
    shape = at::infer_size_dimvector(shape, t.sizes());
  return {shape.begin(), shape.end()};
}

// dst = self + weight * (end - self), or end - (1 - weight) * (end - self)
// for |weight| >= 0.5, the CPU kernel's two forms (which fuse the multiply
// and add; here the product is rounded first).
void emitLerp(const at::Tensor &dst, const at::Tensor &self, const at::Tensor &end, float weight) {
  const at::Tensor difference = emptyNpuLike(dst);
  emitBinary<isa::inst::Sub>(difference, end, self);
  if (std::abs(weight) < 0.5f)
    emitBinary<isa::inst::Add>(dst, self, difference, weight);
  else
    emitBinary<isa::inst::Sub>(dst, end, difference, 1.0f - weight);
}

// dst = self + (value * t1) op t2 with the binary instruction Inst (MUL for
// addcmul, DIV for addcdiv), the CPU kernel's order.
template <class Inst>
void emitAddc(const at::Tensor &dst, const at::Tensor &self, const at::Tensor &t1,
              const at::Tensor &t2, float value) {
  const at::Tensor term = materialize(t1, dst.sizes());
  if (value != 1.0f)
    emitScalar<isa::inst::Muls>(addressOf(term), addressOf(term), value, term.numel());
  emitBinary<Inst>(term, term, t2);
  emitBinary<isa::inst::Add>(dst, term, self);
}

template <class Emit>
void pointwiseStore(OpCounter &counter, const at::Tensor &out,
                    std::initializer_list<at::Tensor> inputs, Emit &&emitInto) {
  OpScope scope(counter);
  if (logOps()) {
    std::string text;
    for (const at::Tensor &t : inputs)
      text += (text.empty() ? "" : ", ") + shapeString(t);
    scope.describe(text);
  }
  if (out.numel() > 0)
    storeResult(out, emitInto);
}

void checkInplaceShape(const at::Tensor &self, const std::vector<int64_t> &shape) {
  TORCH_CHECK(self.sizes() == c10::IntArrayRef(shape), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", c10::IntArrayRef(shape));
}

at::Tensor lerpScalar(const at::Tensor &self, const at::Tensor &end, const at::Scalar &weight) {
  static OpCounter counter("lerp");
  if (!lowerable({self, end}) || weight.isComplex())
    return fallbackTo<NPU_ATEN_OP2(lerp, Scalar)>(self, end, weight);
  const float w = weight.toFloat();
  at::Tensor out = emptyNpu(broadcastShape({self, end}), at::kFloat);
  pointwiseStore(counter, out, {self, end},
                 [&](const at::Tensor &dst) { emitLerp(dst, self, end, w); });
  return out;
}

at::Tensor &lerpScalarInplace(at::Tensor &self, const at::Tensor &end, const at::Scalar &weight) {
  static OpCounter counter("lerp_");
  if (!lowerable({self, end}) || weight.isComplex())
    return fallbackTo<NPU_ATEN_OP2(lerp_, Scalar)>(self, end, weight);
  checkInplaceShape(self, broadcastShape({self, end}));
  checkPointwiseWrite(self, {end});
  const float w = weight.toFloat();
  pointwiseStore(counter, self, {self, end},
                 [&](const at::Tensor &dst) { emitLerp(dst, self, end, w); });
  return self;
}

at::Tensor &lerpScalarOut(const at::Tensor &self, const at::Tensor &end, const at::Scalar &weight,
                          at::Tensor &out) {
  static OpCounter counter("lerp.Scalar_out");
  if (!lowerable({self, end, out}) || weight.isComplex())
    return fallbackTo<NPU_ATEN_OP2(lerp, Scalar_out)>(self, end, weight, out);
  at::native::resize_output(out, broadcastShape({self, end}));
  checkPointwiseWrite(out, {self, end});
  const float w = weight.toFloat();
  pointwiseStore(counter, out, {self, end},
                 [&](const at::Tensor &dst) { emitLerp(dst, self, end, w); });
  return out;
}

// The kernels of addcmul / addcdiv (name, name_, name.out) with the binary
// instruction Inst: float32 npu tensors; anything else falls back.
template <class Inst, class FunctionalOp, class InplaceOp, class OutOp> struct AddcKernels {
  static at::Tensor functional(const at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2,
                               const at::Scalar &value) {
    static OpCounter counter(baseName<FunctionalOp>());
    if (!lowerable({self, t1, t2}) || value.isComplex())
      return fallbackTo<FunctionalOp>(self, t1, t2, value);
    const float v = value.toFloat();
    at::Tensor out = emptyNpu(broadcastShape({self, t1, t2}), at::kFloat);
    pointwiseStore(counter, out, {self, t1, t2},
                   [&](const at::Tensor &dst) { emitAddc<Inst>(dst, self, t1, t2, v); });
    return out;
  }
  static at::Tensor &inplace(at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2,
                             const at::Scalar &value) {
    static OpCounter counter(baseName<InplaceOp>());
    if (!lowerable({self, t1, t2}) || value.isComplex())
      return fallbackTo<InplaceOp>(self, t1, t2, value);
    checkInplaceShape(self, broadcastShape({self, t1, t2}));
    checkPointwiseWrite(self, {t1, t2});
    const float v = value.toFloat();
    pointwiseStore(counter, self, {self, t1, t2},
                   [&](const at::Tensor &dst) { emitAddc<Inst>(dst, self, t1, t2, v); });
    return self;
  }
  static at::Tensor &outForm(const at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2,
                             const at::Scalar &value, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!lowerable({self, t1, t2, out}) || value.isComplex())
      return fallbackTo<OutOp>(self, t1, t2, value, out);
    at::native::resize_output(out, broadcastShape({self, t1, t2}));
    checkPointwiseWrite(out, {self, t1, t2});
    const float v = value.toFloat();
    pointwiseStore(counter, out, {self, t1, t2},
                   [&](const at::Tensor &dst) { emitAddc<Inst>(dst, self, t1, t2, v); });
    return out;
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<InplaceOp>(), inplace);
    m.impl(operatorName<OutOp>(), outForm);
  }
};

} // namespace

// The registration line of an addc op: the ATen op and its binary instruction.
#define NPU_ADDC(name, Inst)                                                                       \
  AddcKernels<Inst, NPU_ATEN_OP(name), NPU_ATEN_OP(name##_), NPU_ATEN_OP2(name, out)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adamw_", fusedAdamw);
  m.impl("_fused_adamw_.tensor_lr", fusedAdamwTensorLr);
  m.impl("_fused_adam_", fusedAdam);
  m.impl("_fused_adam_.tensor_lr", fusedAdamTensorLr);
  m.impl("lerp.Scalar", lerpScalar);
  m.impl("lerp_.Scalar", lerpScalarInplace);
  m.impl("lerp.Scalar_out", lerpScalarOut);
  NPU_ADDC(addcmul, isa::inst::Mul);
  NPU_ADDC(addcdiv, isa::inst::Div);
}

} // namespace npu::bridge
