// The cycle model: the RTL's microarchitecture (rtl/*.sv, docs/rtl.md) as
// counts of its state machines' cycles and of its memory requests, from the
// packet's operands alone (never its data), under the memory timing the RTL
// harness uses. docs/simulator.md gives the formulas and their measured
// error against the RTL.
#pragma once

#include "context.h"
#include "npu/sim/memory_timing.h"

namespace npu::sim {

uint64_t packetCycles(const isa::Instruction &decoded, const Work &work, const MemoryTiming &memory);

} // namespace npu::sim
