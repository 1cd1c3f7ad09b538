// Pieces shared by the built-in backends. Internal to libnpu_rt.
#pragma once

#include "npu/mem/fault.h"
#include "npu/rt/backend.h"

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
  uint32_t cycleHighLatch = 0;

  uint32_t read(uint32_t offset, uint64_t cycles);
  // Returns true if the write was a RESET.
  bool write(uint32_t offset, uint32_t value);
  // Packets are waiting and the device may run.
  bool ready() const { return !halted && !faulted && ringEntries && head != tail; }
  uint64_t slotAddress(uint32_t index) const {
    return ringBase + uint64_t(index & (ringEntries - 1)) * 64;
  }
  void complete(bool wasHalt);
  void raise(const mem::Fault &f);
};

std::unique_ptr<Backend> makeIssBackend(const BackendOptions &options);
#ifdef NPU_HAVE_RTL
// The harness options: NPU_RTL_* from the environment, the waveform from `options`.
rtl::DeviceOptions rtlDeviceOptions(const BackendOptions &options);
std::unique_ptr<Backend> makeRtlBackend(const BackendOptions &options);
std::unique_ptr<Backend> makeCosimBackend(const BackendOptions &options);
#endif

} // namespace npu::rt
