#include "timing.h"

namespace npu::sim {

namespace {
uint64_t ceilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
} // namespace

uint64_t memoryCycles(uint64_t bytes) {
  if (bytes == 0)
    return 0;
  const uint64_t beats = ceilDiv(bytes, isa::hw::kAxiDataBytes);
  const uint64_t bursts = ceilDiv(beats, isa::hw::kAxiMaxBurst);
  return bursts * isa::hw::kMemLatency + beats;
}

uint64_t packetCycles(const isa::InstrInfo &info, const Work &work) {
  uint64_t cycles = isa::hw::kFetchCycles + info.setupCycles;
  const uint64_t memory = memoryCycles(work.bytesRead) + memoryCycles(work.bytesWritten);
  switch (info.engine) {
  case isa::Engine::Control:
    break;
  case isa::Engine::Dma:
    cycles += memory + ceilDiv(work.elements, isa::hw::kVectorLanes) * info.perElementCycles;
    break;
  case isa::Engine::Matrix: {
    // Each T x T output tile streams K operand pairs through the array and
    // then drains its diagonal wavefront (T cycles).
    const uint64_t tiles = ceilDiv(work.m, isa::hw::kMatrixTile) *
                           ceilDiv(work.n, isa::hw::kMatrixTile) * work.batch;
    cycles += tiles * (work.k + isa::hw::kMatrixTile) + memory;
    break;
  }
  case isa::Engine::Vector:
    cycles += ceilDiv(work.elements, isa::hw::kVectorLanes) * info.perElementCycles + memory;
    break;
  }
  return cycles;
}

} // namespace npu::sim
