// The cycle model: each packet occupies the machine from fetch to the end
// of its engine's work; packets do not overlap (the RTL executes one packet
// at a time). Parameters come from isa/hardware.td and the per-instruction
// costs in the .td, so the ISS and the RTL describe one machine.
#pragma once

#include "context.h"

namespace npu::sim {

// Cycles for an AXI transfer of `bytes`: one latency per burst plus one
// beat per bus width.
uint64_t memoryCycles(uint64_t bytes);

uint64_t packetCycles(const isa::InstrInfo &info, const Work &work);

} // namespace npu::sim
