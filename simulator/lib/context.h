// What an instruction's semantics see: typed views of device memory and
// the data-dependent fault. Internal to libnpu_iss.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/checks.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::sim {

// The amount of work in a packet, known from its operands alone; the timing
// model turns it into cycles without touching memory.
struct Work {
  uint64_t elements = 0; // vector-lane element operations
  // The bytes a DMA packet moves (the matrix and the vector engine's
  // requests are counted by the cycle model as it walks them, timing.cpp).
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  uint64_t writeAddress = 0; // a DMA packet's destination (its place in a beat and a page)
  uint64_t m = 0, k = 0, n = 0, batch = 0; // matrix engine shape
  // The matrix engine's operands: transposes, accumulation, first elements
  // (for their offsets in a beat), pitches and batch strides in elements.
  struct MatrixOperands {
    bool transA = false, transB = false, acc = false;
    uint64_t a = 0, b = 0, c = 0;
    uint64_t lda = 0, ldb = 0, ldc = 0;
    uint64_t strideA = 0, strideB = 0, strideC = 0;
    // log2 of the element sizes of A and B (dtype) and of C (otype).
    unsigned abLog2 = 2, cLog2 = 2;
  };
  MatrixOperands matrix = {};

  // The DMA engine's gather: the source runs it reads one request at a time
  // while the destination streams out (COPY one run; COPY_STRIDED one per
  // innermost row; EMBEDDING one per index, each after its index's read).
  // A run is `elements` elements of 2^elementLog2 bytes: a contiguous
  // range, or `pitch` bytes apart, packed (the span they cover is read) or
  // pitched (one burst per element). The cycle model times each run at its
  // own address (its place in a beat and a 4 KiB page decides its bursts).
  enum class RunKind : uint8_t { Range, Packed, Pitched };
  struct Runs {
    // COPY: one range, which the engine sets up as it starts; a gather's
    // one contiguous run (COPY_STRIDED) costs a cycle more, to find it.
    bool copy = false;
    uint64_t count = 0;
    uint64_t elements = 0;
    unsigned elementLog2 = 0;
    RunKind kind = RunKind::Range;
    int64_t pitch = 0;    // bytes from one element of a run to the next
    uint64_t address = 0; // of the first run
    // COPY_STRIDED: run (i, j, k) of the outer sizes starts
    // i * steps[0] + j * steps[1] + k * steps[2] bytes from the first.
    std::array<uint64_t, 3> sizes = {1, 1, 1};
    std::array<int64_t, 3> steps = {};
    // EMBEDDING: run t is row rows[t] of the table at `address` (rows of
    // `elements` bytes), after the read of the index at
    // indices + t * indexBytes. The rows are the data's: the ISS records them
    // when it executes the packet; without them (perf mode, a prediction
    // from the packet alone) run t is taken to be row t mod tableRows.
    uint64_t indexBytes = 0;
    uint64_t indices = 0;
    uint64_t tableRows = 0;
    // GATHER: the index of run t is at indices + (t mod indexPeriod) *
    // indexBytes (a nonzero period: shared mode, every outer slice reads
    // the same indices), and its source at address + (t / slabRuns) *
    // slabBytes + rows[t] * rowBytes + (t mod rowRuns) * the run's bytes
    // (full mode: one element of the row per run). Zeros: EMBEDDING's
    // one slab of rows of the run's bytes.
    uint64_t indexPeriod = 0;
    uint64_t slabRuns = 0, slabBytes = 0;
    uint64_t rowRuns = 1, rowBytes = 0;
    std::span<const uint32_t> rows = {};
  };
  Runs runs = {};
};

// Elements [first, first + count) of a span that the semantics asked the
// context for: a range past its end is a bug of the semantics
// (std::logic_error), never an access of the memory after the span.
template <class T> std::span<T> within(std::span<T> s, uint64_t first, uint64_t count) {
  if (first > s.size() || count > s.size() - first)
    throw std::logic_error("semantics: elements [" + std::to_string(first) + ", +" +
                           std::to_string(count) + ") of a span of " + std::to_string(s.size()));
  return s.subspan(first, count);
}

// Semantics run only after checkPacket passed, on the ranges it admitted:
// a span outside them (in direction or extent) is a bug of the semantics
// and throws std::logic_error, so what the ISS writes is always within the
// write ranges of its checks (co-simulation compares them).
class ExecContext {
public:
  ExecContext(mem::PhysicalMemory &memory, uint64_t packetIndex, const isa::InstrInfo &info,
              PacketBytes packet, const OperandRanges &ranges)
      : memory_(memory), packetIndex_(packetIndex), info_(info), packet_(packet), ranges_(ranges) {}

  template <class T> std::span<const T> read(uint64_t address, uint64_t count) {
    return {reinterpret_cast<const T *>(span(address, count, sizeof(T), mem::Access::Read)), count};
  }
  template <class T> std::span<T> write(uint64_t address, uint64_t count) {
    return {reinterpret_cast<T *>(span(address, count, sizeof(T), mem::Access::Write)), count};
  }
  template <class T> std::span<T> update(uint64_t address, uint64_t count) {
    return {reinterpret_cast<T *>(
                span(address, count, sizeof(T), mem::Access::Read | mem::Access::Write)),
            count};
  }

  // Faults with IndexOutOfRange: `index`, read at `address` (`width` bytes)
  // of the index operand `indices`, selects no row.
  [[noreturn]] void indexFault(int indices, uint64_t address, uint64_t width, int64_t index) const;

  const isa::InstrInfo &info() const { return info_; }
  uint64_t packetIndex() const { return packetIndex_; }

  // The table rows a gather's indices selected, in order (EMBEDDING): the
  // cycle model times each row's read where it is (Work::Runs::rows).
  std::vector<uint32_t> &gatheredRows() { return gatheredRows_; }

private:
  uint8_t *span(uint64_t address, uint64_t count, uint64_t elementSize, mem::Access access);

  mem::PhysicalMemory &memory_;
  uint64_t packetIndex_;
  const isa::InstrInfo &info_;
  PacketBytes packet_;
  const OperandRanges &ranges_;
  std::vector<uint32_t> gatheredRows_;
};

// The bit pattern of a float and back, for semantics that work on bits.
inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Per instruction: its work (from operands only) and its semantics. Each
// family's file defines these for its instructions; the dispatch in iss.cpp
// is generated from the ISA, so a missing one fails to link.
#define NPU_DECLARE_SEMANTICS(NAME, Type, family)                                                  \
  Work work(const isa::inst::Type &op);                                                            \
  void execute(ExecContext &ctx, const isa::inst::Type &op);
NPU_FOR_EACH_INSTRUCTION(NPU_DECLARE_SEMANTICS)
#undef NPU_DECLARE_SEMANTICS

} // namespace npu::sim
