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

// An instruction that recipe `r` runs, its operands at random.
isa::Instruction randomInstruction(const isa::recipe::Recipe &r, std::mt19937_64 &rng) {
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
  return decoded;
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
    isa::Instruction decoded = randomInstruction(r, rng);
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

// The memo against the model: a pool of packets larger than its table
// (packets that evict each other, and packets that come back), each under
// either prefetch, with and without a gather's rows, under a few memory
// timings. Every answer equals packetTiming's.
TEST(VectorTiming, MemoMatchesPacketTiming) {
  std::mt19937_64 rng(4417);
  const size_t recipes = std::size(isa::recipe::kRecipes);
  std::vector<isa::Instruction> pool;
  for (size_t i = 0; i < 3 * recipes; ++i) {
    const isa::recipe::Recipe &r = isa::recipe::kRecipes[i % recipes];
    isa::Instruction decoded = randomInstruction(r, rng);
    decoded.operands[r.cols] = 1 + rng() % 3000;
    if (r.rows >= 0)
      decoded.operands[r.rows] = 1 + rng() % 4;
    pool.push_back(decoded);
  }
  for (int t = 0; t < 3; ++t) {
    MemoryTiming memory;
    memory.latency = unsigned(rng() % 60);
    memory.bytesPerCycle = t == 0 ? 32 : 8;
    memory.stallPercent = t == 2 ? 20 : 0;
    PacketTimingMemo memo(memory);
    for (int i = 0; i < 3000; ++i) {
      // Mostly the first few, as a loop's packets; now and then any.
      const isa::Instruction &decoded = pool[rng() % 4 ? rng() % 8 : rng() % pool.size()];
      isa::Packet packet;
      isa::encode(decoded, packet);
      Work work;
      const std::vector<uint32_t> indexRows(8, uint32_t(rng() % 3));
      if (rng() % 8 == 0)
        work.runs.rows = indexRows;
      const Prefetch prefetch{bool(rng() & 1), bool(rng() & 1)};
      const PacketTiming remembered = memo.timing(packet, decoded, work, prefetch);
      const PacketTiming computed = packetTiming(decoded, work, memory, prefetch);
      SCOPED_TRACE(testing::Message()
                   << "timing " << t << " step " << i << " " << isa::info(decoded.opcode).mnemonic);
      EXPECT_EQ(remembered.cycles, computed.cycles);
      EXPECT_EQ(remembered.traffic.bytesRead, computed.traffic.bytesRead);
      EXPECT_EQ(remembered.traffic.bytesWritten, computed.traffic.bytesWritten);
      EXPECT_EQ(remembered.traffic.upperBound, computed.traffic.upperBound);
      EXPECT_EQ(remembered.nextPrefetched, computed.nextPrefetched);
    }
  }
}

} // namespace
} // namespace npu::sim
