// What the ISA tables alone say about an instruction's operands, for the
// generator and the coverage model: the values that break an operand's
// range, the reserved bits, the operands that can be misaligned, and the
// combinations of its flags and enums. Internal to libnpu_verify.
#pragma once

#include "npu/isa/isa.h"

#include <string>
#include <vector>

namespace npu::verify::rules {

uint64_t slotMax(const isa::OperandInfo &op);

// A size operand (the tables' DimOp: u32 of at least 1).
bool isDimension(const isa::OperandInfo &op);
// A u32 or i32 operand: sizes, pitches, strides, offsets.
bool isSizeLike(const isa::OperandInfo &op);
// A flag or enum: the operand is part of the instruction's mode.
bool isMode(const isa::OperandInfo &op);

struct OutOfRange {
  const isa::OperandInfo *op;
  uint64_t raw;
};
// Raw values that decode rejects as out of range or as no enum value.
std::vector<OutOfRange> outOfRangeValues(const isa::InstrInfo &info);

// Bits of the packet that no field of the instruction uses.
std::vector<unsigned> reservedBits(const isa::InstrInfo &info);

// Indices of address operands with an alignment requirement above 1 byte.
std::vector<uint32_t> misalignableOperands(const isa::InstrInfo &info);

// Every combination of the instruction's flag and enum values (all sizes
// 2, addresses 0); or, if there are more than kMaxModes, each value of each
// mode operand with the others at their defaults.
inline constexpr size_t kMaxModes = 64;
std::vector<isa::Instruction> modeInstances(const isa::InstrInfo &info);
bool modesAreCrossed(const isa::InstrInfo &info);

// "transa=1,transb=0,acc=0,dtype=f32" for the mode operands of `inst`; with
// `only` >= 0 just that operand.
std::string modeName(const isa::InstrInfo &info, const isa::Instruction &inst, int only = -1);

} // namespace npu::verify::rules
