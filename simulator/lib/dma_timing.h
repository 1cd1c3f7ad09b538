// The cycle model of the DMA engine's gathers (COPY_STRIDED, EMBEDDING):
// rtl/npu_dma.sv on the memory port (npu_mem_port.sv, npu_mem_bursts.sv)
// and the harness's memory, stepped cycle by cycle. Internal to libnpu_iss;
// timing.cpp charges COPY and FILL in closed form and the gathers with this.
#pragma once

#include "context.h"
#include "npu/sim/memory_timing.h"

#include <algorithm>
#include <cstdint>

namespace npu::sim {

// The beats of the burst that starts at beat `beatAddress` (a byte address
// on a beat) with `beatsLeft` beats of its run to go, as the memory port
// splits runs (npu_mem_bursts.sv): at most HW_AXI_MAX_BURST beats and never
// across a 4 KiB page.
inline uint64_t burstBeats(uint64_t beatAddress, uint64_t beatsLeft) {
  constexpr uint64_t kBeat = isa::hw::kAxiDataBytes, kPageBeats = 4096 / kBeat;
  return std::min(
      {beatsLeft, uint64_t(isa::hw::kAxiMaxBurst), kPageBeats - beatAddress / kBeat % kPageBeats});
}

// The cycles from the DMA engine's start to its done for the gather of
// work.runs into work.writeAddress; wait states are charged their expected
// number.
uint64_t gatherCycles(const Work &work, const MemoryTiming &memory);

} // namespace npu::sim
