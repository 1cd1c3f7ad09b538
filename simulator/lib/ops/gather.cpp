// EMBEDDING, EMBEDDING_BWD and GATHER.
#include "../arith_util.h"
#include "../context.h"
#include "../typed_streams.h"
#include "../vector_ops.h"

#include <cstring>
#include <span>
#include <vector>

namespace npu::sim {

namespace {

uint64_t indexBytes(isa::IndexType type) {
  return type == isa::IndexType::i64 ? 8 : 4;
}

// Reads index t of `indices` (the operand `operand` at `address`), faulting
// with its address if it is outside [0, bound), or [-bound, bound) with
// wrap; a negative index under wrap counts from the end.
uint64_t checkedIndex(ExecContext &ctx, const char *operand, uint64_t address,
                      std::span<const uint8_t> indices, isa::IndexType type, uint64_t t,
                      uint64_t bound, bool wrap = false) {
  int64_t index;
  if (type == isa::IndexType::i64) {
    std::memcpy(&index, within(indices, 8 * t, 8).data(), 8);
  } else {
    int32_t narrow;
    std::memcpy(&narrow, within(indices, 4 * t, 4).data(), 4);
    index = narrow;
  }
  const int64_t low = wrap ? -static_cast<int64_t>(bound) : 0;
  if (index < low || index >= static_cast<int64_t>(bound))
    ctx.indexFault(ctx.info().operandIndex(operand), address + indexBytes(type) * t,
                   indexBytes(type), index);
  return static_cast<uint64_t>(index < 0 ? index + static_cast<int64_t>(bound) : index);
}

template <class Op>
uint64_t checkedIndex(ExecContext &ctx, const Op &op, std::span<const uint8_t> indices,
                      uint64_t t) {
  return checkedIndex(ctx, "indices", op.indices, indices, op.itype, t, op.rows);
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

Work work(const isa::inst::Gather &op) {
  const uint64_t size = storageBytes(op.dtype), rowBytes = satMul(op.inner, size);
  const bool full = op.mode == isa::GatherMode::full;
  const uint64_t rows = satMul(op.outer, op.count);
  Work w{.elements = satMul(rows, op.inner),
         .bytesWritten = satMul(rows, rowBytes),
         .writeAddress = op.dst};
  // One run per index: a row of `inner` elements (shared), or one element
  // (full) at its place in the row.
  w.runs = {.count = full ? satMul(rows, op.inner) : rows,
            .elements = full ? size : rowBytes,
            .address = op.src,
            .indexBytes = indexBytes(op.itype),
            .indices = op.index,
            .tableRows = op.n,
            .indexPeriod = full ? 0 : op.count,
            .slabRuns = full ? satMul(op.count, op.inner) : op.count,
            .slabBytes = satMul(op.n, rowBytes),
            .rowRuns = full ? op.inner : 1,
            .rowBytes = rowBytes};
  return w;
}

void execute(ExecContext &ctx, const isa::inst::Gather &op) {
  const uint64_t size = storageBytes(op.dtype), rowBytes = uint64_t(op.inner) * size;
  const bool full = op.mode == isa::GatherMode::full;
  const uint64_t rows = uint64_t(op.outer) * op.count;
  const uint64_t positions = full ? rows * op.inner : op.count;
  const std::span<const uint8_t> index =
      ctx.read<uint8_t>(op.index, positions * indexBytes(op.itype));
  const std::span<const uint8_t> src = ctx.read<uint8_t>(op.src, op.outer * op.n * rowBytes);
  const std::span<uint8_t> dst = ctx.write<uint8_t>(op.dst, rows * rowBytes);
  std::vector<uint32_t> &gathered = ctx.gatheredRows();
  gathered.reserve(full ? positions : rows);
  // In the engine's order (one run per index), so that a fault leaves the
  // runs before it written, as the DMA engine does.
  for (uint64_t o = 0; o < op.outer; ++o) {
    const uint64_t slab = o * op.n * rowBytes;
    for (uint64_t j = 0; j < op.count; ++j) {
      const uint64_t out = (o * op.count + j) * rowBytes;
      if (!full) {
        const uint64_t k = checkedIndex(ctx, "index", op.index, index, op.itype, j, op.n, op.wrap);
        gathered.push_back(uint32_t(k));
        std::memcpy(within(dst, out, rowBytes).data(),
                    within(src, slab + k * rowBytes, rowBytes).data(), rowBytes);
        continue;
      }
      for (uint64_t i = 0; i < op.inner; ++i) {
        const uint64_t k = checkedIndex(ctx, "index", op.index, index, op.itype,
                                        (o * op.count + j) * op.inner + i, op.n, op.wrap);
        gathered.push_back(uint32_t(k));
        std::memcpy(within(dst, out + i * size, size).data(),
                    within(src, slab + k * rowBytes + i * size, size).data(), size);
      }
    }
  }
}

} // namespace npu::sim
