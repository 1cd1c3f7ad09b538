// The distance between two binary32 results, in units in the last place:
// how far a device's result is from the expected one.
#pragma once

#include "npu/arith/softfloat.h"

#include <cstdint>

namespace npu::arith {

// What ulpDistance returns for a NaN compared with a number.
inline constexpr uint64_t kUnorderedUlp = UINT64_MAX;

// The number of binary32 values from a to b (-0 and +0 are equal), two NaNs
// counting as equal whatever their payloads, and a NaN and a number as
// kUnorderedUlp.
constexpr uint64_t ulpDistance(uint32_t a, uint32_t b) {
  if (soft::isNan(a) || soft::isNan(b))
    return soft::isNan(a) && soft::isNan(b) ? 0 : kUnorderedUlp;
  const auto ordered = [](uint32_t u) {
    return u & soft::kSignBit ? -int64_t(u & ~soft::kSignBit) : int64_t(u);
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

} // namespace npu::arith
