// What a device reports about a run, whichever backend executed it: one
// record per packet (for logs and timelines) and aggregate statistics.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/memory_timing.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace npu::sim {

inline constexpr size_t kNumEngines = 4;

// One executed packet, for --trace logs and timelines.
struct PacketRecord {
  uint64_t index = 0;
  isa::Opcode opcode = isa::Opcode::NOP;
  isa::Engine engine = isa::Engine::Control;
  uint64_t startCycle = 0;
  uint64_t endCycle = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  // False when the data may make the engine request less than these (a
  // gather row skipped for its padding index): the ISS's counts are then
  // an upper bound.
  bool bytesExact = true;
  // On the cosim backend: what the ISS's cycle model predicted for this
  // packet (the record's own counts are the RTL's).
  struct Prediction {
    uint64_t cycles = 0, bytesRead = 0, bytesWritten = 0;
    bool bytesExact = true;
  };
  std::optional<Prediction> predicted;
};

struct Stats {
  struct Engine {
    uint64_t packets = 0;
    uint64_t busyCycles = 0;
  };
  struct Op {
    uint64_t packets = 0;
    uint64_t cycles = 0;
  };
  uint64_t packets = 0;
  uint64_t cycles = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  // Counters stop at 2^64-1 instead of wrapping; this says one did (the
  // stats JSON and npu-sim's summary report it).
  bool saturated = false;
  std::array<Engine, kNumEngines> engines{};
  std::array<Op, isa::kNumOpcodes> ops{}; // indexed like isa::instructions()
};

// Adds one executed packet to the statistics, saturating every counter.
void account(Stats &stats, const PacketRecord &record);

// Statistics as JSON: cycles per engine and op class, utilisation, bytes
// per memory region, achieved MACs per cycle; with the run's records and
// its packets (records[i].index into `packets`), one entry per packet with
// its roofline bound under `memory`.
std::string statsJson(const Stats &stats, std::span<const mem::PhysicalMemory::RegionStats> regions,
                      std::span<const PacketRecord> records = {},
                      std::span<const isa::Packet> packets = {}, const MemoryTiming &memory = {});

// A Chrome/Perfetto trace-event timeline: one track per engine, one slice
// per packet; one cycle is shown as one nanosecond.
std::string perfettoTraceJson(std::span<const PacketRecord> records, const std::string &process);

} // namespace npu::sim
