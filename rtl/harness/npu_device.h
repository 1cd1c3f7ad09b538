// The Verilated npu_top as a device: its AXI4 master served from a
// npu::mem::PhysicalMemory with configurable latency and wait states, its
// AXI4-Lite register window driven by readCsr/writeCsr, a clock that runs
// until the device is idle, hang detection, per-packet records and an
// optional waveform (FST or VCD) over a cycle window.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/memory_timing.h"
#include "npu/sim/profile.h"
#include "npu_waveform.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::rtl {

struct DeviceOptions {
  // Cycles from an accepted read or write burst to its first data beat or
  // its response (isa/hardware.td MemLatency by default).
  unsigned memoryLatency = isa::hw::kMemLatency;
  // Data width of the memory behind the slave, in bytes per cycle (a power
  // of two up to the AXI data width): a beat of the AXI bus moves in
  // (bus width / memoryWidth) cycles, on the read and on the write path.
  unsigned memoryWidth = 32;
  // Percentage of cycles in which the memory withholds a ready or valid
  // signal (wait states and back-pressure), from a seeded generator.
  unsigned stallPercent = 0;
  uint64_t stallSeed = 1;
  // A run stops with a Timeout fault when neither a packet ends nor a memory
  // request of the unit running completes for this many cycles (bursts
  // moving is not progress: an engine stuck in a loop keeps the bus busy).
  uint64_t hangCycles = 2'000'000;
  // Waveform of cycles [waveformStart, waveformStop) when the path is set
  // (npu_waveform.h).
  std::string waveformPath;
  WaveformFormat waveformFormat = WaveformFormat::Vcd;
  uint64_t waveformStart = 0;
  uint64_t waveformStop = UINT64_MAX;
  // Fault injection for testing the checkers (co-simulation): the memory
  // silently drops the first written beat of this packet (counted from the
  // last RESET), as if the master had never sent it. UINT64_MAX: none.
  uint64_t dropWriteAtPacket = UINT64_MAX;
  // Fault injection for testing the engines' error paths: the interconnect
  // answers every burst that touches [refusedBase, refusedBase +
  // refusedBytes) with a slave error (code Unmapped), although the region
  // table allows the access, as a bus error behind a mapped region would.
  uint64_t refusedBase = 0;
  uint64_t refusedBytes = 0;

  // The defaults, overridden by NPU_RTL_LATENCY, NPU_RTL_MEM_WIDTH,
  // NPU_RTL_STALL_PERCENT, NPU_RTL_STALL_SEED, NPU_RTL_HANG_CYCLES,
  // NPU_RTL_VCD or NPU_RTL_FST (the waveform's path and format; not both),
  // NPU_RTL_VCD_START, NPU_RTL_VCD_STOP (its window, in either format) and
  // NPU_RTL_DROP_WRITE_AT_PACKET. Throws std::invalid_argument on a value
  // that is not a number or out of range, or on both waveform variables.
  static DeviceOptions fromEnvironment();

  sim::MemoryTiming memoryTiming() const { return {memoryLatency, memoryWidth, stallPercent}; }
};

// The signals of one AXI4 address channel (AR or AW) in one cycle.
struct AxiAddress {
  bool valid = false, ready = false;
  uint64_t addr = 0;
  unsigned len = 0, size = 0, burst = 0;
};
// The W channel in one cycle (wdata as a digest: equal data, equal digest).
struct AxiWrite {
  bool valid = false, ready = false, last = false;
  uint64_t strb = 0, dataDigest = 0;
};

// Handshakes and wait cycles (valid without ready) per channel.
struct AxiCounts {
  uint64_t arHandshakes = 0, arWaits = 0;
  uint64_t awHandshakes = 0, awWaits = 0;
  uint64_t wHandshakes = 0, wWaits = 0;
  uint64_t rBeats = 0, bResponses = 0;
};

// The AXI4 master broke a rule of the protocol (a bug of the RTL).
class AxiProtocolError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Checks, cycle by cycle, the rules the NPU's AXI4 master must keep:
// a VALID stays asserted with its payload unchanged until READY; bursts
// are INCR of full beats (AxSIZE = the bus width), at most HW_AXI_MAX_BURST
// beats, beat-aligned and within one 4 KiB page; WLAST marks exactly the
// last beat of each write burst, whose W beats follow its AW. Throws
// AxiProtocolError naming the cycle and the rule.
class AxiMonitor {
public:
  void cycle(uint64_t cycle, const AxiAddress &ar, const AxiAddress &aw, const AxiWrite &w,
             bool rBeat, bool bResponse);
  const AxiCounts &counts() const { return counts_; }
  // Forgets the transactions in flight (a reset of the device); keeps the counts.
  void restart();

private:
  void address(uint64_t cycle, const char *name, const AxiAddress &now, AxiAddress &held,
               uint64_t &handshakes, uint64_t &waits);
  AxiCounts counts_;
  AxiAddress arHeld_, awHeld_; // valid && !ready in the previous cycle
  AxiWrite wHeld_;
  std::vector<unsigned> writeBursts_; // beats of the accepted AW bursts awaiting W
  unsigned wBeat_ = 0;                // W beats of the front burst so far
};

// The device stopped making progress. fault() carries code Timeout and the
// index of the packet in flight; what() the progress report.
class HangError : public mem::DeviceFault {
public:
  using mem::DeviceFault::DeviceFault;
};

// The first beat of `bursts` (byte ranges of whole bus beats) that holds
// no byte of the packet's ring slot at `slot` and none of a memory operand
// the packet reads (sim::checkPacket's ranges in `map`); nullopt when every
// beat is needed, or when the packet fails its checks.
std::optional<uint64_t>
beatOutsideOperands(const isa::Packet &packet, const mem::AddressMap &map, uint64_t slot,
                    const std::vector<std::pair<uint64_t, uint64_t>> &bursts);

class Device {
public:
  // Programs the device's region table from memory.map() (at every power-up
  // reset): std::invalid_argument if the map has more regions than the
  // table has entries.
  Device(mem::PhysicalMemory &memory,
         const DeviceOptions &options = DeviceOptions::fromEnvironment());
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  // One AXI4-Lite access to the register window. Throws HangError if the
  // slave does not complete it within the hang budget; the device is then
  // reset, as after any hang.
  uint32_t readCsr(uint32_t offset);
  void writeCsr(uint32_t offset, uint32_t value);

  // The fault the device stopped at (STATUS.FAULT), described from its
  // fault registers, the faulting packet in the ring and, for an index out
  // of range, the index in memory, by the function the ISS describes its
  // faults with (sim::describeFault).
  mem::Fault fault();

  // Clocks the device until it has no packet to run (ring empty, halted or
  // faulted). Throws HangError if it stops making progress; the device is
  // then reset (as after power-up, ring registers included).
  void runUntilIdle();
  // Clocks the device until the packet it runs completes or faults, or it
  // has none to run; packets published after it stay in the ring (the
  // command processor may have prefetched the next one). Hangs as above.
  void runOnePacket();

  // Records of the packets completed since the last call (faulting packets
  // have none), when recording is on.
  void setRecording(bool enabled) { recording_ = enabled; }
  std::vector<sim::PacketRecord> takeRecords();
  // Cycles of the last completed packet, and totals since the last RESET.
  const sim::Stats &stats() const { return stats_; }
  void resetStats() { stats_ = sim::Stats{}; }

  uint64_t cycle() const { return cycle_; } // clock cycles since construction
  // Memory bursts accepted whose data or response the device has not yet
  // taken: none once an engine has drained after a fault, as AXI requires.
  size_t burstsInFlight() const;
  // The AXI4 memory channels' handshakes and wait cycles since construction.
  const AxiCounts &axiCounts() const;
  unsigned modelThreads() const; // Verilator threads of the model

  // For co-simulation, while access tracking is on (off by default, so that
  // a long run accumulates nothing): the byte ranges the device wrote since
  // the last call, in write order (adjacent ranges merged), and the read
  // bursts it issued, as byte ranges of whole beats in issue order.
  void setAccessTracking(bool enabled);
  std::vector<std::pair<uint64_t, uint64_t>> takeWrittenRanges();
  std::vector<std::pair<uint64_t, uint64_t>> takeReadBursts();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool recording_ = false;
  std::vector<sim::PacketRecord> records_;
  sim::Stats stats_;
  uint64_t cycle_ = 0;
  bool resetting_ = false; // hardReset is programming the region table

  void tick();
  void run(bool onePacket);
  bool packetEnded_ = false; // trace_valid in the last tick
  bool holding_ = false;     // dbg_hold: runOnePacket stopped between packets
  void completeCsrAccess();
  void hardReset();
  void programRegionTable();
};

} // namespace npu::rtl
