// The slow reference implementation of the ISA (the ISS tests and
// npu-regress --backend reference compare the ISS with it).
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/physical_memory.h"

#include <span>

namespace npu::sim::reference {

// Executes one (valid, non-faulting) packet on `memory`.
void execute(mem::PhysicalMemory &memory, std::span<const uint8_t, isa::kPacketBytes> packet);

// One element converted from type `from` to type `to` (docs/types.md §3, the
// element function of `cast`): `storage` holds the element's bytes,
// little-endian, in its low bits; so does the result. Floats are read as
// the lanes read them (bf16 and f16 widened exactly, then a denormal is a
// zero and every NaN the canonical NaN, docs/arith.md §1.1) and stored with
// one rounding from binary32, as the streams store them (§2).
uint64_t castElement(isa::DType from, isa::DType to, uint64_t storage);

} // namespace npu::sim::reference
