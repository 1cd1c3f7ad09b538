#include "Emitters.h"

#include "llvm/ADT/StringExtras.h"

namespace npu::tblgen {

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
