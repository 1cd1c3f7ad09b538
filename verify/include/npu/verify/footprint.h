// The memory each instruction touches, as a function of its operands: which
// address operand names a buffer, how many bytes it spans, whether it is
// read, written or both, what it holds, and which written operand may
// coincide exactly with which read operand (an in-place operation).
//
// The ISA tables give every operand's kind, slot, range and alignment; they
// do not say that MATMUL's `a` spans (m-1)*lda + k floats or that SOFTMAX
// may run in place. This file is the one place those relations are written
// down for the verification tools (generator, coverage, minimiser), from
// the Semantics text of isa/*.td. It is dispatched over
// NPU_FOR_EACH_INSTRUCTION, so an instruction added to the ISA does not
// build until its footprint is described here.
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
  // range; any other overlap of a written buffer is an Overlap fault ...
  std::vector<std::pair<const char *, const char *>> inPlace;
  // ... except for these (written, other) pairs, whose overlap the ISA
  // leaves unspecified: neither forbidden (the ISS does not fault) nor
  // defined (the result depends on the order of reads and writes). The
  // generator keeps them apart and never injects an Overlap fault there;
  // docs/verification.md lists them as open questions of the ISA.
  std::vector<std::pair<const char *, const char *>> unspecifiedOverlap;
  // Element operations, a machine-independent cost estimate (saturating).
  uint64_t work = 0;

  const Buffer *find(std::string_view operand) const;
  bool inPlaceAllowed(std::string_view written, std::string_view read) const;
  bool overlapUnspecified(std::string_view a, std::string_view b) const;
};

// The footprint of a decodable instruction.
Footprint footprintOf(const isa::Instruction &inst);

// Adjusts operands so that the relations the ISA states in prose hold (a
// row pitch at least as long as the stored row, BMM's C matrices not
// overlapping each other, a padding index that names a row or is -1), so
// that the instruction executes without an InvalidOperand or Overlap fault
// of its own making. Leaves an instruction that satisfies them unchanged.
void legalise(isa::Instruction &inst);

const char *roleName(Role role);
const char *contentName(Content content);

} // namespace npu::verify
