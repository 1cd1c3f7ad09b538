// Pieces shared by the built-in backends. Internal to libnpu_rt.
#pragma once

#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"
#include "npu/rt/backend.h"

#include "npu/isa/isa.h"

#include <array>
#include <cstdint>
#include <memory>

#ifdef NPU_HAVE_RTL
#include "npu_device.h"
#endif

namespace npu::rt {

// The register state of a device's command processor (isa/csr.td), for
// backends whose device is modelled in C++. The RTL has its own in Verilog.
struct CsrFile {
  uint64_t ringBase = 0;
  uint32_t ringEntries = 0;
  uint32_t tail = 0;
  uint32_t head = 0;
  uint64_t packets = 0; // completed since reset
  bool halted = false;
  bool faulted = false;
  mem::Fault fault;
  uint32_t faultOperands = 0; // FAULT_OPERAND
  uint32_t cycleHighLatch = 0;
  // The region table's registers. These backends check operands against
  // their address map, which is what the table holds once programmed.
  struct RegionEntry {
    uint64_t base = 0, size = 0;
    uint32_t access = 0;
  };
  uint32_t regionSelect = 0;
  std::array<RegionEntry, isa::hw::kRegionEntries> regions{};

  uint32_t read(uint32_t offset, uint64_t cycles);
  // Returns true if the write was a RESET.
  bool write(uint32_t offset, uint32_t value);
  // Packets are waiting and the device may run.
  bool ready() const { return !halted && !faulted && ringEntries && head != tail; }
  uint64_t slotAddress(uint32_t index) const {
    return ringBase + uint64_t(index & (ringEntries - 1)) * 64;
  }
  void complete(bool wasHalt);
  // The fault of `packet`; FAULT_OPERAND names its operands by their index.
  void raise(const mem::Fault &f, std::span<const uint8_t, isa::kPacketBytes> packet);
  RegionEntry &selectedRegion() { return regions[regionSelect]; }
  // The region table as the RTL's boot programming leaves it: every region
  // of `map` with what the engines may do there (rtl::Device does the same
  // through its registers).
  void programRegions(const mem::AddressMap &map);
};

std::unique_ptr<Backend> makeIssBackend(const BackendOptions &options);
// The memory the ISS's cycle model charges: `options`' or the environment's.
sim::MemoryTiming issMemoryTiming(const BackendOptions &options);
#ifdef NPU_HAVE_RTL
// The harness options: NPU_RTL_* from the environment, the memory timing and
// the waveform from `options` when set.
rtl::DeviceOptions rtlDeviceOptions(const BackendOptions &options);
std::unique_ptr<Backend> makeRtlBackend(const BackendOptions &options);
std::unique_ptr<Backend> makeCosimBackend(const BackendOptions &options);
#endif
#ifdef NPU_HAVE_REMOTE
// A device on an npu-server (NPU_REMOTE, runtime/remote/remote_backend.h).
std::unique_ptr<Backend> makeRemoteBackend(const BackendOptions &options);
#endif

} // namespace npu::rt
