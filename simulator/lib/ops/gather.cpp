// EMBEDDING and EMBEDDING_BWD.
#include "../arith_util.h"
#include "../context.h"
#include "../vector_ops.h"

#include <cstring>
#include <span>
#include <vector>

namespace npu::sim {

namespace {

uint64_t indexBytes(isa::IndexType type) {
  return type == isa::IndexType::i64 ? 8 : 4;
}

// Reads index t, faulting with its address if it is outside [0, rows).
template <class Op>
uint64_t checkedIndex(ExecContext &ctx, const Op &op, std::span<const uint8_t> indices,
                      uint64_t t) {
  int64_t index;
  if (op.itype == isa::IndexType::i64) {
    std::memcpy(&index, within(indices, 8 * t, 8).data(), 8);
  } else {
    int32_t narrow;
    std::memcpy(&narrow, within(indices, 4 * t, 4).data(), 4);
    index = narrow;
  }
  if (index < 0 || static_cast<uint64_t>(index) >= op.rows)
    ctx.indexFault(ctx.info().operandIndex("indices"), op.indices + indexBytes(op.itype) * t,
                   indexBytes(op.itype), index);
  return static_cast<uint64_t>(index);
}

} // namespace

Work work(const isa::inst::Embedding &op) {
  Work w{.elements = satMul(op.count, op.dim),
         .bytesWritten = satMul(satMul(op.count, op.dim), 4),
         .writeAddress = op.dst};
  w.runs = {.count = op.count,
            .elements = satMul(op.dim, 4),
            .address = op.table,
            .indexBytes = indexBytes(op.itype),
            .indices = op.indices,
            .tableRows = op.rows};
  return w;
}

void execute(ExecContext &ctx, const isa::inst::Embedding &op) {
  const uint64_t rowBytes = uint64_t(op.dim) * 4;
  const uint64_t tableBytes = op.rows * rowBytes;
  const uint64_t outBytes = op.count * rowBytes;
  const uint64_t idxBytes = op.count * indexBytes(op.itype);
  const std::span<const uint8_t> indices = ctx.read<uint8_t>(op.indices, idxBytes);
  const std::span<const uint8_t> table = ctx.read<uint8_t>(op.table, tableBytes);
  const std::span<uint8_t> dst = ctx.write<uint8_t>(op.dst, outBytes);
  std::vector<uint32_t> &rows = ctx.gatheredRows();
  rows.reserve(op.count);
  for (uint64_t t = 0; t < op.count; ++t) {
    const uint64_t row = checkedIndex(ctx, op, indices, t);
    rows.push_back(uint32_t(row));
    std::memcpy(within(dst, t * rowBytes, rowBytes).data(),
                within(table, row * rowBytes, rowBytes).data(), rowBytes);
  }
}

Work work(const isa::inst::EmbeddingBwd &op) {
  return {.elements = satMul(op.count, op.dim)};
}

void execute(ExecContext &ctx, const isa::inst::EmbeddingBwd &op) {
  const uint64_t rowBytes = uint64_t(op.dim) * 4;
  const uint64_t tableBytes = op.rows * rowBytes;
  const uint64_t dyBytes = op.count * rowBytes;
  const uint64_t idxBytes = op.count * indexBytes(op.itype);
  const std::span<const uint8_t> indices = ctx.read<uint8_t>(op.indices, idxBytes);
  const std::span<const float> dy = ctx.read<float>(op.dy, dyBytes / 4);
  const std::span<float> dtable = ctx.update<float>(op.dtable, tableBytes / 4);
  // The cycle model times each index's row as the vector engine runs it:
  // where it is, or skipped for the padding index (Work::Runs::rows).
  std::vector<uint32_t> &rows = ctx.gatheredRows();
  rows.reserve(op.count);
  for (uint64_t t = 0; t < op.count; ++t) {
    const uint64_t row = checkedIndex(ctx, op, indices, t);
    rows.push_back(uint32_t(row));
    if (op.padding_idx >= 0 && row == static_cast<uint64_t>(op.padding_idx))
      continue;
    float *target = within(dtable, row * op.dim, op.dim).data();
    map(Program::Add, {each(target), each(within(dy, t * op.dim, op.dim).data())}, target, op.dim);
  }
}

} // namespace npu::sim
