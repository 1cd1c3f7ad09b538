// libnpu_iss: the bit-exact functional, cycle-approximate instruction-set
// simulator. It executes 64-byte packets against the shared physical-memory
// model exactly as docs/arith.md specifies and charges each packet the cycles
// of the machine described by isa/hardware.td.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/memory_timing.h"
#include "npu/sim/profile.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npu::sim {

class PacketTimingMemo;

// func: execute, no timing. perf: timing only, memory untouched (for fast
// architecture studies on long traces). both: execute and time; its cycle
// counts equal perf's because the timing model never looks at data.
enum class Mode { Func, Perf, Both };
const char *modeName(Mode mode);
std::optional<Mode> parseMode(std::string_view name);

enum class StopReason { Halt, EndOfStream, Fault, PacketLimit };
const char *stopReasonName(StopReason reason);

struct RunResult {
  StopReason reason = StopReason::EndOfStream;
  uint64_t packetsExecuted = 0; // including a HALT, excluding a faulting packet
  uint64_t cycles = 0;
  std::optional<mem::Fault> fault;
};

// The cycles the timing model charges for `packet`, known before it runs:
// the model looks only at operands, never at data. nullopt for a packet
// that does not decode (the device rejects it without doing any work).
std::optional<uint64_t> predictCycles(std::span<const uint8_t, isa::kPacketBytes> packet,
                                      const MemoryTiming &memory = {});

// The roofline bound of a packet: the larger of its compute cycles at the
// engine's peak rate (HW_MATRIX_TILE^2 MACs, HW_VECTOR_LANES elements per
// cycle for the DMA engine, and for the vector engine HW_VECTOR_LANES
// elements per ROM word of their steps) and its memory cycles at the bus's
// rate (the busier AXI direction at the memory's width). No machine of
// these parameters runs the packet faster.
struct Roofline {
  uint64_t macs = 0;     // multiply-accumulates (matrix engine)
  uint64_t elements = 0; // lane element operations (vector and DMA engines)
  uint64_t computeCycles = 0;
  uint64_t memoryCycles = 0;
  uint64_t cycles() const { return computeCycles > memoryCycles ? computeCycles : memoryCycles; }
  const char *limiter() const { return computeCycles >= memoryCycles ? "compute" : "memory"; }
};
// nullopt for a packet that does not decode.
std::optional<Roofline> roofline(std::span<const uint8_t, isa::kPacketBytes> packet,
                                 const MemoryTiming &memory = {});

class Iss {
public:
  // `timing` is the memory the cycle model charges (the defaults of
  // isa/hardware.td unless given).
  explicit Iss(mem::PhysicalMemory &memory, Mode mode = Mode::Func,
               const MemoryTiming &timing = {});
  ~Iss();

  // Executes one packet. Returns true if it was HALT. A fault throws
  // mem::DeviceFault carrying `index` as the packet index, described by
  // describeFault (npu/sim/checks.h); the packet then has no effect on
  // statistics. A packet failing checkPacket has no effect at all; an index
  // out of range stops it after the rows before the bad index.
  // `nextQueued`: the packet after it is already in the ring, so that the
  // RTL's command processor can prefetch it while this one computes (the
  // cycle model then charges the next packet no fetch).
  bool step(std::span<const uint8_t, isa::kPacketBytes> packet, uint64_t index,
            bool nextQueued = false);

  // Executes packets[0...] until HALT, the end, a fault or maxPackets.
  RunResult run(std::span<const isa::Packet> packets, uint64_t maxPackets = UINT64_MAX);

  Mode mode() const { return mode_; }
  uint64_t cycle() const { return stats_.cycles; }
  const Stats &stats() const { return stats_; }
  void resetStats();

  // Keeps a PacketRecord of every executed packet (off by default).
  void setRecording(bool enabled) { recording_ = enabled; }
  const std::vector<PacketRecord> &records() const { return records_; }
  std::vector<PacketRecord> takeRecords() { return std::exchange(records_, {}); }

private:
  mem::PhysicalMemory &memory_;
  Mode mode_;
  std::unique_ptr<PacketTimingMemo> timing_; // the cycle model under the memory's timing
  bool prefetched_ = false; // the packet to run next was fetched during the last
  Stats stats_;
  bool recording_ = false;
  std::vector<PacketRecord> records_;
};

} // namespace npu::sim
