// SOFTMAX_BWD, RMSNORM_BWD, LAYERNORM_BWD and every instruction of the .td
// class PointwiseBwd. The f32 forms have fast paths here; bf16 and f16 run
// the record's recipe on the typed streams (recipe_runner.h), as the RTL
// vector engine does.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"
#include "../vector_ops.h"

#include <array>
#include <vector>

namespace npu::sim {

Work work(const isa::inst::SoftmaxBwd &op) {
  return {.elements = satMul(op.rows, op.cols)};
}

void execute(ExecContext &ctx, const isa::inst::SoftmaxBwd &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *y = ctx.read<float>(op.y, n).data();
  const float *dy = ctx.read<float>(op.dy, n).data();
  float *dx = ctx.write<float>(op.dx, n).data();
  std::vector<float> t(op.cols);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const float *yi = y + i * op.cols, *dyi = dy + i * op.cols;
    float *dxi = dx + i * op.cols;
    if (op.log) {
      // dx = dy - exp(y) * sum(dy)
      const float s = laneSum(dyi, op.cols);
      map(Program::Exp, {each(yi)}, t.data(), op.cols);
      map(Program::Mul, {each(t.data()), every(&s)}, t.data(), op.cols);
      map(Program::Sub, {each(dyi), each(t.data())}, dxi, op.cols);
    } else {
      // dx = y * (dy - sum(dy * y))
      map(Program::Mul, {each(dyi), each(yi)}, t.data(), op.cols);
      const float s = laneSum(t.data(), op.cols);
      map(Program::Sub, {each(dyi), every(&s)}, t.data(), op.cols);
      map(Program::Mul, {each(yi), each(t.data())}, dxi, op.cols);
    }
  }
}

Work work(const isa::inst::RmsnormBwd &op) {
  return {.elements = satMul(op.rows, op.cols)};
}

void execute(ExecContext &ctx, const isa::inst::RmsnormBwd &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *x = ctx.read<float>(op.x, n).data();
  const float *dy = ctx.read<float>(op.dy, n).data();
  const float *rstd = ctx.read<float>(op.rstd, op.rows).data();
  const float *weight = op.use_weight ? ctx.read<float>(op.weight, op.cols).data() : nullptr;
  float *dweight = op.write_dweight ? ctx.write<float>(op.dweight, op.cols).data() : nullptr;
  float *dx = ctx.write<float>(op.dx, n).data();
  const float inverseCols = scalar(Program::Recip, {static_cast<float>(op.cols)});
  std::vector<float> g(op.cols), t(op.cols), dw(dweight ? op.cols : 0, 0.0f);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const float *xi = x + i * op.cols, *dyi = dy + i * op.cols;
    const float r = rstd[i];
    if (dweight) {
      // dweight += (dy * x) * r, rows in increasing order from +0.
      map(Program::Mul, {each(dyi), each(xi)}, t.data(), op.cols);
      map(Program::Mul, {each(t.data()), every(&r)}, t.data(), op.cols);
      map(Program::Add, {each(dw.data()), each(t.data())}, dw.data(), op.cols);
    }
    // g = dy * weight; c = ((sum(g * x) / cols) * r) * r; dx = r * (g - x * c)
    if (weight)
      map(Program::Mul, {each(dyi), each(weight)}, g.data(), op.cols);
    else
      std::copy(dyi, dyi + op.cols, g.begin());
    map(Program::Mul, {each(g.data()), each(xi)}, t.data(), op.cols);
    float c = scalar(Program::Mul, {laneSum(t.data(), op.cols), inverseCols});
    c = scalar(Program::Mul, {scalar(Program::Mul, {c, r}), r});
    map(Program::Mul, {each(xi), every(&c)}, t.data(), op.cols);
    map(Program::Sub, {each(g.data()), each(t.data())}, t.data(), op.cols);
    map(Program::Mul, {every(&r), each(t.data())}, dx + i * op.cols, op.cols);
  }
  if (dweight)
    std::copy(dw.begin(), dw.end(), dweight);
}

Work work(const isa::inst::LayernormBwd &op) {
  return {.elements = satMul(op.rows, op.cols)};
}

void execute(ExecContext &ctx, const isa::inst::LayernormBwd &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *x = ctx.read<float>(op.x, n).data();
  const float *dy = ctx.read<float>(op.dy, n).data();
  const float *stats = ctx.read<float>(op.stats, 2 * uint64_t(op.rows)).data();
  const float *weight = op.use_weight ? ctx.read<float>(op.weight, op.cols).data() : nullptr;
  float *dweight = op.write_dweight ? ctx.write<float>(op.dweight, op.cols).data() : nullptr;
  float *dx = ctx.write<float>(op.dx, n).data();
  const float inverseCols = scalar(Program::Recip, {static_cast<float>(op.cols)});
  std::vector<float> xhat(op.cols), g(op.cols), t(op.cols), dw(dweight ? op.cols : 0, 0.0f);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const float *xi = x + i * op.cols, *dyi = dy + i * op.cols;
    const float mean = stats[2 * i], r = stats[2 * i + 1];
    if (weight)
      map(Program::Mul, {each(dyi), each(weight)}, g.data(), op.cols);
    else
      std::copy(dyi, dyi + op.cols, g.begin());
    const float a = scalar(Program::Mul, {laneSum(g.data(), op.cols), inverseCols});
    map(Program::Sub, {each(xi), every(&mean)}, xhat.data(), op.cols);
    map(Program::Mul, {each(xhat.data()), every(&r)}, xhat.data(), op.cols);
    if (dweight) {
      // dweight += dy * xhat, rows in increasing order from +0.
      map(Program::Mul, {each(dyi), each(xhat.data())}, t.data(), op.cols);
      map(Program::Add, {each(dw.data()), each(t.data())}, dw.data(), op.cols);
    }
    map(Program::Mul, {each(g.data()), each(xhat.data())}, t.data(), op.cols);
    const float b = scalar(Program::Mul, {laneSum(t.data(), op.cols), inverseCols});
    // dx = r * ((g - a) - xhat * b)
    map(Program::Sub, {each(g.data()), every(&a)}, g.data(), op.cols);
    map(Program::Mul, {each(xhat.data()), every(&b)}, t.data(), op.cols);
    map(Program::Sub, {each(g.data()), each(t.data())}, t.data(), op.cols);
    map(Program::Mul, {every(&r), each(t.data())}, dx + i * op.cols, op.cols);
  }
  if (dweight)
    std::copy(dw.begin(), dw.end(), dweight);
}

namespace {

template <class Op> Work pointwiseWork(const Op &op) {
  return {.elements = op.n};
}

// dx = program(x, dy, f32 operands...), the program being the one the
// record names.
template <class Op> void pointwise(ExecContext &ctx, const Op &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  constexpr Program program = programOf<Op>();
  const auto scalars = op.f32Operands();
  constexpr size_t numInputs = 2 + std::tuple_size_v<decltype(scalars)>;
  static_assert(arith::microcode::kPrograms[static_cast<size_t>(program)].numInputs == numInputs,
                "a pointwise backward program takes x, dy, then the instruction's f32 operands");
  const float *x = ctx.read<float>(op.x, op.n).data();
  const float *dy = ctx.read<float>(op.dy, op.n).data();
  float *dx = ctx.write<float>(op.dx, op.n).data();
  std::array<arith::Operand, numInputs> inputs;
  inputs[0] = each(x);
  inputs[1] = each(dy);
  for (size_t i = 0; i < scalars.size(); ++i)
    inputs[2 + i] = every(&scalars[i]);
  applyOnThreads(program, inputs, dx, op.n);
}

} // namespace

#define NPU_POINTWISE_BWD(NAME, Type, family)                                                      \
  Work work(const isa::inst::Type &op) {                                                           \
    return pointwiseWork(op);                                                                      \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    pointwise(ctx, op);                                                                            \
  }
NPU_FOR_EACH_POINTWISE_BWD(NPU_POINTWISE_BWD)
#undef NPU_POINTWISE_BWD

} // namespace npu::sim
