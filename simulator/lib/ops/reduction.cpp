// ROW_SUM ROW_MAX ROW_MEAN COL_SUM in the spec's lane order (a bf16 or f16
// COL_SUM by the record's recipe on the typed streams, recipe_runner.h);
// ARGMAX and ARGMIN by the order keys their recipes compute; COUNT, ANY,
// ALL.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"
#include "../typed_streams.h"
#include "../vector_ops.h"

#include <algorithm>
#include <bit>
#include <vector>

namespace npu::sim {

namespace {

template <class Op> Work reduceWork(const Op &op) { return {.elements = satMul(op.rows, op.cols)}; }

// dst[i] = f(row i) for every row; bf16 and f16 rows widened into binary32
// lanes, each result rounded once on store (the engine's typed stream and
// row store).
template <class Op, class F> void perRow(ExecContext &ctx, const Op &op, F f) {
  const uint64_t n = uint64_t(op.rows) * op.cols;
  if (op.dtype != isa::DType::f32) {
    const LaneColumns lanes = loadLanes(ctx, op.src, n, op.dtype);
    const float *src = reinterpret_cast<const float *>(lanes.words.data());
    LaneColumns out;
    out.words.resize(op.rows);
    for (uint64_t i = 0; i < op.rows; ++i)
      out.words[i] = std::bit_cast<uint32_t>(f(src + i * op.cols));
    storeLanes(ctx, op.dst, op.dtype, out);
    return;
  }
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
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const float *src = ctx.read<float>(op.src, n).data();
  float *dst = ctx.write<float>(op.dst, op.cols).data();
  // Each column is one accumulator, rows added in increasing order from +0.
  std::vector<float> acc(op.cols, 0.0f);
  for (uint64_t i = 0; i < op.rows; ++i)
    map(Program::Add, {each(acc.data()), each(src + i * op.cols)}, acc.data(), op.cols);
  std::copy(acc.begin(), acc.end(), dst);
}

namespace {

// The u32 order key of an element in lane form, larger toward the extreme
// sought (isa/reduction.td): an int32 or a binary32 pattern's value (both
// zeros equal, subnormals by value), a NaN above everything for argmax and
// argmin alike.
uint32_t orderKey(isa::DType type, uint32_t x, bool max) {
  const uint32_t order = max ? 0x80000000u : 0x7fffffffu;
  if (type == isa::DType::i32)
    return x ^ order;
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return 0xffffffffu;
  return (x >> 31 ? 0u - magnitude : magnitude) ^ order;
}

// dst[i] = the first j of row i with the largest key, as an i64.
template <class Op> void argExtreme(ExecContext &ctx, const Op &op, bool max) {
  const LaneColumns lanes = loadLanes(ctx, op.src, uint64_t(op.rows) * op.cols, op.dtype);
  uint32_t *dst = ctx.write<uint32_t>(op.dst, 2 * uint64_t(op.rows)).data();
  for (uint64_t i = 0; i < op.rows; ++i) {
    uint64_t best = 0;
    uint32_t bestKey = 0;
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint32_t key = orderKey(op.dtype, lanes.words[i * op.cols + j], max);
      if (j == 0 || key > bestKey) {
        best = j;
        bestKey = key;
      }
    }
    dst[2 * i] = static_cast<uint32_t>(best);
    dst[2 * i + 1] = static_cast<uint32_t>(best >> 32);
  }
}

} // namespace

Work work(const isa::inst::Argmax &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::Argmax &op) {
  argExtreme(ctx, op, true);
}

Work work(const isa::inst::Argmin &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::Argmin &op) {
  argExtreme(ctx, op, false);
}

Work work(const isa::inst::Count &op) { return reduceWork(op); }
// The b8 stream's masks (nonzero bytes all ones) counted row by row.
void execute(ExecContext &ctx, const isa::inst::Count &op) {
  const LaneColumns lanes = loadLanes(ctx, op.src, uint64_t(op.rows) * op.cols, isa::DType::b8);
  // An i64 needs only word alignment: two words, low first.
  uint32_t *dst = ctx.write<uint32_t>(op.dst, 2 * uint64_t(op.rows)).data();
  for (uint64_t i = 0; i < op.rows; ++i) {
    const uint64_t count = static_cast<uint64_t>(std::count(
        lanes.words.begin() + i * op.cols, lanes.words.begin() + (i + 1) * op.cols, 0xffffffffu));
    dst[2 * i] = static_cast<uint32_t>(count);
    dst[2 * i + 1] = static_cast<uint32_t>(count >> 32);
  }
}

// Whether some (ANY) or every (ALL) byte of each row is nonzero, as 0/1.
static void truthOfRows(ExecContext &ctx, uint64_t dstAddr, uint64_t srcAddr, uint32_t rows,
                        uint32_t cols, bool all) {
  const LaneColumns lanes = loadLanes(ctx, srcAddr, uint64_t(rows) * cols, isa::DType::b8);
  uint8_t *dst = ctx.write<uint8_t>(dstAddr, rows).data();
  for (uint64_t i = 0; i < rows; ++i) {
    const auto first = lanes.words.begin() + i * cols, last = first + cols;
    dst[i] = all ? std::find(first, last, 0u) == last : std::find(first, last, 0xffffffffu) != last;
  }
}

Work work(const isa::inst::Any &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::Any &op) {
  truthOfRows(ctx, op.dst, op.src, op.rows, op.cols, false);
}

Work work(const isa::inst::All &op) { return reduceWork(op); }
void execute(ExecContext &ctx, const isa::inst::All &op) {
  truthOfRows(ctx, op.dst, op.src, op.rows, op.cols, true);
}

} // namespace npu::sim
