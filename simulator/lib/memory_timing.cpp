#include "npu/sim/memory_timing.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace npu::sim {

void MemoryTiming::validate() const {
  if (bytesPerCycle == 0 || bytesPerCycle > isa::hw::kAxiDataBytes ||
      (bytesPerCycle & (bytesPerCycle - 1)))
    throw std::invalid_argument("memory data width of " + std::to_string(bytesPerCycle) +
                                " bytes per cycle: must be a power of two from 1 to " +
                                std::to_string(isa::hw::kAxiDataBytes) + " (the AXI data width)");
  if (stallPercent >= 100)
    throw std::invalid_argument("wait-state percentage " + std::to_string(stallPercent) +
                                ": must be below 100 (the memory would never answer)");
}

std::string MemoryTiming::describe() const {
  return "latency " + std::to_string(latency) + ", " + std::to_string(bytesPerCycle) +
         " B/cycle, " + std::to_string(stallPercent) + "% wait states";
}

MemoryTiming MemoryTiming::fromEnvironment() {
  MemoryTiming t;
  t.latency = static_cast<unsigned>(environmentNumber("NPU_RTL_LATENCY", t.latency, UINT32_MAX));
  t.bytesPerCycle =
      static_cast<unsigned>(environmentNumber("NPU_RTL_MEM_WIDTH", t.bytesPerCycle, UINT32_MAX));
  t.stallPercent = static_cast<unsigned>(environmentNumber("NPU_RTL_STALL_PERCENT", 0, UINT32_MAX));
  t.validate();
  return t;
}

uint64_t environmentNumber(const char *name, uint64_t fallback, uint64_t max) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (*end || *text == '-' || *text == '+' || std::isspace(static_cast<unsigned char>(*text)))
    throw std::invalid_argument(std::string(name) + "='" + text +
                                "' is not a non-negative integer");
  if (errno == ERANGE || value > max)
    throw std::invalid_argument(std::string(name) + "='" + text + "' is out of range (at most " +
                                std::to_string(max) + ")");
  return value;
}

} // namespace npu::sim
