// SOFTMAX, RMSNORM and LAYERNORM, row by row, in the step order of docs/arith.md;
// large packets split their rows over host threads (vector_ops.h).
// The f32 forms have fast paths here; bf16 and f16 run the record's recipe
// on the typed streams (recipe_runner.h), as the RTL vector engine does.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"
#include "../vector_ops.h"

#include <limits>
#include <vector>

namespace npu::sim {

namespace {

template <class Op> Work rowsWork(const Op &op) { return {.elements = satMul(op.rows, op.cols)}; }

} // namespace

Work work(const isa::inst::Softmax &op) { return rowsWork(op); }

void execute(ExecContext &ctx, const isa::inst::Softmax &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  float *dst = ctx.write<float>(op.dst, n).data();
  const float scale = op.scale;
  const float minusInfinity = -std::numeric_limits<float>::infinity();
  forRowRanges(op.rows, op.cols, [&](uint64_t first, uint64_t end) {
    std::vector<float> z(op.cols), e(op.cols);
    for (uint64_t i = first; i < end; ++i) {
      // z = scale * x, with masked columns at -inf.
      map(Program::Mul, {each(src + i * op.cols), every(&scale)}, z.data(), op.cols);
      if (op.causal) {
        const int64_t last = static_cast<int64_t>(i) + op.offset; // last visible column
        for (int64_t j = std::max<int64_t>(last + 1, 0); j < static_cast<int64_t>(op.cols); ++j)
          z[static_cast<size_t>(j)] = minusInfinity;
      }
      const float m = laneMax(z.data(), op.cols);
      map(Program::Sub, {each(z.data()), every(&m)}, z.data(), op.cols); // z - m
      map(Program::Exp, {each(z.data())}, e.data(), op.cols);
      const float s = laneSum(e.data(), op.cols);
      float *out = dst + i * op.cols;
      if (op.log) {
        const float logS = scalar(Program::Log, {s});
        map(Program::Sub, {each(z.data()), every(&logS)}, out, op.cols);
      } else {
        const float inverse = scalar(Program::Recip, {s});
        map(Program::Mul, {each(e.data()), every(&inverse)}, out, op.cols);
      }
    }
  });
}

Work work(const isa::inst::Rmsnorm &op) {
  return rowsWork(op);
}

void execute(ExecContext &ctx, const isa::inst::Rmsnorm &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  const float *weight = op.use_weight ? ctx.read<float>(op.weight, op.cols).data() : nullptr;
  float *rstd = op.write_rstd ? ctx.write<float>(op.rstd, op.rows).data() : nullptr;
  float *dst = ctx.write<float>(op.dst, n).data();
  const float inverseCols = scalar(Program::Recip, {static_cast<float>(op.cols)});
  const float eps = op.eps;
  forRowRanges(op.rows, op.cols, [&](uint64_t first, uint64_t end) {
    std::vector<float> squares(op.cols);
    for (uint64_t i = first; i < end; ++i) {
      const float *x = src + i * op.cols;
      map(Program::Mul, {each(x), each(x)}, squares.data(), op.cols);
      const float meanSquare =
          scalar(Program::Mul, {laneSum(squares.data(), op.cols), inverseCols});
      const float r = scalar(Program::Rsqrt, {scalar(Program::Add, {meanSquare, eps})});
      float *out = dst + i * op.cols;
      map(Program::Mul, {each(x), every(&r)}, out, op.cols);
      if (weight)
        map(Program::Mul, {each(out), each(weight)}, out, op.cols);
      if (rstd)
        rstd[i] = r;
    }
  });
}

Work work(const isa::inst::Layernorm &op) {
  return rowsWork(op);
}

void execute(ExecContext &ctx, const isa::inst::Layernorm &op) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  const float *weight = op.use_weight ? ctx.read<float>(op.weight, op.cols).data() : nullptr;
  const float *bias = op.use_bias ? ctx.read<float>(op.bias, op.cols).data() : nullptr;
  float *stats =
      op.write_stats ? ctx.write<float>(op.stats, 2 * uint64_t(op.rows)).data() : nullptr;
  float *dst = ctx.write<float>(op.dst, n).data();
  const float inverseCols = scalar(Program::Recip, {static_cast<float>(op.cols)});
  const float eps = op.eps;
  forRowRanges(op.rows, op.cols, [&](uint64_t first, uint64_t end) {
    std::vector<float> centred(op.cols), squares(op.cols);
    for (uint64_t i = first; i < end; ++i) {
      const float *x = src + i * op.cols;
      const float mean = scalar(Program::Mul, {laneSum(x, op.cols), inverseCols});
      map(Program::Sub, {each(x), every(&mean)}, centred.data(), op.cols);
      map(Program::Mul, {each(centred.data()), each(centred.data())}, squares.data(), op.cols);
      const float variance = scalar(Program::Mul, {laneSum(squares.data(), op.cols), inverseCols});
      const float r = scalar(Program::Rsqrt, {scalar(Program::Add, {variance, eps})});
      float *out = dst + i * op.cols;
      map(Program::Mul, {each(centred.data()), every(&r)}, out, op.cols);
      if (weight)
        map(Program::Mul, {each(out), each(weight)}, out, op.cols);
      if (bias)
        map(Program::Add, {each(out), each(bias)}, out, op.cols);
      if (stats) {
        stats[2 * i] = mean;
        stats[2 * i + 1] = r;
      }
    }
  });
}

} // namespace npu::sim
