// COPY, FILL, COPY_STRIDED.
#include "../arith_util.h"
#include "../context.h"

#include <algorithm>
#include <cstring>

namespace npu::sim {

Work work(const isa::inst::Copy &op) {
  Work w{.bytesRead = op.bytes, .bytesWritten = op.bytes, .writeAddress = op.dst};
  w.runs = {.copy = true, .count = 1, .elements = op.bytes, .address = op.src};
  return w;
}

void execute(ExecContext &ctx, const isa::inst::Copy &op) {
  auto src = ctx.read<uint8_t>(op.src, op.bytes);
  auto dst = ctx.write<uint8_t>(op.dst, op.bytes);
  std::memcpy(dst.data(), src.data(), op.bytes);
}

Work work(const isa::inst::Fill &op) {
  return {.bytesWritten = satMul(op.count, 4), .writeAddress = op.dst};
}

void execute(ExecContext &ctx, const isa::inst::Fill &op) {
  auto dst = ctx.write<uint8_t>(op.dst, uint64_t(op.count) * 4);
  uint8_t pattern[4];
  for (int i = 0; i < 4; ++i)
    pattern[i] = static_cast<uint8_t>(op.value >> (8 * i));
  for (size_t i = 0; i < dst.size(); i += 4)
    std::memcpy(dst.data() + i, pattern, 4);
}

namespace {

struct StridedView {
  uint64_t sizes[4];
  int64_t strides[4];
  uint64_t elementBytes;
  uint64_t count;
  // Lowest and highest element offsets relative to src; four extents of up
  // to 2^63 each need 128 bits.
  __int128 minOffset;
  __int128 maxOffset;
};

StridedView viewOf(const isa::inst::CopyStrided &op) {
  StridedView v{{op.size0, op.size1, op.size2, op.size3},
                {op.stride0, op.stride1, op.stride2, op.stride3},
                uint64_t(1) << static_cast<unsigned>(op.esize),
                1,
                0,
                0};
  for (int d = 0; d < 4; ++d) {
    v.count = satMul(v.count, v.sizes[d]);
    const __int128 extent = static_cast<__int128>(v.sizes[d] - 1) * v.strides[d];
    (extent < 0 ? v.minOffset : v.maxOffset) += extent;
  }
  return v;
}

} // namespace

Work work(const isa::inst::CopyStrided &op) {
  const StridedView v = viewOf(op);
  const uint64_t bytes = satMul(v.count, v.elementBytes);
  Work w{.elements = v.count, .bytesRead = bytes, .bytesWritten = bytes, .writeAddress = op.dst};
  // The DMA engine packs elements under a beat apart (an aligned source,
  // a positive stride); it reads other strided runs one element per burst.
  const unsigned elementLog2 = unsigned(std::countr_zero(v.elementBytes));
  const int64_t pitch = v.strides[3] * int64_t(v.elementBytes);
  const Work::RunKind kind =
      v.strides[3] == 1 ? Work::RunKind::Range
      : v.strides[3] > 1 && pitch < int64_t(isa::hw::kAxiDataBytes) && op.src % v.elementBytes == 0
          ? Work::RunKind::Packed
          : Work::RunKind::Pitched;
  w.runs = {.count = satMul(satMul(v.sizes[0], v.sizes[1]), v.sizes[2]),
            .elements = v.sizes[3],
            .elementLog2 = elementLog2,
            .kind = kind,
            .pitch = pitch,
            .address = op.src,
            .sizes = {v.sizes[0], v.sizes[1], v.sizes[2]}};
  for (int d = 0; d < 3; ++d)
    w.runs.steps[d] = v.strides[d] * int64_t(v.elementBytes);
  return w;
}

// The check stage verified the view's extent (its memory operand in
// isa/data.td), so the sizes below fit in 64 bits.
void execute(ExecContext &ctx, const isa::inst::CopyStrided &op) {
  const StridedView v = viewOf(op);
  const uint64_t es = v.elementBytes;
  const uint64_t dstBytes = v.count * es;
  // The source extent spans from the lowest to the highest element offset.
  const uint64_t lowBytes = static_cast<uint64_t>(-v.minOffset) * es;
  const uint64_t srcLow = op.src - lowBytes;
  const uint64_t srcBytes = static_cast<uint64_t>(v.maxOffset - v.minOffset + 1) * es;
  const uint8_t *src = ctx.read<uint8_t>(srcLow, srcBytes).data() + lowBytes;
  uint8_t *dst = ctx.write<uint8_t>(op.dst, dstBytes).data();
  const bool innerContiguous = v.strides[3] == 1;
  for (uint64_t i0 = 0; i0 < v.sizes[0]; ++i0)
    for (uint64_t i1 = 0; i1 < v.sizes[1]; ++i1)
      for (uint64_t i2 = 0; i2 < v.sizes[2]; ++i2) {
        const int64_t base = static_cast<int64_t>(i0) * v.strides[0] +
                             static_cast<int64_t>(i1) * v.strides[1] +
                             static_cast<int64_t>(i2) * v.strides[2];
        const uint8_t *row = src + base * static_cast<int64_t>(es);
        if (innerContiguous) {
          std::memcpy(dst, row, v.sizes[3] * es);
          dst += v.sizes[3] * es;
          continue;
        }
        for (uint64_t i3 = 0; i3 < v.sizes[3]; ++i3, dst += es)
          std::memcpy(dst, row + static_cast<int64_t>(i3) * v.strides[3] * static_cast<int64_t>(es),
                      es);
      }
}

} // namespace npu::sim
