// The memory behind the NPU's AXI port, as both timing models see it: the
// RTL harness serves the bus with it, and the ISS's cycle model charges it.
// One description, read from one set of environment variables, so that
// `npu-sim --mode perf` predicts what `--backend rtl` measures under the
// same settings.
#pragma once

#include "npu/isa/isa.h"

#include <cstdint>
#include <string>

namespace npu::sim {

struct MemoryTiming {
  // Cycles from an accepted read or write burst to its first data beat or
  // its response.
  unsigned latency = isa::hw::kMemLatency;
  // Data width of the memory in bytes per cycle: a power of two up to the
  // AXI data width; a beat then takes (AXI width / bytesPerCycle) cycles.
  unsigned bytesPerCycle = isa::hw::kAxiDataBytes;
  // Percentage of cycles in which the memory withholds a ready or valid
  // signal (wait states). The ISS charges their expected cost.
  unsigned stallPercent = 0;

  // Cycles one AXI beat occupies the memory's data path.
  unsigned beatCycles() const { return isa::hw::kAxiDataBytes / bytesPerCycle; }

  // Throws std::invalid_argument naming the field and the allowed values.
  void validate() const;
  std::string describe() const;

  // The defaults (isa/hardware.td), overridden by NPU_RTL_LATENCY,
  // NPU_RTL_MEM_WIDTH and NPU_RTL_STALL_PERCENT; validated.
  static MemoryTiming fromEnvironment();
};

// $name as a non-negative integer (decimal, 0x hex or 0 octal) up to `max`,
// or `fallback` when unset or empty; std::invalid_argument naming the
// variable otherwise.
uint64_t environmentNumber(const char *name, uint64_t fallback, uint64_t max = UINT64_MAX);

} // namespace npu::sim
