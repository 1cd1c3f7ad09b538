// The iss backend: a device model whose command processor consumes the ring
// in device memory through the CSR window, executing each packet on the ISS.
#include "backends.h"

#include "npu/isa/isa.h"
#include "npu/sim/iss.h"

namespace npu::rt {

namespace {

class IssBackend final : public Backend {
public:
  explicit IssBackend(const BackendOptions &options)
      : memory_(options.addressMap), iss_(memory_, options.issMode, issMemoryTiming(options)) {
    csrs_.programRegions(options.addressMap);
  }

  std::string_view name() const override { return "iss"; }

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

  uint32_t readCsr(uint32_t offset) override { return csrs_.read(offset, iss_.cycle()); }
  void writeCsr(uint32_t offset, uint32_t value) override {
    if (csrs_.write(offset, value))
      iss_.resetStats();
  }

  void setRecording(bool enabled) override { iss_.setRecording(enabled); }
  sim::Stats stats() const override { return iss_.stats(); }
  std::vector<sim::PacketRecord> takeRecords() override { return iss_.takeRecords(); }

  mem::Fault deviceFault() override { return csrs_.fault; }

  void waitIdle() override {
    isa::Packet packet{};
    while (csrs_.ready()) {
      const uint64_t slotAddress = csrs_.slotAddress(csrs_.head);
      try {
        memory_.read(slotAddress, packet.data(), packet.size());
        const bool nextQueued = csrs_.ringEntries >= 2 && csrs_.tail - csrs_.head >= 2;
        const bool halted = iss_.step(packet, csrs_.packets, nextQueued);
        csrs_.complete(halted);
      } catch (const mem::DeviceFault &e) {
        // A ring the device cannot read is a fault of the packet it was fetching.
        mem::Fault fault = e.fault();
        fault.packetIndex = static_cast<int64_t>(csrs_.packets);
        csrs_.raise(fault, packet);
      }
    }
  }

private:
  mem::PhysicalMemory memory_;
  sim::Iss iss_;
  CsrFile csrs_;
};

} // namespace

sim::MemoryTiming issMemoryTiming(const BackendOptions &options) {
  if (!options.memoryTiming)
    return sim::MemoryTiming::fromEnvironment();
  options.memoryTiming->validate();
  return *options.memoryTiming;
}

std::unique_ptr<Backend> makeIssBackend(const BackendOptions &options) {
  return std::make_unique<IssBackend>(options);
}

} // namespace npu::rt
