// What an instruction's semantics see: checked typed views of device
// memory, fault reporting with the packet index, and overflow-checked size
// arithmetic. Internal to libnpu_iss.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace npu::sim {

// The amount of work in a packet, known from its operands alone; the timing
// model turns it into cycles without touching memory.
struct Work {
  uint64_t elements = 0; // vector-lane element operations
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  uint64_t m = 0, k = 0, n = 0, batch = 0; // matrix engine shape
};

class ExecContext {
public:
  ExecContext(mem::PhysicalMemory &memory, uint64_t packetIndex, const isa::InstrInfo &info)
      : memory_(memory), packetIndex_(packetIndex), info_(info) {}

  template <class T> std::span<const T> read(uint64_t address, uint64_t count) {
    return {reinterpret_cast<const T *>(span(address, count, sizeof(T), mem::Access::Read)), count};
  }
  template <class T> std::span<T> write(uint64_t address, uint64_t count) {
    return {reinterpret_cast<T *>(span(address, count, sizeof(T), mem::Access::Write)), count};
  }
  template <class T> std::span<T> update(uint64_t address, uint64_t count) {
    return {reinterpret_cast<T *>(span(address, count, sizeof(T), readWrite())), count};
  }

  [[noreturn]] void fault(mem::FaultCode code, uint64_t address, uint64_t length,
                          const std::string &detail) const;

  // a * b, or an InvalidOperand fault naming `what` if it overflows 64 bits.
  uint64_t mul(uint64_t a, uint64_t b, const char *what) const;
  uint64_t add(uint64_t a, uint64_t b, const char *what) const;

  // Faults with Overlap unless the byte ranges are disjoint (or, where
  // `allowIdentical`, exactly the same range: an in-place operation).
  void requireDisjoint(const char *nameA, uint64_t a, uint64_t bytesA, const char *nameB,
                       uint64_t b, uint64_t bytesB, bool allowIdentical) const;

  const isa::InstrInfo &info() const { return info_; }
  uint64_t packetIndex() const { return packetIndex_; }

private:
  static mem::Access readWrite() {
    return static_cast<mem::Access>(static_cast<uint8_t>(mem::Access::Read) |
                                    static_cast<uint8_t>(mem::Access::Write));
  }
  uint8_t *span(uint64_t address, uint64_t count, uint64_t elementSize, mem::Access access);

  mem::PhysicalMemory &memory_;
  uint64_t packetIndex_;
  const isa::InstrInfo &info_;
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
