#include "Emitters.h"

#include "llvm/ADT/StringExtras.h"

namespace npu::tblgen {

std::string verilogSlot(const InstructionDef &inst, int index) {
  const BitRange &slot = inst.operands[index].slot;
  return "packet[" + std::to_string(slot.offset) + " +: " + std::to_string(slot.width) + "]";
}

std::string verilogSlot32(const InstructionDef &inst, int index) {
  const std::string field = verilogSlot(inst, index);
  return inst.operands[index].slot.width == 32 ? field : "32'(" + field + ")";
}

std::string camelCase(const std::string &snake) {
  std::string out;
  bool upper = true;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? llvm::toUpper(c) : llvm::toLower(c);
    upper = false;
  }
  return out;
}

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace npu::tblgen
