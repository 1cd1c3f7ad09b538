// ADAMW, with its hyper-parameters read from the 8-float block.
#include "../arith_util.h"
#include "../context.h"
#include "../vector_ops.h"

#include <vector>

namespace npu::sim {

Work work(const isa::inst::Adamw &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Adamw &op) {
  const float *h = ctx.read<float>(op.hyper, 8).data();
  const float lr = h[0], beta1 = h[1], beta2 = h[2], eps = h[3], weightDecay = h[4],
              biasCorrection1 = h[5], biasCorrection2Sqrt = h[6];
  const float one = 1.0f;
  // Per-packet constants.
  const float decay = scalar(Program::Sub, {one, scalar(Program::Mul, {lr, weightDecay})});
  const float oneMinusBeta1 = scalar(Program::Sub, {one, beta1});
  const float oneMinusBeta2 = scalar(Program::Sub, {one, beta2});
  const float stepSize = scalar(Program::Div, {lr, biasCorrection1});

  const float *g = ctx.read<float>(op.grad, op.n).data();
  float *p = ctx.update<float>(op.param, op.n).data();
  float *m = ctx.update<float>(op.exp_avg, op.n).data();
  float *v = ctx.update<float>(op.exp_avg_sq, op.n).data();
  std::vector<float> t(op.n), u(op.n);
  // p = p * (1 - lr*wd)
  map(Program::Mul, {each(p), every(&decay)}, p, op.n);
  // m = beta1*m + (1-beta1)*g
  map(Program::Mul, {every(&beta1), each(m)}, m, op.n);
  map(Program::Mul, {every(&oneMinusBeta1), each(g)}, t.data(), op.n);
  map(Program::Add, {each(m), each(t.data())}, m, op.n);
  // v = beta2*v + ((1-beta2)*g)*g
  map(Program::Mul, {every(&beta2), each(v)}, v, op.n);
  map(Program::Mul, {every(&oneMinusBeta2), each(g)}, t.data(), op.n);
  map(Program::Mul, {each(t.data()), each(g)}, t.data(), op.n);
  map(Program::Add, {each(v), each(t.data())}, v, op.n);
  // p = p - stepSize * (m / (sqrt(v)/sqrt_bc2 + eps))
  map(Program::Sqrt, {each(v)}, t.data(), op.n);
  map(Program::Div, {each(t.data()), every(&biasCorrection2Sqrt)}, t.data(), op.n);
  map(Program::Add, {each(t.data()), every(&eps)}, t.data(), op.n);
  map(Program::Div, {each(m), each(t.data())}, u.data(), op.n);
  map(Program::Mul, {every(&stepSize), each(u.data())}, u.data(), op.n);
  map(Program::Sub, {each(p), each(u.data())}, p, op.n);
}

} // namespace npu::sim
