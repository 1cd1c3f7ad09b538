#include "npu_device.h"

#include "Vnpu_top.h"
#include "npu/isa/isa.h"
#include "npu/sim/checks.h"
#include "npu/sim/memory_timing.h"

#include <verilated.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

namespace npu::rtl {

namespace {

constexpr unsigned kBeatBytes = isa::hw::kAxiDataBytes;
constexpr unsigned kBeatWords = kBeatBytes / 4;
constexpr uint8_t kRespOkay = 0;
constexpr uint8_t kRespSlaveError = 2;

// One burst accepted on AR or AW.
struct Burst {
  uint64_t address = 0;
  unsigned beats = 0;
  unsigned done = 0;
  uint64_t readyCycle = 0; // first data beat (reads) or response (writes) not before
  mem::FaultCode fault = mem::FaultCode::None;
  std::optional<std::array<uint8_t, kBeatBytes>> beat; // the read beat on offer
};

// The AXI4-Lite transaction a CSR access is driving.
struct LiteAccess {
  bool active = false;
  bool write = false;
  uint32_t offset = 0;
  uint32_t data = 0;
  bool addressDone = false;
  bool done = false;
};

const char *opcodeName(uint32_t opcode) {
  const isa::InstrInfo *info = isa::findOpcode(opcode);
  return info ? info->mnemonic : "?";
}

[[noreturn]] void violation(uint64_t cycle, const std::string &rule) {
  throw AxiProtocolError("AXI protocol violation at cycle " + std::to_string(cycle) + ": " + rule);
}

bool samePayload(const AxiAddress &a, const AxiAddress &b) {
  return a.addr == b.addr && a.len == b.len && a.size == b.size && a.burst == b.burst;
}

void validate(const DeviceOptions &o) {
  o.memoryTiming().validate();
  if (o.hangCycles == 0)
    throw std::invalid_argument("hang budget of 0 cycles: must be at least 1");
  if (o.waveformStart > o.waveformStop)
    throw std::invalid_argument("waveform window [" + std::to_string(o.waveformStart) + ", " +
                                std::to_string(o.waveformStop) + "): start after stop");
}

} // namespace

void AxiMonitor::address(uint64_t cycle, const char *name, const AxiAddress &now, AxiAddress &held,
                         uint64_t &handshakes, uint64_t &waits) {
  if (held.valid && !now.valid)
    violation(cycle, std::string(name) + "VALID dropped before " + name + "READY");
  if (held.valid && !samePayload(held, now))
    violation(cycle, std::string(name) + " payload changed while waiting for " + name + "READY");
  if (now.valid && now.ready) {
    ++handshakes;
    const unsigned beats = now.len + 1;
    if (now.burst != 1)
      violation(cycle, std::string(name) + "BURST " + std::to_string(now.burst) + ", not INCR");
    if ((1u << now.size) != kBeatBytes)
      violation(cycle, std::string(name) + "SIZE " + std::to_string(now.size) +
                           ": not a full beat of " + std::to_string(kBeatBytes) + " bytes");
    if (beats > isa::hw::kAxiMaxBurst)
      violation(cycle, std::string(name) + " burst of " + std::to_string(beats) +
                           " beats, more than " + std::to_string(isa::hw::kAxiMaxBurst));
    if (now.addr % kBeatBytes)
      violation(cycle, std::string(name) + "ADDR not beat-aligned");
    if (now.addr % 4096 + uint64_t(beats) * kBeatBytes > 4096)
      violation(cycle, std::string(name) + " burst crosses a 4 KiB boundary");
  } else if (now.valid) {
    ++waits;
  }
  held = now.valid && !now.ready ? now : AxiAddress{};
}

void AxiMonitor::cycle(uint64_t cycle, const AxiAddress &ar, const AxiAddress &aw,
                       const AxiWrite &w, bool rBeat, bool bResponse) {
  address(cycle, "AR", ar, arHeld_, counts_.arHandshakes, counts_.arWaits);
  address(cycle, "AW", aw, awHeld_, counts_.awHandshakes, counts_.awWaits);
  if (aw.valid && aw.ready)
    writeBursts_.push_back(aw.len + 1);
  if (wHeld_.valid && !w.valid)
    violation(cycle, "WVALID dropped before WREADY");
  if (wHeld_.valid &&
      (wHeld_.strb != w.strb || wHeld_.dataDigest != w.dataDigest || wHeld_.last != w.last))
    violation(cycle, "W payload changed while waiting for WREADY");
  if (w.valid && w.ready) {
    ++counts_.wHandshakes;
    if (writeBursts_.empty())
      violation(cycle, "W beat without a write burst");
    const bool last = ++wBeat_ == writeBursts_.front();
    if (w.last != last)
      violation(cycle, last ? "WLAST missing on the last beat of a burst"
                            : "WLAST before the last beat of a burst");
    if (last) {
      writeBursts_.erase(writeBursts_.begin());
      wBeat_ = 0;
    }
  } else if (w.valid) {
    ++counts_.wWaits;
  }
  wHeld_ = w.valid && !w.ready ? w : AxiWrite{};
  counts_.rBeats += rBeat;
  counts_.bResponses += bResponse;
}

void AxiMonitor::restart() {
  arHeld_ = awHeld_ = AxiAddress{};
  wHeld_ = AxiWrite{};
  writeBursts_.clear();
  wBeat_ = 0;
}

DeviceOptions DeviceOptions::fromEnvironment() {
  DeviceOptions o;
  const sim::MemoryTiming memory = sim::MemoryTiming::fromEnvironment();
  o.memoryLatency = memory.latency;
  o.memoryWidth = memory.bytesPerCycle;
  o.stallPercent = memory.stallPercent;
  o.stallSeed = sim::environmentNumber("NPU_RTL_STALL_SEED", 1);
  o.hangCycles = sim::environmentNumber("NPU_RTL_HANG_CYCLES", o.hangCycles);
  const char *vcd = std::getenv("NPU_RTL_VCD");
  const char *fst = std::getenv("NPU_RTL_FST");
  if (vcd && fst)
    throw std::invalid_argument("NPU_RTL_VCD and NPU_RTL_FST are both set: one waveform per run");
  if (vcd)
    o.waveformPath = vcd;
  if (fst) {
    o.waveformPath = fst;
    o.waveformFormat = WaveformFormat::Fst;
  }
  o.waveformStart = sim::environmentNumber("NPU_RTL_VCD_START", 0);
  o.waveformStop = sim::environmentNumber("NPU_RTL_VCD_STOP", UINT64_MAX);
  o.dropWriteAtPacket = sim::environmentNumber("NPU_RTL_DROP_WRITE_AT_PACKET", UINT64_MAX);
  return o;
}

struct Device::Impl {
  mem::PhysicalMemory &memory;
  DeviceOptions options;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vnpu_top> top;
  std::unique_ptr<Waveform> waveform; // traces *top: destroyed before it
  uint64_t rng;
  std::deque<Burst> reads;
  std::optional<Burst> writeBurst; // accepted on AW, receiving W beats
  std::deque<Burst> responses;     // write bursts waiting for their B response
  LiteAccess lite;
  unsigned beatCycles;        // cycles of the memory per bus beat
  uint64_t readPathFree = 0;  // the next read beat not before this cycle
  uint64_t writePathFree = 0; // the next write beat not before this cycle
  AxiMonitor monitor;
  bool progress = false;
  bool dropped = false; // the injected write drop happened
  bool trackAccesses = false;
  std::vector<std::pair<uint64_t, uint64_t>> written;
  std::vector<std::pair<uint64_t, uint64_t>> readBursts;

  Impl(mem::PhysicalMemory &m, const DeviceOptions &o)
      : memory(m), options(o), context(std::make_unique<VerilatedContext>()),
        rng(o.stallSeed * 0x9e3779b97f4a7c15ull + 1), beatCycles(kBeatBytes / o.memoryWidth) {
    context->traceEverOn(!o.waveformPath.empty());
    top = std::make_unique<Vnpu_top>(context.get(), "npu_top");
    if (!o.waveformPath.empty())
      waveform = std::make_unique<Waveform>(*top, o.waveformPath, o.waveformFormat);
  }
  ~Impl() {
    waveform.reset();
    top->final();
  }

  // True with probability stallPercent / 100.
  bool stall() {
    if (!options.stallPercent)
      return false;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % 100 < options.stallPercent;
  }

  mem::FaultCode check(uint64_t address, unsigned beats, mem::Access access) const {
    const uint64_t bytes = uint64_t(beats) * kBeatBytes;
    // Overlap, also for ranges that end at 2^64: either start lies in the other range.
    if (options.refusedBytes && (address - options.refusedBase < options.refusedBytes ||
                                 options.refusedBase - address < bytes))
      return mem::FaultCode::Unmapped;
    return memory.check(address, bytes, access).code;
  }

  void driveInputs(uint64_t cycle) {
    Vnpu_top &t = *top;
    // AR, AW: one write burst at a time, reads queue.
    t.m_axi_arready = !stall();
    t.m_axi_awready = !writeBurst && !stall();
    // R: the front read burst once its latency has passed.
    t.m_axi_rvalid = 0;
    if (!reads.empty() && cycle >= reads.front().readyCycle && cycle >= readPathFree && !stall()) {
      Burst &b = reads.front();
      if (!b.beat) {
        b.beat.emplace();
        b.beat->fill(0);
        if (b.fault == mem::FaultCode::None)
          memory.read(b.address + uint64_t(b.done) * kBeatBytes, b.beat->data(), kBeatBytes);
      }
      for (unsigned w = 0; w < kBeatWords; ++w) {
        uint32_t word;
        std::memcpy(&word, b.beat->data() + 4 * w, 4);
        t.m_axi_rdata[w] = word;
      }
      t.m_axi_rvalid = 1;
      t.m_axi_rresp = b.fault == mem::FaultCode::None ? kRespOkay : kRespSlaveError;
      t.m_axi_ruser = static_cast<uint8_t>(b.fault);
      t.m_axi_rlast = b.done + 1 == b.beats;
    }
    t.m_axi_wready = writeBurst && cycle >= writePathFree && !stall();
    t.m_axi_bvalid = 0;
    if (!responses.empty() && cycle >= responses.front().readyCycle && !stall()) {
      const Burst &b = responses.front();
      t.m_axi_bvalid = 1;
      t.m_axi_bresp = b.fault == mem::FaultCode::None ? kRespOkay : kRespSlaveError;
      t.m_axi_buser = static_cast<uint8_t>(b.fault);
    }
    // AXI4-Lite: address and data together for writes.
    t.s_axil_awvalid = lite.active && lite.write && !lite.addressDone;
    t.s_axil_wvalid = t.s_axil_awvalid;
    t.s_axil_awaddr = lite.offset;
    t.s_axil_wdata = lite.data;
    t.s_axil_wstrb = 0xf;
    t.s_axil_bready = lite.active && lite.write && lite.addressDone;
    t.s_axil_arvalid = lite.active && !lite.write && !lite.addressDone;
    t.s_axil_araddr = lite.offset;
    t.s_axil_rready = lite.active && !lite.write && lite.addressDone;
  }

  // The memory channels as the monitor sees them this cycle.
  void monitorCycle(uint64_t cycle) {
    const Vnpu_top &t = *top;
    AxiAddress ar{bool(t.m_axi_arvalid), bool(t.m_axi_arready), t.m_axi_araddr,
                  t.m_axi_arlen,         t.m_axi_arsize,        t.m_axi_arburst};
    AxiAddress aw{bool(t.m_axi_awvalid), bool(t.m_axi_awready), t.m_axi_awaddr,
                  t.m_axi_awlen,         t.m_axi_awsize,        t.m_axi_awburst};
    AxiWrite w{bool(t.m_axi_wvalid), bool(t.m_axi_wready), bool(t.m_axi_wlast), t.m_axi_wstrb, 0};
    if (w.valid) {
      w.dataDigest = 0xcbf29ce484222325ull;
      for (unsigned i = 0; i < kBeatWords; ++i)
        w.dataDigest = (w.dataDigest ^ t.m_axi_wdata[i]) * 0x100000001b3ull;
    }
    monitor.cycle(cycle, ar, aw, w, t.m_axi_rvalid && t.m_axi_rready,
                  t.m_axi_bvalid && t.m_axi_bready);
  }

  // Handshakes that complete at the coming clock edge, applied after it.
  struct Fires {
    bool ar = false, r = false, aw = false, w = false, b = false;
    uint64_t arAddr = 0, awAddr = 0;
    unsigned arBeats = 0, awBeats = 0;
    std::array<uint8_t, kBeatBytes> wData{};
    uint32_t wStrb = 0;
    bool liteAddr = false, liteData = false;
    uint32_t liteRead = 0;
  };

  Fires sample() const {
    const Vnpu_top &t = *top;
    Fires f;
    f.ar = t.m_axi_arvalid && t.m_axi_arready;
    f.arAddr = t.m_axi_araddr;
    f.arBeats = t.m_axi_arlen + 1u;
    f.r = t.m_axi_rvalid && t.m_axi_rready;
    f.aw = t.m_axi_awvalid && t.m_axi_awready;
    f.awAddr = t.m_axi_awaddr;
    f.awBeats = t.m_axi_awlen + 1u;
    f.w = t.m_axi_wvalid && t.m_axi_wready;
    for (unsigned w = 0; w < kBeatWords; ++w) {
      const uint32_t word = t.m_axi_wdata[w];
      std::memcpy(f.wData.data() + 4 * w, &word, 4);
    }
    f.wStrb = t.m_axi_wstrb;
    f.b = t.m_axi_bvalid && t.m_axi_bready;
    f.liteAddr = (t.s_axil_awvalid && t.s_axil_awready) || (t.s_axil_arvalid && t.s_axil_arready);
    f.liteData = (t.s_axil_bvalid && t.s_axil_bready) || (t.s_axil_rvalid && t.s_axil_rready);
    f.liteRead = t.s_axil_rdata;
    return f;
  }

  void noteWritten(uint64_t address, uint64_t bytes) {
    if (!written.empty() && written.back().first + written.back().second == address)
      written.back().second += bytes;
    else
      written.emplace_back(address, bytes);
  }

  // The fault injection of DeviceOptions::dropWriteAtPacket.
  bool dropThisBeat(uint32_t strobes) {
    if (dropped || !strobes || top->trace_index != options.dropWriteAtPacket)
      return false;
    dropped = true;
    return true;
  }

  void apply(const Fires &f, uint64_t cycle) {
    if (f.ar) {
      reads.push_back({f.arAddr, f.arBeats, 0, cycle + options.memoryLatency + beatCycles - 1,
                       check(f.arAddr, f.arBeats, mem::Access::Read), std::nullopt});
      if (trackAccesses)
        readBursts.emplace_back(f.arAddr, uint64_t(f.arBeats) * kBeatBytes);
    }
    if (f.r) {
      readPathFree = cycle + beatCycles;
      Burst &b = reads.front();
      b.beat.reset();
      if (++b.done == b.beats)
        reads.pop_front();
    }
    if (f.aw)
      writeBurst = Burst{
          f.awAddr, f.awBeats, 0, 0, check(f.awAddr, f.awBeats, mem::Access::Write), std::nullopt};
    if (f.w) {
      writePathFree = cycle + beatCycles;
      Burst &b = *writeBurst;
      const uint64_t base = b.address + uint64_t(b.done) * kBeatBytes;
      // Only the strobed bytes, in contiguous runs (so that the region
      // counters count what was written).
      if (b.fault == mem::FaultCode::None && !dropThisBeat(f.wStrb)) {
        for (unsigned i = 0; i < kBeatBytes;) {
          if (!(f.wStrb >> i & 1)) {
            ++i;
            continue;
          }
          unsigned j = i;
          while (j < kBeatBytes && (f.wStrb >> j & 1))
            ++j;
          memory.write(base + i, f.wData.data() + i, j - i);
          if (trackAccesses)
            noteWritten(base + i, j - i);
          i = j;
        }
      }
      if (++b.done == b.beats) {
        b.readyCycle = cycle + options.memoryLatency;
        responses.push_back(b);
        writeBurst.reset();
      }
    }
    if (f.b)
      responses.pop_front();
    if (f.liteAddr)
      lite.addressDone = true;
    if (f.liteData) {
      lite.data = lite.write ? lite.data : f.liteRead;
      lite.done = true;
      lite.active = false;
    }
  }
};

Device::Device(mem::PhysicalMemory &memory, const DeviceOptions &options)
    : impl_((validate(options), std::make_unique<Impl>(memory, options))) {
  const size_t regions = memory.map().regions.size();
  if (regions > isa::hw::kRegionEntries)
    throw std::invalid_argument("the address map has " + std::to_string(regions) +
                                " regions; the RTL's region table holds " +
                                std::to_string(isa::hw::kRegionEntries) +
                                " (isa/hardware.td RegionEntries)");
  hardReset();
}

Device::~Device() = default;

void Device::hardReset() {
  impl_->reads.clear();
  impl_->writeBurst.reset();
  impl_->responses.clear();
  impl_->lite = {};
  impl_->monitor.restart();
  Vnpu_top &t = *impl_->top;
  t.rst_n = 0;
  t.clk = 0;
  impl_->driveInputs(cycle_);
  t.eval();
  tick();
  tick();
  t.rst_n = 1;
  t.eval();
  resetting_ = true;
  try {
    programRegionTable();
  } catch (...) {
    resetting_ = false;
    throw;
  }
  resetting_ = false;
}

// As the board's boot code would: every region of the map, with what the
// engines may do there (the CSR window and the command ring: nothing).
void Device::programRegionTable() {
  using namespace isa::csr;
  const std::vector<mem::Region> &regions = impl_->memory.map().regions;
  for (uint32_t e = 0; e < isa::hw::kRegionEntries; ++e) {
    const mem::Region *region = e < regions.size() ? &regions[e] : nullptr;
    writeCsr(REGION_SELECT, e);
    writeCsr(REGION_BASE_LO, region ? static_cast<uint32_t>(region->base) : 0);
    writeCsr(REGION_BASE_HI, region ? static_cast<uint32_t>(region->base >> 32) : 0);
    writeCsr(REGION_SIZE_LO, region ? static_cast<uint32_t>(region->size) : 0);
    writeCsr(REGION_SIZE_HI, region ? static_cast<uint32_t>(region->size >> 32) : 0);
    writeCsr(REGION_ACCESS, region ? (region->engineReadable() ? REGION_ACCESS_READ : 0u) |
                                         (region->engineWritable() ? REGION_ACCESS_WRITE : 0u)
                                   : 0u);
  }
  writeCsr(REGION_SELECT, 0);
}

void Device::tick() {
  Impl &d = *impl_;
  Vnpu_top &t = *d.top;
  d.driveInputs(cycle_);
  t.dbg_hold = holding_;
  t.eval();
  const Impl::Fires fires = d.sample();
  d.monitorCycle(cycle_);
  packetEnded_ = t.trace_valid;
  if (t.trace_valid && !t.trace_fault) {
    sim::PacketRecord r;
    r.index = t.trace_index;
    const isa::InstrInfo *info = isa::findOpcode(t.trace_opcode);
    r.opcode = info ? info->opcode : isa::Opcode::NOP;
    r.engine = info ? info->engine : isa::Engine::Control;
    r.startCycle = t.trace_start_cycle;
    r.endCycle = t.trace_end_cycle;
    r.bytesRead = t.trace_bytes_read;
    r.bytesWritten = t.trace_bytes_written;
    sim::account(stats_, r);
    if (recording_)
      records_.push_back(r);
  }
  const bool progress = t.dbg_progress;
  const bool dump =
      d.waveform && cycle_ >= d.options.waveformStart && cycle_ < d.options.waveformStop;
  if (dump)
    d.waveform->dump(2 * cycle_);
  t.clk = 1;
  t.eval();
  if (dump)
    d.waveform->dump(2 * cycle_ + 1);
  // The falling edge is evaluated with the next cycle's inputs (no logic of
  // the design is sensitive to it).
  t.clk = 0;
  d.apply(fires, cycle_);
  d.progress = progress;
  ++cycle_;
}

unsigned Device::modelThreads() const {
  return impl_->top->threads();
}

const AxiCounts &Device::axiCounts() const {
  return impl_->monitor.counts();
}

size_t Device::burstsInFlight() const {
  return impl_->reads.size() + (impl_->writeBurst ? 1 : 0) + impl_->responses.size();
}

uint32_t Device::readCsr(uint32_t offset) {
  impl_->lite = {true, false, offset, 0, false, false};
  completeCsrAccess();
  return impl_->lite.data;
}

void Device::writeCsr(uint32_t offset, uint32_t value) {
  impl_->lite = {true, true, offset, value, false, false};
  completeCsrAccess();
}

void Device::completeCsrAccess() {
  Impl &d = *impl_;
  uint64_t waited = 0;
  while (!d.lite.done) {
    if (waited == d.options.hangCycles) {
      mem::Fault f;
      f.code = mem::FaultCode::Timeout;
      f.packetIndex = static_cast<int64_t>(d.top->trace_index);
      char text[200];
      std::snprintf(text, sizeof text,
                    "RTL hang: the AXI4-Lite %s of CSR 0x%03x got no %s for %" PRIu64
                    " cycles at cycle %" PRIu64,
                    d.lite.write ? "write" : "read", d.lite.offset,
                    d.lite.addressDone ? (d.lite.write ? "BVALID" : "RVALID")
                                       : (d.lite.write ? "AWREADY" : "ARREADY"),
                    waited, cycle_);
      f.detail = text;
      d.lite = {};
      // A hang while the reset programs the region table would only recur
      // in a second reset: that one is left to the caller.
      if (!resetting_)
        hardReset();
      throw HangError(f);
    }
    tick();
    ++waited;
  }
}

void Device::runUntilIdle() {
  run(false);
}
void Device::runOnePacket() {
  run(true);
}

void Device::run(bool onePacket) {
  Impl &d = *impl_;
  Vnpu_top &t = *d.top;
  uint64_t quiet = 0;
  holding_ = false;
  for (;;) {
    // Registered outputs, current after the last clock edge.
    if (!t.dbg_active && !t.dbg_ring_pending)
      return;
    tick();
    // A packet ended: in one-packet mode the device starts no other until
    // the next run (CSR accesses in between clock it too).
    if (onePacket && packetEnded_) {
      holding_ = true;
      return;
    }
    quiet = d.progress ? 0 : quiet + 1;
    if (quiet < d.options.hangCycles)
      continue;
    mem::Fault f;
    f.code = mem::FaultCode::Timeout;
    f.packetIndex = static_cast<int64_t>(t.trace_index);
    // npu_cmd's states; before S_DECODE the packet is still being fetched.
    static const char *const kCommandStates[] = {
        "idle",         "fetch request", "fetch", "decode",  "dispatch", "extent",
        "region check", "overlap check", "start", "execute", "complete", "fault"};
    const unsigned command = t.dbg_cmd_state;
    const std::string packet = command < 3 ? "fetching packet " + std::to_string(t.trace_index)
                                           : "in packet " + std::to_string(t.trace_index) + " (" +
                                                 opcodeName(t.trace_opcode) + ")";
    char text[320];
    std::snprintf(text, sizeof text,
                  "RTL hang: no progress for %" PRIu64 " cycles at cycle %" PRIu64
                  " %s; states: command %s (%u), dma %u, matrix %u, vector %u",
                  quiet, cycle_, packet.c_str(),
                  command < std::size(kCommandStates) ? kCommandStates[command] : "?", command,
                  t.dbg_dma_state, t.dbg_matrix_state, t.dbg_vector_state);
    f.detail = text;
    hardReset();
    throw HangError(f);
  }
}

mem::Fault Device::fault() {
  using namespace isa::csr;
  const auto read64 = [&](uint32_t lo, uint32_t hi) {
    return readCsr(lo) | uint64_t(readCsr(hi)) << 32;
  };
  sim::FaultFacts facts;
  facts.code = static_cast<mem::FaultCode>(readCsr(ERROR_CODE));
  facts.packetIndex = static_cast<int64_t>(read64(FAULT_PACKET_LO, FAULT_PACKET_HI));
  facts.address = read64(FAULT_ADDR_LO, FAULT_ADDR_HI);
  facts.length = read64(FAULT_LENGTH_LO, FAULT_LENGTH_HI);
  const uint32_t operands = readCsr(FAULT_OPERAND);
  const auto operand = [](uint32_t bits) { return bits == 0xff ? -1 : static_cast<int>(bits); };
  facts.operand = operand(operands & 0xff);
  facts.otherOperand = operand(operands >> 8 & 0xff);
  const uint32_t access = operands >> 16 & 3;
  facts.access = access ? static_cast<mem::Access>(access) : mem::Access::Read;
  // The packet is still in its ring slot: the ring is no engine's to write.
  const uint64_t ringBase = read64(RING_BASE_LO, RING_BASE_HI);
  const uint32_t entries = readCsr(RING_ENTRIES);
  isa::Packet packet{};
  if (entries)
    impl_->memory.read(ringBase + (uint64_t(facts.packetIndex) & (entries - 1)) * isa::kPacketBytes,
                       packet.data(), packet.size());
  if (facts.code == mem::FaultCode::IndexOutOfRange) {
    if (facts.length == 8) {
      impl_->memory.read(facts.address, &facts.index, 8);
    } else {
      int32_t narrow;
      impl_->memory.read(facts.address, &narrow, 4);
      facts.index = narrow;
    }
  }
  return sim::describeFault(facts, packet, impl_->memory.map());
}

std::vector<sim::PacketRecord> Device::takeRecords() {
  return std::exchange(records_, {});
}

void Device::setAccessTracking(bool enabled) {
  impl_->trackAccesses = enabled;
}

std::vector<std::pair<uint64_t, uint64_t>> Device::takeWrittenRanges() {
  return std::exchange(impl_->written, {});
}

std::optional<uint64_t>
beatOutsideOperands(const isa::Packet &packet, const mem::AddressMap &map, uint64_t slot,
                    const std::vector<std::pair<uint64_t, uint64_t>> &bursts) {
  sim::OperandRanges operands;
  if (sim::checkPacket(packet, map, operands).code != mem::FaultCode::None)
    return std::nullopt;
  const auto overlaps = [](uint64_t begin, uint64_t bytes, uint64_t otherBegin,
                           uint64_t otherBytes) {
    return begin < otherBegin + otherBytes && otherBegin < begin + bytes;
  };
  for (const auto &[address, bytes] : bursts)
    for (uint64_t beat = address; beat - address < bytes; beat += kBeatBytes) {
      bool needed = overlaps(beat, kBeatBytes, slot, isa::kPacketBytes);
      for (const sim::OperandRange &r : operands)
        needed = needed || (r.accessed && mem::includes(r.access, mem::Access::Read) &&
                            overlaps(beat, kBeatBytes, r.address, r.bytes));
      if (!needed)
        return beat;
    }
  return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> Device::takeReadBursts() {
  return std::exchange(impl_->readBursts, {});
}

} // namespace npu::rtl
