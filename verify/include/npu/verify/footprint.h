// The memory a packet touches, as a function of its operands: which address
// operand names a buffer, how many bytes it spans, whether it is read,
// written or both, what it holds, and which written operand may coincide
// exactly with which read operand (an in-place operation).
//
// Everything here is read from the ISA tables (isa/*.td "Memory" and
// "Disjoints", as InstrInfo::memory and ::disjoints), with the extents the
// devices' operand checks compute (sim::operandExtent): the generator, the
// coverage model and the runner use the very ranges the ISS and the RTL
// check, not a second description of them.
#pragma once

#include "npu/isa/isa.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace npu::verify {

enum class Role : uint8_t { Read, Write, Update };
enum class Content : uint8_t {
  F32,     // binary32 values
  Bytes,   // raw bytes (data movement)
  Index32, // int32 indices below Buffer::indexLimit
  Index64, // int64 indices below Buffer::indexLimit
  Hyper,   // ADAMW's block of 8 f32 hyper-parameters
};

struct Buffer {
  const char *operand;   // the address operand, by its ISA name
  uint64_t address;      // that operand's value
  uint64_t lowBytes = 0; // bytes of the buffer below `address` (negative strides)
  uint64_t bytes;        // extent from address - lowBytes (saturates at 2^64-1)
  Role role;
  Content content;
  uint64_t indexLimit = 0; // Index32/Index64: indices must be in [0, indexLimit)
  bool indexWrap = false;  // ... or in [-indexLimit, indexLimit) (counting from the end)
  // Matrix and strided views: an extent computed from several operands
  // (pitches, strides, transposes), which the engines check with their own
  // arithmetic; a product's is a plain multiplication.
  bool computedExtent = false;

  uint64_t begin() const { return address - lowBytes; }
  bool writes() const { return role != Role::Read; }
  bool reads() const { return role != Role::Write; }
};

struct Footprint {
  // The buffers the instruction accesses with these operands (an operand
  // gated off by a flag, e.g. RMSNORM's weight without use_weight, is not
  // one of them).
  std::vector<Buffer> buffers;
  // (written operand, read operand) pairs that may name exactly the same
  // range; any other overlap of a written buffer with another buffer is an
  // Overlap fault (npu-tblgen requires a disjoint rule for every such pair).
  std::vector<std::pair<const char *, const char *>> inPlace;
  // The cycles the ISS's timing model charges (sim::predictCycles), a cost
  // estimate that needs no data; saturates.
  uint64_t work = 0;

  const Buffer *find(std::string_view operand) const;
  bool inPlaceAllowed(std::string_view written, std::string_view read) const;
};

// The footprint of a decodable instruction.
Footprint footprintOf(const isa::Instruction &inst);

// Adjusts operands so that the extents of the instruction's matrix operands
// are valid (a non-zero row pitch covers the stored row; a distinct batch's
// matrices lie apart), so that it executes without an InvalidOperand or
// Overlap fault of its own making. Leaves valid operands unchanged.
void legalise(isa::Instruction &inst);

const char *roleName(Role role);
const char *contentName(Content content);

} // namespace npu::verify
