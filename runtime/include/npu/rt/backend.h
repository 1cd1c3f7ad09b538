// The device as a driver sees it: host access to its memory, its CSR
// window, and the chance to run. The iss, rtl and cosim backends implement
// exactly this; nothing here knows how a backend computes.
#pragma once

#include "npu/mem/address_map.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/iss.h"
#include "npu/sim/memory_timing.h"
#include "npu/sim/profile.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npu::rt {

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // Host DMA into and out of device memory. Faults throw mem::DeviceFault.
  virtual void readMemory(uint64_t address, void *dst, uint64_t length) = 0;
  virtual void writeMemory(uint64_t address, const void *src, uint64_t length) = 0;
  virtual void fillMemory(uint64_t address, uint8_t value, uint64_t length) = 0;
  // Bytes read and written per region, and residency.
  virtual std::vector<mem::PhysicalMemory::RegionStats> memoryStats() const = 0;
  virtual void resetMemoryCounters() = 0;

  // The AXI4-Lite register window (offsets from isa::csr).
  virtual uint32_t readCsr(uint32_t offset) = 0;
  virtual void writeCsr(uint32_t offset, uint32_t value) = 0;

  // Lets the device run until the ring is empty, or it halted or faulted.
  virtual void waitIdle() = 0;

  // Profiling since the last RESET: aggregate statistics always, one record
  // per packet while recording is on (indices count from the RESET).
  virtual void setRecording(bool enabled) = 0;
  virtual sim::Stats stats() const = 0;
  virtual std::vector<sim::PacketRecord> takeRecords() = 0;

  // The fault the device stopped at (STATUS.FAULT is set), described
  // completely: every backend describes the same fault of the same packet
  // with the same text (npu/sim/checks.h, describeFault). packetIndex counts
  // from the last RESET.
  virtual mem::Fault deviceFault() = 0;

  // A human-readable report on the run since the last RESET beyond the
  // statistics (cosim: ISS and RTL cycles side by side), or empty.
  virtual std::string summary() const { return {}; }
};

// FST keeps the RTL's enumerations (opcode and state names); VCD is
// converted from it.
enum class WaveformFormat { Vcd, Fst };

struct BackendOptions {
  mem::AddressMap addressMap = mem::AddressMap::defaults();
  // For backends built on the ISS: values only, cycles only, or both.
  sim::Mode issMode = sim::Mode::Both;
  // The memory behind the device, for the RTL harness and the ISS's cycle
  // model alike (unset: sim::MemoryTiming::fromEnvironment()).
  std::optional<sim::MemoryTiming> memoryTiming;
  // For backends built on the RTL: a waveform of the clock cycles
  // [waveformStart, waveformStop) when the path is set (else $NPU_RTL_VCD
  // or $NPU_RTL_FST), in VCD or FST (docs/rtl.md, "Waveforms").
  std::string waveformPath;
  WaveformFormat waveformFormat = WaveformFormat::Vcd;
  uint64_t waveformStart = 0;
  uint64_t waveformStop = UINT64_MAX;
};

using BackendFactory = std::function<std::unique_ptr<Backend>(const BackendOptions &)>;

// Backends register themselves by name; createBackend throws
// std::invalid_argument listing the available names for an unknown one.
void registerBackend(std::string name, BackendFactory factory);
std::vector<std::string> availableBackends();
std::unique_ptr<Backend> createBackend(std::string_view name, const BackendOptions &options = {});

} // namespace npu::rt
