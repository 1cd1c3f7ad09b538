// The storage types' conversions to and from a vector lane's 32-bit form
// (docs/types.md §2): bf16 and f16 widen exactly to binary32 and narrow with
// one rounding to nearest even; b8 reads as a mask and stores 0 or 1. The
// ISS's typed streams use these, and the RTL's stream converters are tested
// against them.
#pragma once

#include <bit>
#include <cstdint>

namespace npu::arith {

inline constexpr uint32_t kLaneNaN = 0x7fc00000u;
inline constexpr uint16_t kBf16NaN = 0x7fc0u;
inline constexpr uint16_t kF16NaN = 0x7e00u;

// bf16 is binary32's high half: widening is exact.
constexpr uint32_t widenBf16(uint16_t h) { return uint32_t(h) << 16; }

// Nearest bf16, ties to even; above the largest finite bf16 the result is
// an infinity; any NaN gives kBf16NaN.
constexpr uint16_t narrowBf16(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return kBf16NaN;
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Every f16 is a binary32, subnormals included (they become normal
// binary32 values); a NaN gives kLaneNaN.
constexpr uint32_t widenF16(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f)
    return mantissa ? kLaneNaN : sign | 0x7f800000u;
  if (exponent != 0)
    return sign | (exponent + 112) << 23 | mantissa << 13;
  if (mantissa == 0)
    return sign;
  // mantissa * 2^-24 with its leading one at bit `top` (0..9).
  const int top = 31 - std::countl_zero(mantissa);
  return sign | uint32_t(top + 103) << 23 | (mantissa << (23 - top) & 0x7fffffu);
}

// Nearest f16, ties to even, with gradual underflow (results below 2^-14
// round to multiples of 2^-24); from 65520 up the result is an infinity;
// any NaN gives kF16NaN. A binary32 denormal rounds to a zero.
constexpr uint16_t narrowF16(uint32_t x) {
  const uint16_t sign = static_cast<uint16_t>(x >> 16 & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return kF16NaN;
  const int exponent = int(magnitude >> 23) - 127;
  if (exponent >= 16)
    return sign | 0x7c00u;
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  // Units of the result's last place: 2^(exponent - 10) for a normal f16,
  // 2^-24 below; the significand's units are 2^(exponent - 23).
  const int shift = exponent >= -14 ? 13 : -1 - exponent;
  if (shift > 24)
    return sign;
  uint32_t q = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u)))
    ++q;
  // A normal result: q holds the implicit one, which the biased exponent
  // (exponent + 15) << 10 absorbs; a carry out of the significand moves to
  // the next binade (or to infinity) by itself.
  if (exponent >= -14)
    return static_cast<uint16_t>(sign | ((uint32_t(exponent + 14) << 10) + q));
  return static_cast<uint16_t>(sign | q);
}

// b8: a nonzero byte is true; a lane holds a mask (all ones or zero).
constexpr uint32_t widenB8(uint8_t b) { return b ? 0xffffffffu : 0u; }
constexpr uint8_t narrowB8(uint32_t mask) { return mask ? 1 : 0; }

} // namespace npu::arith
