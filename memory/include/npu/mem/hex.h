// Formatting of addresses and sizes in messages, shared by every library and
// tool (g++ 12 has no std::format).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace npu::mem::fmt {

// "0x1f", or with `digits` at least that many hex digits: "0x0000001f".
inline std::string hex(uint64_t value, int digits = 1) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*" PRIx64, digits, value);
  return text;
}

// "[0x10000000, 0x20000000)" without computing base + size, which may be 2^64.
inline std::string rangeText(uint64_t base, uint64_t size) {
  if (size != 0 && size - 1 == UINT64_MAX - base)
    return "[" + hex(base) + ", 2^64)";
  return "[" + hex(base) + ", " + hex(base + size) + ")";
}

// "1 byte", "64 bytes".
inline std::string byteCount(uint64_t count) {
  return std::to_string(count) + (count == 1 ? " byte" : " bytes");
}

} // namespace npu::mem::fmt
