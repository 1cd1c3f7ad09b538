// The rtl backend: the Verilated npu_top behind the Backend interface. Host
// DMA goes straight to the memory its AXI slave serves; CSR accesses are
// AXI4-Lite transactions; waitIdle clocks the model until the ring is
// empty, it halted or faulted. A hang (no progress within the cycle budget)
// resets the model and is reported as a Timeout fault of the packet in
// flight until the next CONTROL.RESET. An index out of range is described
// as the ISS describes it (the index, its position, the table's rows), from
// the faulting packet in the ring and the index at FAULT_ADDR.
#include "backends.h"

#include "npu/isa/isa.h"
#include "npu_device.h"

#include <cstring>
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
      diagnostic_.clear();
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
      return;
    }
    diagnostic_.clear();
    using namespace isa::csr;
    if ((device_.readCsr(STATUS) & STATUS_FAULT) &&
        static_cast<mem::FaultCode>(device_.readCsr(ERROR_CODE)) == mem::FaultCode::IndexOutOfRange)
      diagnostic_ = describeIndexFault();
  }

  void setRecording(bool enabled) override { device_.setRecording(enabled); }
  sim::Stats stats() const override { return device_.stats(); }
  std::vector<sim::PacketRecord> takeRecords() override { return device_.takeRecords(); }

  std::string faultDiagnostic() const override { return hang_ ? hang_->detail : diagnostic_; }

private:
  uint64_t readCsr64(uint32_t lo, uint32_t hi) {
    return device_.readCsr(lo) | uint64_t(device_.readCsr(hi)) << 32;
  }

  // "index V at position T is outside [0, ROWS)" for the EMBEDDING or
  // EMBEDDING_BWD packet that faulted, whose index the RTL found at FAULT_ADDR.
  std::string describeIndexFault() {
    using namespace isa::csr;
    const uint64_t base = readCsr64(RING_BASE_LO, RING_BASE_HI);
    const uint32_t entries = device_.readCsr(RING_ENTRIES);
    const uint64_t packetIndex = readCsr64(FAULT_PACKET_LO, FAULT_PACKET_HI);
    const uint64_t address = readCsr64(FAULT_ADDR_LO, FAULT_ADDR_HI);
    isa::Packet packet;
    memory_.read(base + (packetIndex & (entries - 1)) * isa::kPacketBytes, packet.data(),
                 packet.size());
    uint64_t indices = 0, rows = 0;
    isa::IndexType itype = isa::IndexType::i32;
    uint32_t opcode;
    std::memcpy(&opcode, packet.data(), 4);
    if (opcode == static_cast<uint32_t>(isa::Opcode::EMBEDDING)) {
      const auto op = isa::inst::Embedding::fromPacket(packet.data());
      indices = op.indices, rows = op.rows, itype = op.itype;
    } else if (opcode == static_cast<uint32_t>(isa::Opcode::EMBEDDING_BWD)) {
      const auto op = isa::inst::EmbeddingBwd::fromPacket(packet.data());
      indices = op.indices, rows = op.rows, itype = op.itype;
    } else {
      return {};
    }
    const unsigned width = itype == isa::IndexType::i64 ? 8 : 4;
    int64_t index = 0;
    if (width == 8) {
      memory_.read(address, &index, 8);
    } else {
      int32_t narrow;
      memory_.read(address, &narrow, 4);
      index = narrow;
    }
    return "index " + std::to_string(index) + " at position " +
           std::to_string((address - indices) / width) + " is outside [0, " + std::to_string(rows) +
           ")";
  }

  mem::PhysicalMemory memory_;
  rtl::Device device_;
  std::optional<mem::Fault> hang_;
  std::string diagnostic_; // of the fault the device stopped at
};

} // namespace

rtl::DeviceOptions rtlDeviceOptions(const BackendOptions &options) {
  rtl::DeviceOptions o = rtl::DeviceOptions::fromEnvironment();
  if (!options.waveformPath.empty()) {
    o.waveformPath = options.waveformPath;
    o.waveformStart = options.waveformStart;
    o.waveformStop = options.waveformStop;
  }
  return o;
}

std::unique_ptr<Backend> makeRtlBackend(const BackendOptions &options) {
  return std::make_unique<RtlBackend>(options);
}

} // namespace npu::rt
