// The cycle model of the DMA engine's gathers (COPY_STRIDED, EMBEDDING):
// rtl/npu_dma.sv on the memory port (npu_mem_port.sv, npu_mem_bursts.sv)
// and the harness's memory, stepped cycle by cycle. Internal to libnpu_iss;
// timing.cpp charges COPY and FILL in closed form and the gathers with this.
#pragma once

#include "context.h"
#include "npu/sim/memory_timing.h"

#include <cstdint>

namespace npu::sim {

// The cycles from the DMA engine's start to its done for the gather of
// work.runs into work.writeAddress; wait states are charged their expected
// number.
uint64_t gatherCycles(const Work &work, const MemoryTiming &memory);

} // namespace npu::sim
