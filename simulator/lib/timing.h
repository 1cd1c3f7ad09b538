// The cycle model: the RTL's microarchitecture (rtl/*.sv, docs/rtl.md) as
// counts of its state machines' cycles and of its memory requests, from the
// packet's operands alone (never its data), under the memory timing the RTL
// harness uses. docs/simulator.md gives the formulas and their measured
// error against the RTL.
#pragma once

#include "context.h"
#include "npu/sim/memory_timing.h"

#include <array>
#include <optional>

namespace npu::sim {

// The bytes an engine requests from the memory port (a multi-row request
// counts all its rows).
struct Traffic {
  uint64_t bytesRead = 0, bytesWritten = 0;
  // The data may make the engine skip requests (a gather row whose index is
  // the padding index): then these are at most what it requests.
  bool upperBound = false;
  Traffic operator-(const Traffic &other) const;
};

struct PacketTiming {
  uint64_t cycles = 0;
  Traffic traffic; // the engine's requests (not the packet's fetch)
  // The command processor fetched the next packet while this one ran (the
  // vector engine lets it only while the port is idle, which a long
  // stream of chunks may never leave it).
  bool nextPrefetched = false;
};

// The command processor's prefetch (npu_cmd.sv): `prefetched`, it fetched
// this packet while the one before ran; `prefetching`, the next packet is
// in the ring, so it fetches that one while this one runs (on the matrix
// or the vector engine), holding the port for the length of a fetch.
struct Prefetch {
  bool prefetched = false, prefetching = false;
};
// `extrapolate` false simulates every chunk of a vector packet's rows, none
// from the repeating state of the ones before: the reference the cycle model
// is tested against (tests/unit/sim/vector_timing_test.cpp).
PacketTiming packetTiming(const isa::Instruction &decoded, const Work &work,
                          const MemoryTiming &memory, Prefetch prefetch = {},
                          bool extrapolate = true);

// packetTiming under one memory timing, remembering the packets it timed
// last. A packet's timing depends on its bytes (all of them, once it passed
// the decode checks: the reserved bits are zero), the prefetch and the
// memory timing alone, except for a gather's rows (Work::Runs::rows), which
// the data decides: those are always computed. A stream of small packets
// that repeat (a training step's, a loop's) then pays a lookup instead of
// the vector engine's walk, which costs several times the arithmetic of a
// packet of a thousand elements.
class PacketTimingMemo {
public:
  explicit PacketTimingMemo(const MemoryTiming &memory) : memory_(memory) {}
  const MemoryTiming &memory() const { return memory_; }
  // packetTiming(decoded, work, memory(), prefetch), for `decoded` the
  // decoding of `packet`.
  PacketTiming timing(PacketBytes packet, const isa::Instruction &decoded, const Work &work,
                      Prefetch prefetch);

private:
  struct Entry {
    bool filled = false;
    Prefetch prefetch;
    std::array<uint8_t, isa::kPacketBytes> packet;
    PacketTiming timing;
  };
  // Direct-mapped, about 0.5 MB: the distinct packets of a training step
  // (the tiny Qwen2 LoRA step has some 370, 81 of them COPY_STRIDED, whose
  // DMA walk costs the most) fit, so its replays pay lookups.
  static constexpr size_t kEntries = 4096;
  MemoryTiming memory_;
  std::array<Entry, kEntries> entries_{};
};

// The matrix engine's part of packetTiming for `work` (its cycles and
// requested bytes; `nextFetch`, the cycles of the next packet's fetch when
// the command processor prefetches it). `memo` false times every memory
// request burst by burst, none from an equal earlier one: the reference the
// cycle model is tested against (tests/unit/sim/matrix_timing_test.cpp).
PacketTiming matrixTiming(const Work &work, const MemoryTiming &memory, uint64_t nextFetch,
                          bool memo);

// A vector packet's lane cycles at the engine's peak: every element of
// every pass through the pass's steps (a ROM word or a Mask or Reduce step
// per cycle), HW_VECTOR_LANES elements at a time; its compute roof.
// nullopt for a packet no recipe runs.
std::optional<uint64_t> vectorLaneCycles(const isa::Instruction &decoded);

} // namespace npu::sim
