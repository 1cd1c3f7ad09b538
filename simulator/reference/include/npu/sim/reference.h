// The slow reference implementation of the ISA (the ISS tests and
// npu-regress --backend reference compare the ISS with it).
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/physical_memory.h"

#include <span>

namespace npu::sim::reference {

// Executes one (valid, non-faulting) packet on `memory`.
void execute(mem::PhysicalMemory &memory, std::span<const uint8_t, isa::kPacketBytes> packet);

} // namespace npu::sim::reference
