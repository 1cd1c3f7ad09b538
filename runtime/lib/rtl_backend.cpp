// The rtl backend: the Verilated npu_top behind the Backend interface. Host
// DMA goes straight to the memory its AXI slave serves; CSR accesses are
// AXI4-Lite transactions; waitIdle clocks the model until the ring is
// empty, it halted or faulted. A hang (no progress within the cycle budget)
// resets the model and is reported as a Timeout fault of the packet in
// flight until the next CONTROL.RESET. A fault is described from the
// device's fault registers as the ISS describes it (rtl::Device::fault).
#include "backends.h"

#include "npu/isa/isa.h"
#include "npu_device.h"

#include <optional>

namespace npu::rt {

namespace {

class RtlBackend final : public Backend {
public:
  explicit RtlBackend(const BackendOptions &options)
      : memory_(options.addressMap), device_(memory_, rtlDeviceOptions(options)) {}

  std::string_view name() const override { return "rtl"; }

  void readMemory(uint64_t address, void *dst, uint64_t length) override {
    memory_.read(address, dst, length);
  }
  void writeMemory(uint64_t address, const void *src, uint64_t length) override {
    memory_.write(address, src, length);
  }
  void fillMemory(uint64_t address, uint8_t value, uint64_t length) override {
    memory_.fill(address, value, length);
  }
  std::vector<mem::PhysicalMemory::RegionStats> memoryStats() const override {
    return memory_.stats();
  }
  void resetMemoryCounters() override { memory_.resetCounters(); }

  uint32_t readCsr(uint32_t offset) override {
    if (hang_) {
      // The model was reset by the hang; the registers describe the hang
      // until the driver resets the device.
      using namespace isa::csr;
      switch (offset) {
      case STATUS: return STATUS_FAULT;
      case ERROR_CODE: return static_cast<uint32_t>(hang_->code);
      case FAULT_PACKET_LO: return static_cast<uint32_t>(hang_->packetIndex);
      case FAULT_PACKET_HI: return static_cast<uint32_t>(uint64_t(hang_->packetIndex) >> 32);
      default: break;
      }
    }
    return device_.readCsr(offset);
  }

  void writeCsr(uint32_t offset, uint32_t value) override {
    if (offset == isa::csr::CONTROL && (value & isa::csr::CONTROL_RESET)) {
      hang_.reset();
      device_.resetStats();
    }
    device_.writeCsr(offset, value);
  }

  void waitIdle() override {
    if (hang_)
      return;
    try {
      device_.runUntilIdle();
    } catch (const rtl::HangError &e) {
      hang_ = e.fault();
    }
  }

  void setRecording(bool enabled) override { device_.setRecording(enabled); }
  sim::Stats stats() const override { return device_.stats(); }
  std::vector<sim::PacketRecord> takeRecords() override { return device_.takeRecords(); }

  mem::Fault deviceFault() override { return hang_ ? *hang_ : device_.fault(); }

private:
  mem::PhysicalMemory memory_;
  rtl::Device device_;
  std::optional<mem::Fault> hang_;
};

} // namespace

rtl::DeviceOptions rtlDeviceOptions(const BackendOptions &options) {
  rtl::DeviceOptions o = rtl::DeviceOptions::fromEnvironment();
  if (options.memoryTiming) {
    options.memoryTiming->validate();
    o.memoryLatency = options.memoryTiming->latency;
    o.memoryWidth = options.memoryTiming->bytesPerCycle;
    o.stallPercent = options.memoryTiming->stallPercent;
  }
  if (!options.waveformPath.empty()) {
    o.waveformPath = options.waveformPath;
    o.waveformFormat = options.waveformFormat == WaveformFormat::Fst ? rtl::WaveformFormat::Fst
                                                                     : rtl::WaveformFormat::Vcd;
    o.waveformStart = options.waveformStart;
    o.waveformStop = options.waveformStop;
  }
  return o;
}

std::unique_ptr<Backend> makeRtlBackend(const BackendOptions &options) {
  return std::make_unique<RtlBackend>(options);
}

} // namespace npu::rt
