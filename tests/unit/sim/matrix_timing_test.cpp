// The matrix engine's cycle model against the loops it takes shortcuts
// from: the streaming outstanding-burst stall against burstsEnd over the
// whole request, and the packet's timing with each distinct memory request
// timed once against every request timed burst by burst.
#include "burst_stall.h"
#include "timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace npu::sim {
namespace {

constexpr uint64_t kBeat = isa::hw::kAxiDataBytes;

// What the cycle model charged before: the stall only for a request of more
// bursts than may be in flight, from the whole list of its bursts.
uint64_t referenceStall(const std::vector<uint64_t> &bursts, uint64_t latency, uint64_t beat,
                        bool write) {
  if (bursts.size() <= isa::hw::kAxiOutstanding)
    return 0;
  return burstsEnd(bursts, latency, beat, write, isa::hw::kAxiOutstanding) -
         burstsEnd(bursts, latency, beat, write, bursts.size());
}

void expectSameStall(const std::vector<uint64_t> &bursts, uint64_t latency, uint64_t beat,
                     bool write) {
  OutstandingStall stall(latency, beat, write);
  for (uint64_t n : bursts)
    stall.add(n);
  EXPECT_EQ(stall.stall(), referenceStall(bursts, latency, beat, write))
      << bursts.size() << " bursts, latency " << latency << ", beat " << beat
      << (write ? ", write" : ", read");
}

// The bursts of a matrix panel's request as the port splits it: `count`
// runs of `bytes` bytes, `pitch` bytes apart from `base`.
std::vector<uint64_t> panelBursts(uint64_t base, uint64_t count, uint64_t bytes, uint64_t pitch) {
  std::vector<uint64_t> bursts;
  for (uint64_t r = 0; r < count; ++r) {
    const uint64_t address = base + r * pitch;
    const uint64_t beats = bytes ? (address % kBeat + bytes + kBeat - 1) / kBeat : 0;
    forEachBurst(address, beats, [&](uint64_t n) { bursts.push_back(n); });
  }
  return bursts;
}

TEST(OutstandingStall, MatchesTheWholeRequestLoopOnRandomBursts) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint64_t> bursts(rng() % 80);
    for (uint64_t &n : bursts)
      n = 1 + rng() % isa::hw::kAxiMaxBurst;
    expectSameStall(bursts, rng() % 200, 1 + rng() % 8, rng() & 1);
  }
}

// Requests shaped like the matrix engine's (up to 32 runs of up to 32
// elements of 1, 2 or 4 bytes, any pitch and alignment, across 4 KiB pages),
// at the memory timings the tests and the RTL harness use.
TEST(OutstandingStall, MatchesTheWholeRequestLoopOnPanelRequests) {
  std::mt19937_64 rng(1717);
  const uint64_t latencies[] = {0, 1, 2, isa::hw::kMemLatency, 40, 100};
  const uint64_t beats[] = {1, 2, 4, 8};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t element = uint64_t(1) << rng() % 3;
    const uint64_t count = 1 + rng() % 32, words = 1 + rng() % 32;
    const uint64_t pitch = (rng() % 4 ? words + rng() % 3000 : rng() % 40000) * element;
    const uint64_t base = rng() % (1 << 20) * element;
    expectSameStall(panelBursts(base, count, words * element, pitch), latencies[rng() % 6],
                    beats[rng() % 4], rng() & 1);
  }
}

// MATMUL/BMM work of random shapes (over several blocks, past kExactPanels
// panels and, a few, past kExactBlocks blocks), transposes, acc, element
// sizes, pitches, batch strides and operand alignments, under random memory
// timings (latency, width, wait states) and prefetches: the same cycles and
// bytes with and without the table of timed requests.
TEST(MatrixTiming, MemoisedRequestsMatchEveryRequestTimed) {
  std::mt19937_64 rng(171717);
  const unsigned widths[] = {1, 2, 4, 8, 16, 32};
  for (int i = 0; i < 1500; ++i) {
    Work work;
    // Mostly a few blocks; some wide (C blocks 2 KiB apart in a row) or
    // deep; a few of more than kExactBlocks blocks.
    const bool huge = i % 100 == 0, wide = i % 4 == 1;
    work.m = huge ? 2048 + rng() % 300 : wide ? 1 + rng() % 70 : 1 + rng() % 150;
    work.n = huge ? 2048 + rng() % 300 : wide ? 500 + rng() % 700 : 1 + rng() % 150;
    work.k = huge || wide ? 1 + rng() % 40 : rng() % 4 ? 1 + rng() % 120 : 500 + rng() % 700;
    work.batch = huge ? 1 : 1 + rng() % 3;
    Work::MatrixOperands &o = work.matrix;
    o.transA = rng() & 1;
    o.transB = rng() & 1;
    o.acc = rng() & 1;
    o.abLog2 = unsigned(rng() % 3);
    o.cLog2 = rng() & 1 ? 2 : o.abLog2;
    // Operands at any element, or on or just before a page boundary (where
    // runs split into more bursts).
    const auto place = [&] {
      const uint64_t page = rng() % 4096 * 4096;
      return rng() % 2 ? rng() % (1 << 24) : page - rng() % 2 * (rng() % 160);
    };
    o.a = place();
    o.b = place();
    o.c = place();
    // Pitches past the row: a few elements, any number, or up to a power of
    // two (rows then repeat their places in a page).
    const auto pitch = [&](uint64_t cols) {
      switch (rng() % 3) {
      case 0: return cols + rng() % 64;
      case 1: return cols + rng() % 5000;
      default: return std::max(cols, uint64_t(1) << (6 + rng() % 8));
      }
    };
    const uint64_t aCols = o.transA ? work.m : work.k, bCols = o.transB ? work.k : work.n;
    o.lda = pitch(aCols);
    o.ldb = pitch(bCols);
    o.ldc = pitch(work.n);
    o.strideA = rng() % 4 ? rng() % (1 << 20) : 0;
    o.strideB = rng() % 4 ? rng() % (1 << 20) : 0;
    o.strideC = rng() % (1 << 20);
    MemoryTiming memory;
    memory.latency = unsigned(rng() % 4 ? rng() % 40 : rng() % 300);
    // The full width half the time: a write's bursts then each cost a cycle.
    memory.bytesPerCycle = rng() % 2 ? 32 : widths[rng() % 6];
    memory.stallPercent = unsigned(rng() % 3 ? 0 : rng() % 60);
    const uint64_t nextFetch = rng() & 1 ? 0 : 1 + rng() % 100;
    const PacketTiming fast = matrixTiming(work, memory, nextFetch, true);
    const PacketTiming slow = matrixTiming(work, memory, nextFetch, false);
    SCOPED_TRACE(testing::Message()
                 << work.m << "x" << work.n << "x" << work.k << " batch " << work.batch << " trans "
                 << o.transA << o.transB << " acc " << o.acc << " log2 " << o.abLog2 << "/"
                 << o.cLog2 << " ld " << o.lda << "/" << o.ldb << "/" << o.ldc << " at " << o.a
                 << "/" << o.b << "/" << o.c << " " << memory.describe());
    EXPECT_EQ(fast.cycles, slow.cycles);
    EXPECT_EQ(fast.traffic.bytesRead, slow.traffic.bytesRead);
    EXPECT_EQ(fast.traffic.bytesWritten, slow.traffic.bytesWritten);
  }
}

} // namespace
} // namespace npu::sim
