// The vector engine's cycle model against the loop it takes a shortcut
// from: a long row's chunks advanced by whole periods once the engine's
// state repeats, against every chunk simulated.
#include "npu/isa/recipes.h"
#include "timing.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace npu::sim {
namespace {

// An operand of `info` at random: an accepted enumerator, an address
// anywhere or just before a page boundary, any flag, bits or small count.
uint64_t randomOperand(const isa::OperandInfo &info, std::mt19937_64 &rng) {
  switch (info.kind) {
  case isa::OperandKind::Enum: {
    std::vector<uint32_t> accepted;
    for (uint32_t v = 0; v < info.enumInfo->numValues; ++v)
      if (info.accepts(info.enumInfo->values[v].value))
        accepted.push_back(info.enumInfo->values[v].value);
    return accepted[rng() % accepted.size()];
  }
  case isa::OperandKind::Addr: {
    const uint64_t page = (1 + rng() % 4096) * 4096;
    const uint64_t address = rng() % 2 ? rng() % (1 << 26) : page - rng() % 2 * (rng() % 160);
    return address / info.align * info.align;
  }
  case isa::OperandKind::Flag: return rng() & 1;
  case isa::OperandKind::F32:
  case isa::OperandKind::Bits32: return uint32_t(rng());
  default: {
    const uint64_t value = rng() % 64;
    return info.hasRange ? uint64_t(std::clamp<int64_t>(int64_t(value), info.min, info.max))
                         : value;
  }
  }
}

// Random packets of every recipe: long rows (many periods of chunks, odd
// lengths), short rows, one or a few rows, operands at any place (in place,
// overlapping or apart), indexed rows, under random memory timings and
// prefetches: the same cycles and bytes with and without skipping periods.
TEST(VectorTiming, SkippedPeriodsMatchEveryChunkSimulated) {
  std::mt19937_64 rng(1717);
  const unsigned widths[] = {1, 2, 4, 8, 16, 32};
  const size_t recipes = std::size(isa::recipe::kRecipes);
  for (int i = 0; i < 1500; ++i) {
    const isa::recipe::Recipe &r = isa::recipe::kRecipes[i % recipes];
    const isa::InstrInfo &info = isa::info(static_cast<isa::Opcode>(r.opcode));
    isa::Instruction decoded;
    decoded.opcode = static_cast<isa::Opcode>(r.opcode);
    for (uint32_t o = 0; o < info.numOperands; ++o)
      decoded.operands[o] = randomOperand(info.operands[o], rng);
    for (unsigned c = 0; c < r.numConditions; ++c) {
      const isa::recipe::Condition &when = isa::recipe::kConditions[r.firstCondition + c];
      if (when.equal)
        decoded.operands[when.operand] = when.value;
      else
        while (decoded.operands[when.operand] == when.value)
          decoded.operands[when.operand] = randomOperand(info.operands[when.operand], rng);
    }
    // In place half of the time: the reads then wait for the writes.
    if (rng() % 2 && r.streamOperand[0] >= 0 && r.streamOperand[4] >= 0)
      decoded.operands[r.streamOperand[4]] =
          decoded.operands[r.streamOperand[0]] + (rng() % 2 ? 0 : rng() % 3 * 1024);
    const bool longRow = i % 3 != 0;
    const uint64_t rows = longRow ? 1 + rng() % 2 : 1 + rng() % 6;
    decoded.operands[r.cols] = longRow ? 2000 + rng() % 60000 : 1 + rng() % 2000;
    if (r.rows >= 0)
      decoded.operands[r.rows] = rows;
    Work work;
    std::vector<uint32_t> indexRows(r.rows >= 0 ? rows : 1);
    if (r.rowLoad == isa::recipe::RowLoad::Index && rng() % 2) {
      for (uint32_t &row : indexRows)
        row = uint32_t(rng() % 4);
      work.runs.rows = indexRows;
    }
    MemoryTiming memory;
    memory.latency = unsigned(rng() % 4 ? rng() % 40 : rng() % 300);
    memory.bytesPerCycle = rng() % 2 ? 32 : widths[rng() % 6];
    memory.stallPercent = unsigned(rng() % 5 ? 0 : rng() % 60);
    const Prefetch prefetch{bool(rng() & 1), bool(rng() & 1)};
    const PacketTiming fast = packetTiming(decoded, work, memory, prefetch, true);
    const PacketTiming slow = packetTiming(decoded, work, memory, prefetch, false);
    SCOPED_TRACE(testing::Message() << "case " << i << " " << r.name << " " << rows << "x"
                                    << decoded.operands[r.cols] << " " << memory.describe());
    EXPECT_EQ(fast.cycles, slow.cycles);
    EXPECT_EQ(fast.traffic.bytesRead, slow.traffic.bytesRead);
    EXPECT_EQ(fast.traffic.bytesWritten, slow.traffic.bytesWritten);
    EXPECT_EQ(fast.nextPrefetched, slow.nextPrefetched);
  }
}

} // namespace
} // namespace npu::sim
