#include "timing.h"

#include "arith_util.h"

namespace npu::sim {

namespace {
uint64_t ceilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
} // namespace

uint64_t memoryCycles(uint64_t bytes) {
  if (bytes == 0)
    return 0;
  const uint64_t beats = ceilDiv(bytes, isa::hw::kAxiDataBytes);
  const uint64_t bursts = ceilDiv(beats, isa::hw::kAxiMaxBurst);
  return satAdd(satMul(bursts, isa::hw::kMemLatency), beats);
}

uint64_t packetCycles(const isa::InstrInfo &info, const Work &work) {
  // Absurd operands give absurd estimates: every sum and product saturates
  // at 2^64-1 rather than wrap to a small count.
  uint64_t cycles = isa::hw::kFetchCycles + info.setupCycles;
  const uint64_t memory = satAdd(memoryCycles(work.bytesRead), memoryCycles(work.bytesWritten));
  switch (info.engine) {
  case isa::Engine::Control:
    break;
  case isa::Engine::Dma:
    cycles = satAdd(
        cycles,
        satAdd(memory, satMul(ceilDiv(work.elements, isa::hw::kVectorLanes), info.perElementCycles)));
    break;
  case isa::Engine::Matrix: {
    // Each T x T output tile streams K operand pairs through the array and
    // then drains its diagonal wavefront (T cycles).
    const uint64_t tiles = satMul(satMul(ceilDiv(work.m, isa::hw::kMatrixTile),
                                         ceilDiv(work.n, isa::hw::kMatrixTile)),
                                  work.batch);
    cycles = satAdd(cycles, satAdd(satMul(tiles, satAdd(work.k, isa::hw::kMatrixTile)), memory));
    break;
  }
  case isa::Engine::Vector:
    cycles = satAdd(
        cycles,
        satAdd(satMul(ceilDiv(work.elements, isa::hw::kVectorLanes), info.perElementCycles), memory));
    break;
  }
  return cycles;
}

} // namespace npu::sim
