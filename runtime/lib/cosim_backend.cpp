// The cosim backend: the ISS and the Verilated RTL run the same stream in
// lockstep from identical memory images. Host writes go to both memories;
// the driver's ring is served one packet at a time, the ISS executing it
// and the RTL getting a doorbell for exactly that packet. After each packet
// the outcomes are compared (completion, halt, or the same fault described
// the same way: class, operand, address, length, packet), then the bytes
// either side may have written: the union of the RTL's write set as its
// AXI slave saw it and the ISS's (the ranges its checks admitted for
// writing, which its semantics cannot leave), and, while the resident
// memory is small, every touched page. The first divergence stops the
// stream as a Divergence fault of that packet whose detail names the
// address, both values and their ulp distance; the differing bytes of both
// sides are dumped once to $NPU_COSIM_DUMP_DIR when it is set.
//
// Then every register a driver can read is compared, but the cycle counter.
// CSR reads answer from the ISS side (the architectural reference), cycle
// counters and statistics from the RTL; summary() sets ISS and RTL cycles
// side by side, per packet class.
#include "backends.h"

#include "npu/arith/ulp.h"
#include "npu/isa/isa.h"
#include "npu/mem/hex.h"
#include "npu/sim/checks.h"
#include "npu/sim/iss.h"
#include "npu_device.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

namespace npu::rt {

namespace {

using mem::fmt::hex;

// Below this much resident memory, every packet compares all touched pages.
constexpr uint64_t kFullCompareLimit = 16ull << 20;

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Distance in units in the last place between two binary32 patterns.
std::string ulpText(uint32_t a, uint32_t b) {
  if (arith::soft::isNan(a) && arith::soft::isNan(b))
    return "0 ulp (both NaN)";
  const uint64_t d = arith::ulpDistance(a, b);
  return d == arith::kUnorderedUlp ? "NaN vs number" : std::to_string(d) + " ulp";
}

class CosimBackend final : public Backend {
public:
  explicit CosimBackend(const BackendOptions &options)
      : issMemory_(options.addressMap), iss_(issMemory_, sim::Mode::Both, issMemoryTiming(options)),
        rtlMemory_(options.addressMap), device_(rtlMemory_, rtlDeviceOptions(options)) {
    csrs_.programRegions(options.addressMap);
    iss_.setRecording(true);
    device_.setRecording(true);
    device_.setAccessTracking(true);
  }

  std::string_view name() const override { return "cosim"; }

  void readMemory(uint64_t address, void *dst, uint64_t length) override {
    rtlMemory_.read(address, dst, length);
  }
  void writeMemory(uint64_t address, const void *src, uint64_t length) override {
    issMemory_.write(address, src, length);
    rtlMemory_.write(address, src, length);
  }
  void fillMemory(uint64_t address, uint8_t value, uint64_t length) override {
    issMemory_.fill(address, value, length);
    rtlMemory_.fill(address, value, length);
  }
  std::vector<mem::PhysicalMemory::RegionStats> memoryStats() const override {
    return rtlMemory_.stats();
  }
  void resetMemoryCounters() override {
    issMemory_.resetCounters();
    rtlMemory_.resetCounters();
  }

  uint32_t readCsr(uint32_t offset) override {
    using namespace isa::csr;
    if (offset == CYCLE_LO || offset == CYCLE_HI)
      return device_.readCsr(offset);
    return csrs_.read(offset, 0);
  }

  void writeCsr(uint32_t offset, uint32_t value) override {
    using namespace isa::csr;
    const bool reset = csrs_.write(offset, value);
    if (reset) {
      iss_.resetStats();
      device_.resetStats();
      hang_.reset();
      classes_.clear();
      worst_.reset();
    }
    // The RTL's tail is the cosim's business: one packet per doorbell.
    if (offset != RING_TAIL && !hang_)
      device_.writeCsr(offset, value);
  }

  void waitIdle() override {
    isa::Packet packet;
    while (csrs_.ready()) {
      const uint64_t index = csrs_.packets;
      issMemory_.read(csrs_.slotAddress(csrs_.head), packet.data(), packet.size());

      // Whether the driver has published the packet after this one.
      const bool nextPublished = csrs_.ringEntries >= 2 && csrs_.tail - csrs_.head >= 2;

      // The ISS.
      std::optional<mem::Fault> issFault;
      bool issHalted = false;
      try {
        issHalted = iss_.step(packet, index, nextPublished);
      } catch (const mem::DeviceFault &e) {
        issFault = e.fault();
      }

      // The RTL, for this packet only; the next one is published too (when
      // the driver has), so that the RTL may prefetch it as it would
      // outside co-simulation, but the RTL stops when this one ends.
      std::optional<mem::Fault> rtlFault;
      bool rtlHalted = false;
      try {
        device_.writeCsr(isa::csr::RING_TAIL, csrs_.head + (nextPublished ? 2 : 1));
        device_.runOnePacket();
        const uint32_t status = device_.readCsr(isa::csr::STATUS);
        rtlHalted = status & isa::csr::STATUS_HALTED;
        if (status & isa::csr::STATUS_FAULT)
          rtlFault = device_.fault();
      } catch (const rtl::HangError &e) {
        hang_ = e.fault();
        rtlFault = e.fault();
      }
      const std::vector<std::pair<uint64_t, uint64_t>> rtlReads = device_.takeReadBursts();

      std::string why = compareOutcomes(issFault, issHalted, rtlFault, rtlHalted);
      if (why.empty())
        why = compareMemory(packet);
      if (why.empty() && !issFault)
        why = checkReads(packet, csrs_.slotAddress(csrs_.head),
                         nextPublished ? std::optional(csrs_.slotAddress(csrs_.head + 1)) : std::nullopt,
                         rtlReads);
      accountCycles(index);
      if (why.empty()) {
        if (issFault)
          csrs_.raise(*issFault, packet);
        else
          csrs_.complete(issHalted);
        if (!hang_)
          why = compareRegisters();
      }
      if (!why.empty()) {
        diverge(index, packet, why);
        return;
      }
      if (issFault)
        return;
    }
  }

  void setRecording(bool enabled) override { recording_ = enabled; }
  sim::Stats stats() const override { return device_.stats(); }
  std::vector<sim::PacketRecord> takeRecords() override { return std::exchange(records_, {}); }

  // The ISS's fault, which the RTL's equals (else a Divergence fault).
  mem::Fault deviceFault() override { return csrs_.fault; }

  std::string summary() const override {
    std::ostringstream out;
    const uint64_t issTotal = iss_.stats().cycles, rtlTotal = device_.stats().cycles;
    out << "cosim cycles: iss " << issTotal << ", rtl " << rtlTotal;
    if (issTotal)
      out << " (rtl/iss " << std::fixed << std::setprecision(2)
          << double(rtlTotal) / double(issTotal) << ")";
    out << "\n  per op class:     packets   iss cycles   rtl cycles   mean |error|\n";
    for (const auto &[opcode, c] : classes_) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-16s %8" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14.1f\n",
                    isa::info(opcode).mnemonic, c.packets, c.issCycles, c.rtlCycles,
                    double(c.absError) / double(c.packets));
      out << line;
    }
    if (worst_)
      out << "  largest packet error: packet " << worst_->index << " ("
          << isa::info(worst_->opcode).mnemonic << "), iss " << worst_->issCycles << ", rtl "
          << worst_->rtlCycles << "\n";
    return out.str();
  }

private:
  struct ClassCycles {
    uint64_t packets = 0, issCycles = 0, rtlCycles = 0, absError = 0;
  };
  struct WorstPacket {
    uint64_t index;
    isa::Opcode opcode;
    uint64_t issCycles, rtlCycles, error;
  };

  static std::string describeOutcome(const std::optional<mem::Fault> &fault, bool halted) {
    if (fault)
      return "fault \"" + fault->describe() + "\"";
    return halted ? "halt" : "completed";
  }

  // Both completed (or halted), or both faulted with the same description.
  static std::string compareOutcomes(const std::optional<mem::Fault> &iss, bool issHalted,
                                     const std::optional<mem::Fault> &rtl, bool rtlHalted) {
    const bool same = iss.has_value() == rtl.has_value() && issHalted == rtlHalted &&
                      (!iss || iss->describe() == rtl->describe());
    if (same)
      return {};
    return "outcome differs: ISS " + describeOutcome(iss, issHalted) + ", RTL " +
           describeOutcome(rtl, rtlHalted);
  }

  // Consecutive bursts coalesce into one range even where they cross from
  // one region into the next (an operand ending exactly where the next
  // region begins); memory is read region by region.
  std::vector<std::pair<uint64_t, uint64_t>>
  splitAtRegions(const std::vector<std::pair<uint64_t, uint64_t>> &ranges) const {
    std::vector<std::pair<uint64_t, uint64_t>> pieces;
    for (auto [address, length] : ranges)
      while (length != 0) {
        const mem::Region *region = issMemory_.map().find(address);
        const uint64_t piece =
            region ? std::min(length, region->size - (address - region->base)) : length;
        pieces.emplace_back(address, piece);
        address += piece;
        length -= piece;
      }
    return pieces;
  }

  // The ranges to compare: the union of both write sets (the RTL's as its
  // slave saw it, the ISS's from its checks of `packet`), and with little
  // resident memory everything resident on either side.
  std::string compareMemory(const isa::Packet &packet) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges = device_.takeWrittenRanges();
    sim::OperandRanges operands;
    if (sim::checkPacket(packet, issMemory_.map(), operands).code == mem::FaultCode::None)
      for (const sim::OperandRange &r : operands)
        if (r.accessed && mem::includes(r.access, mem::Access::Write))
          ranges.emplace_back(r.address, r.bytes);
    uint64_t resident = 0;
    for (const auto &r : issMemory_.stats())
      resident += r.residentBytes;
    if (resident <= kFullCompareLimit) {
      for (const auto &r : issMemory_.touchedRanges())
        ranges.push_back(r);
      for (const auto &r : rtlMemory_.touchedRanges())
        ranges.push_back(r);
    }
    std::vector<uint8_t> a, b;
    for (const auto &[address, length] : splitAtRegions(ranges)) {
      a.resize(length);
      b.resize(length);
      issMemory_.read(address, a.data(), length);
      rtlMemory_.read(address, b.data(), length);
      if (a == b)
        continue;
      size_t first = 0;
      while (a[first] == b[first])
        ++first;
      size_t last = length;
      while (a[last - 1] == b[last - 1])
        --last;
      dump(address + first, a.data() + first, b.data() + first, last - first);
      // Report the aligned word holding the first differing byte.
      const uint64_t at = (address + first) & ~uint64_t(3);
      uint32_t issWord = 0, rtlWord = 0;
      issMemory_.read(at, &issWord, 4);
      rtlMemory_.read(at, &rtlWord, 4);
      char text[256];
      std::snprintf(text, sizeof text,
                    "memory differs at %s: ISS 0x%08x (%.9g), RTL 0x%08x (%.9g), %s; %zu bytes "
                    "differ in [%s, %s)",
                    hex(at).c_str(), issWord, floatOf(issWord), rtlWord, floatOf(rtlWord),
                    ulpText(issWord, rtlWord).c_str(), last - first, hex(address + first).c_str(),
                    hex(address + last).c_str());
      return text;
    }
    return {};
  }

  // A read past the packet's operands changes no memory, so the comparison
  // above cannot see it, yet it is a bug: it may fault where the ISA says the
  // packet completes, or disturb what sits behind the bus.
  // `next`: the next packet's slot, which the RTL may prefetch.
  std::string checkReads(const isa::Packet &packet, uint64_t slot, std::optional<uint64_t> next,
                         std::vector<std::pair<uint64_t, uint64_t>> bursts) const {
    if (next)
      std::erase_if(bursts, [&](const std::pair<uint64_t, uint64_t> &b) {
        return b.first >= *next && b.first + b.second <= *next + isa::kPacketBytes;
      });
    const std::optional<uint64_t> beat =
        rtl::beatOutsideOperands(packet, issMemory_.map(), slot, bursts);
    if (!beat)
      return {};
    return "the RTL read the beat at " + hex(*beat) + ", which holds no byte the packet reads";
  }

  // Both sides' differing bytes, once per run, into $NPU_COSIM_DUMP_DIR.
  void dump(uint64_t address, const uint8_t *iss, const uint8_t *rtl, size_t length) {
    const char *dir = std::getenv("NPU_COSIM_DUMP_DIR");
    if (!dir || dumped_)
      return;
    dumped_ = true;
    const std::string base = std::string(dir) + "/cosim-" + hex(address);
    std::ofstream(base + "-iss.bin", std::ios::binary)
        .write(reinterpret_cast<const char *>(iss), static_cast<std::streamsize>(length));
    std::ofstream(base + "-rtl.bin", std::ios::binary)
        .write(reinterpret_cast<const char *>(rtl), static_cast<std::streamsize>(length));
  }

  void accountCycles(uint64_t index) {
    const std::vector<sim::PacketRecord> issRecords = iss_.takeRecords();
    std::vector<sim::PacketRecord> rtlRecords = device_.takeRecords();
    if (issRecords.empty() || rtlRecords.empty())
      return; // a faulting packet has no record
    const sim::PacketRecord &i = issRecords.back(), &r = rtlRecords.back();
    ClassCycles &c = classes_[i.opcode];
    const uint64_t issCycles = i.endCycle - i.startCycle, rtlCycles = r.endCycle - r.startCycle;
    c.packets++;
    c.issCycles += issCycles;
    c.rtlCycles += rtlCycles;
    const uint64_t error = issCycles > rtlCycles ? issCycles - rtlCycles : rtlCycles - issCycles;
    c.absError += error;
    if (!worst_ || error > worst_->error)
      worst_ = WorstPacket{index, i.opcode, issCycles, rtlCycles, error};
    if (recording_) {
      records_.push_back(r);
      records_.back().index = index;
      records_.back().predicted = {issCycles, i.bytesRead, i.bytesWritten, i.bytesExact};
    }
  }

  // Every register a driver can read, the RTL's against the architectural
  // model's, once the packet is accounted for: a fault is described the same
  // way only if every field agrees (FAULT_LENGTH, FAULT_OPERAND's spare
  // bits), and the constants (ID, HW_CONFIG) and the region table read as
  // the ISA says. Not compared: the cycle counter (the RTL's own time),
  // RING_TAIL (the RTL gets one packet per doorbell) and STATUS.BUSY (so the
  // RTL is idle after each packet while the driver's ring is not).
  std::string compareRegisters() {
    using namespace isa::csr;
    for (const Register &r : kRegisters) {
      if (!r.readable || r.offset == CYCLE_LO || r.offset == CYCLE_HI || r.offset == RING_TAIL)
        continue;
      const uint32_t compared = r.offset == STATUS ? ~STATUS_BUSY : ~0u;
      const uint32_t iss = csrs_.read(r.offset, 0) & compared;
      const uint32_t rtl = device_.readCsr(r.offset) & compared;
      if (iss != rtl) {
        char text[160];
        std::snprintf(text, sizeof text, "register %s (0x%03x) differs: ISS 0x%08x, RTL 0x%08x",
                      r.name, r.offset, iss, rtl);
        return text;
      }
    }
    return {};
  }

  // The runtime's report adds the stream index and the disassembly.
  void diverge(uint64_t index, const isa::Packet &packet, const std::string &why) {
    mem::Fault f;
    f.code = mem::FaultCode::Divergence;
    f.packetIndex = static_cast<int64_t>(index);
    f.detail = why;
    csrs_.raise(f, packet);
  }

  mem::PhysicalMemory issMemory_;
  sim::Iss iss_;
  CsrFile csrs_;
  mem::PhysicalMemory rtlMemory_;
  rtl::Device device_;
  std::optional<mem::Fault> hang_;
  bool dumped_ = false;
  bool recording_ = false;
  std::vector<sim::PacketRecord> records_;
  std::map<isa::Opcode, ClassCycles> classes_;
  std::optional<WorstPacket> worst_;
};

} // namespace

std::unique_ptr<Backend> makeCosimBackend(const BackendOptions &options) {
  return std::make_unique<CosimBackend>(options);
}

} // namespace npu::rt
