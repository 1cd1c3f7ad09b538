// PyTorch dtypes as the ISA's element types (docs/types.md §1, §6), and
// which types an instruction accepts — read from the generated ISA tables,
// so a type the .td adds to an instruction reaches the bridge unedited.
#pragma once

#include "npu/isa/isa.h"

#include <c10/core/ScalarType.h>

#include <optional>

namespace npu::bridge {

// The ISA type storing `dtype`, if the ISA has one.
inline std::optional<isa::DType> isaType(c10::ScalarType dtype) {
  switch (dtype) {
  case c10::ScalarType::Float: return isa::DType::f32;
  case c10::ScalarType::BFloat16: return isa::DType::bf16;
  case c10::ScalarType::Half: return isa::DType::f16;
  case c10::ScalarType::Int: return isa::DType::i32;
  case c10::ScalarType::Long: return isa::DType::i64;
  case c10::ScalarType::Bool: return isa::DType::b8;
  default: return std::nullopt;
  }
}

// Whether the enum operand `operand` of instruction Inst accepts `dtype`.
template <class Inst> bool accepts(c10::ScalarType dtype, std::string_view operand = "dtype") {
  const std::optional<isa::DType> type = isaType(dtype);
  if (!type)
    return false;
  const isa::InstrInfo &info = isa::info(Inst::kOpcode);
  const int index = info.operandIndex(operand);
  return index >= 0 && info.operands[index].accepts(static_cast<uint64_t>(*type));
}

} // namespace npu::bridge
