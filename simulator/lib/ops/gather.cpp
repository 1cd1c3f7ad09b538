// EMBEDDING and EMBEDDING_BWD.
#include "../arith_util.h"
#include "../context.h"
#include "../vector_ops.h"

#include <cstring>

namespace npu::sim {

namespace {

uint64_t indexBytes(isa::IndexType type) { return type == isa::IndexType::i64 ? 8 : 4; }

// Reads index t, faulting with its address if it is outside [0, rows).
template <class Op> uint64_t checkedIndex(ExecContext &ctx, const Op &op, const uint8_t *indices, uint64_t t) {
  int64_t index;
  if (op.itype == isa::IndexType::i64) {
    std::memcpy(&index, indices + 8 * t, 8);
  } else {
    int32_t narrow;
    std::memcpy(&narrow, indices + 4 * t, 4);
    index = narrow;
  }
  if (index < 0 || static_cast<uint64_t>(index) >= op.rows)
    ctx.indexFault(ctx.info().operandIndex("indices"), op.indices + indexBytes(op.itype) * t,
                   indexBytes(op.itype), index);
  return static_cast<uint64_t>(index);
}

} // namespace

Work work(const isa::inst::Embedding &op) {
  Work w{.elements = satMul(op.count, op.dim), .bytesWritten = satMul(satMul(op.count, op.dim), 4)};
  w.runs = {.count = op.count,
            .elements = satMul(op.dim, 4),
            .address = op.table,
            .indexBytes = indexBytes(op.itype)};
  return w;
}

void execute(ExecContext &ctx, const isa::inst::Embedding &op) {
  const uint64_t rowBytes = uint64_t(op.dim) * 4;
  const uint64_t tableBytes = op.rows * rowBytes;
  const uint64_t outBytes = op.count * rowBytes;
  const uint64_t idxBytes = op.count * indexBytes(op.itype);
  const uint8_t *indices = ctx.read<uint8_t>(op.indices, idxBytes).data();
  const uint8_t *table = ctx.read<uint8_t>(op.table, tableBytes).data();
  uint8_t *dst = ctx.write<uint8_t>(op.dst, outBytes).data();
  for (uint64_t t = 0; t < op.count; ++t)
    std::memcpy(dst + t * rowBytes, table + checkedIndex(ctx, op, indices, t) * rowBytes, rowBytes);
}

Work work(const isa::inst::EmbeddingBwd &op) { return {.elements = satMul(op.count, op.dim)}; }

void execute(ExecContext &ctx, const isa::inst::EmbeddingBwd &op) {
  const uint64_t rowBytes = uint64_t(op.dim) * 4;
  const uint64_t tableBytes = op.rows * rowBytes;
  const uint64_t dyBytes = op.count * rowBytes;
  const uint64_t idxBytes = op.count * indexBytes(op.itype);
  const uint8_t *indices = ctx.read<uint8_t>(op.indices, idxBytes).data();
  const float *dy = ctx.read<float>(op.dy, dyBytes / 4).data();
  float *dtable = ctx.update<float>(op.dtable, tableBytes / 4).data();
  for (uint64_t t = 0; t < op.count; ++t) {
    const uint64_t row = checkedIndex(ctx, op, indices, t);
    if (op.padding_idx >= 0 && row == static_cast<uint64_t>(op.padding_idx))
      continue;
    float *target = dtable + row * op.dim;
    map(Program::Add, {each(target), each(dy + t * op.dim)}, target, op.dim);
  }
}

} // namespace npu::sim
