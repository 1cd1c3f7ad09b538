// The golden model of the vector-lane primitives of docs/arith.md, written
// with integer arithmetic only so that it does not depend on the host FPU or
// its control register. Every function takes and returns 32-bit patterns.
//
// Floating-point primitives treat denormal inputs as signed zeros, round to
// nearest even, flush results that are tiny after rounding (|r| < 2^-126 with
// the exponent range unbounded) to a zero of the result's sign, and return
// kCanonicalNan for every NaN result.
#pragma once

#include <cstdint>

namespace npu::arith::soft {

inline constexpr uint32_t kCanonicalNan = 0x7fc00000u;
inline constexpr uint32_t kSignBit = 0x80000000u;
inline constexpr uint32_t kExponentMask = 0x7f800000u;
inline constexpr uint32_t kPositiveInfinity = 0x7f800000u;

constexpr bool isNan(uint32_t a) {
  return (a & ~kSignBit) > kExponentMask;
}
constexpr bool isInfinity(uint32_t a) {
  return (a & ~kSignBit) == kExponentMask;
}
// True for zeros and denormals alike: both are zeros to the primitives.
constexpr bool isZeroOrDenormal(uint32_t a) {
  return (a & kExponentMask) == 0;
}

// The form every register holds after a float primitive: denormals become a
// zero of the same sign, NaNs become kCanonicalNan, all else is unchanged.
constexpr uint32_t canonical(uint32_t a) {
  if (isNan(a))
    return kCanonicalNan;
  return isZeroOrDenormal(a) ? (a & kSignBit) : a;
}

uint32_t fadd(uint32_t a, uint32_t b);
uint32_t fsub(uint32_t a, uint32_t b);
uint32_t fmul(uint32_t a, uint32_t b);
// a * b + c with a single rounding.
uint32_t ffma(uint32_t a, uint32_t b, uint32_t c);
// NaN if either operand is NaN; -0 is smaller than +0.
uint32_t fmin(uint32_t a, uint32_t b);
uint32_t fmax(uint32_t a, uint32_t b);
uint32_t fabs(uint32_t a);
uint32_t fneg(uint32_t a);
// All-ones when the ordered comparison holds, else 0 (false when a NaN is involved).
uint32_t flt(uint32_t a, uint32_t b);
uint32_t fle(uint32_t a, uint32_t b);
uint32_t fisnan(uint32_t a);
// Nearest integral value, ties to even, as binary32.
uint32_t fround(uint32_t a);
// Nearest int32, ties to even; saturates to INT32_MIN/INT32_MAX; NaN gives 0.
uint32_t f2i(uint32_t a);
// int32 (two's complement) to binary32, round to nearest even.
uint32_t i2f(uint32_t a);

// Toward zero (truncation), saturating at the int32 range; NaN gives 0
// (docs/types.md §3, the float-to-integer cast).
uint32_t f2iz(uint32_t a);
// The low and high words of a truncated toward zero as an int64,
// saturating at the int64 range; NaN gives 0.
uint32_t f2lzlo(uint32_t a);
uint32_t f2lzhi(uint32_t a);
// The int64 (hi:lo) to binary32, one rounding to nearest even.
uint32_t l2f(uint32_t lo, uint32_t hi);

// The integer primitives of docs/types.md §4 on 32-bit patterns.
constexpr uint32_t imul(uint32_t a, uint32_t b) {
  return a * b;
}
constexpr uint32_t imulhu(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((uint64_t(a) * b) >> 32);
}
constexpr uint32_t ieq(uint32_t a, uint32_t b) {
  return a == b ? ~0u : 0u;
}
constexpr uint32_t ilt(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(a) < static_cast<int32_t>(b) ? ~0u : 0u;
}
constexpr uint32_t iltu(uint32_t a, uint32_t b) {
  return a < b ? ~0u : 0u;
}
// Variable shifts: the amount b is unsigned; from 32 up every bit is
// shifted out (PyTorch's results for such amounts, not C's undefined
// behaviour).
constexpr uint32_t ishlv(uint32_t a, uint32_t b) {
  return b < 32 ? a << b : 0u;
}
constexpr uint32_t ishrv(uint32_t a, uint32_t b) {
  return b < 32 ? a >> b : 0u;
}
constexpr uint32_t israv(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(static_cast<int32_t>(a) >> (b < 32 ? b : 31));
}

// Rounds sign * magnitude * 2^exponent to binary32 with the rules above
// (magnitude may be 0). Shared with the tests' correctly rounded references.
uint32_t roundToFloat(bool negative, int exponent, uint64_t magnitude);

} // namespace npu::arith::soft
