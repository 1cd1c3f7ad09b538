// The slow reference implementation of the ISA for ISS tests.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/physical_memory.h"

#include <span>

namespace npu::sim::reference {

// Executes one (valid, non-faulting) packet on `memory`.
void execute(mem::PhysicalMemory &memory, std::span<const uint8_t, isa::kPacketBytes> packet);

} // namespace npu::sim::reference
