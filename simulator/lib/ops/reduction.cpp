// ROW_SUM ROW_MAX ROW_MEAN COL_SUM in the spec's lane order.
#include "../arith_util.h"
#include "../context.h"
#include "../vector_ops.h"

#include <vector>

namespace npu::sim {

namespace {

template <class Op> Work reduceWork(const Op &op) { return {.elements = satMul(op.rows, op.cols)}; }

// dst[i] = f(row i) for every row.
template <class Op, class F> void perRow(ExecContext &ctx, const Op &op, F f) {
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  float *dst = ctx.write<float>(op.dst, op.rows).data();
  for (uint64_t i = 0; i < op.rows; ++i)
    dst[i] = f(src + i * op.cols);
}

} // namespace

Work work(const isa::inst::RowSum &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::RowSum &op) {
  perRow(ctx, op, [&](const float *row) { return laneSum(row, op.cols); });
}

Work work(const isa::inst::RowMax &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::RowMax &op) {
  perRow(ctx, op, [&](const float *row) { return laneMax(row, op.cols); });
}

Work work(const isa::inst::RowMean &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::RowMean &op) {
  const float inverse = scalar(Program::Recip, {static_cast<float>(op.cols)});
  perRow(ctx, op, [&](const float *row) {
    return scalar(Program::Mul, {laneSum(row, op.cols), inverse});
  });
}

Work work(const isa::inst::ColSum &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::ColSum &op) {
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  float *dst = ctx.write<float>(op.dst, op.cols).data();
  // Each column is one accumulator, rows added in increasing order from +0.
  std::vector<float> acc(op.cols, 0.0f);
  for (uint64_t i = 0; i < op.rows; ++i)
    map(Program::Add, {each(acc.data()), each(src + i * op.cols)}, acc.data(), op.cols);
  std::copy(acc.begin(), acc.end(), dst);
}

} // namespace npu::sim
