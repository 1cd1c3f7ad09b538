// Integer-only implementation of the lane primitives (docs/arith.md §2).
#include "npu/arith/softfloat.h"

#include <bit>
#include <utility>

namespace npu::arith::soft {

namespace {

using u128 = unsigned __int128;

constexpr int kBias = 127;
constexpr int kFractionBits = 23;
constexpr uint32_t kFractionMask = 0x007fffffu;
constexpr uint32_t kHiddenBit = 0x00800000u;

constexpr bool signOf(uint32_t a) {
  return (a & kSignBit) != 0;
}
constexpr uint32_t signedZero(bool negative) {
  return negative ? kSignBit : 0u;
}
constexpr uint32_t signedInfinity(bool negative) {
  return signedZero(negative) | kPositiveInfinity;
}
constexpr int biasedExponent(uint32_t a) {
  return static_cast<int>((a >> kFractionBits) & 0xff);
}
// The 24-bit significand of a normal number (value = significand * 2^(E - 150)).
constexpr uint32_t significand(uint32_t a) {
  return (a & kFractionMask) | kHiddenBit;
}
constexpr int significandExponent(uint32_t a) {
  return biasedExponent(a) - kBias - kFractionBits;
}

// Shifts right by `count`, ORing every bit shifted out into bit 0 so that
// rounding still sees that the value was inexact.
u128 shiftRightJam(u128 v, int count) {
  if (count <= 0)
    return v;
  if (count >= 128)
    return v != 0;
  u128 lost = v & ((u128(1) << count) - 1);
  return (v >> count) | (lost != 0);
}

int bitWidth(u128 v) {
  uint64_t hi = static_cast<uint64_t>(v >> 64);
  return hi ? 64 + std::bit_width(hi) : std::bit_width(static_cast<uint64_t>(v));
}

// sign * magnitude * 2^exponent rounded to nearest even with an unbounded
// exponent range; then results below 2^-126 become signed zeros and results
// of 2^128 or more become infinities.
uint32_t roundPack(bool negative, int exponent, u128 magnitude) {
  if (magnitude == 0)
    return signedZero(negative);
  // Keep 24 significant bits plus a round bit and a sticky bit.
  int width = bitWidth(magnitude);
  int drop = width - 26;
  if (drop > 0) {
    magnitude = shiftRightJam(magnitude, drop);
    exponent += drop;
  } else {
    magnitude <<= -drop;
    exponent += drop;
  }
  uint32_t bits = static_cast<uint32_t>(magnitude); // 26 bits: [25:2] kept, [1] round, [0] sticky
  uint32_t kept = bits >> 2;
  uint32_t rest = bits & 3;
  if (rest > 2 || (rest == 2 && (kept & 1)))
    ++kept;
  exponent += 2;
  if (kept == (1u << 24)) {
    kept >>= 1;
    ++exponent;
  }
  // kept * 2^exponent with kept in [2^23, 2^24): the unbiased exponent of
  // the value is exponent + 23.
  int biased = exponent + kFractionBits + kBias;
  if (biased >= 255)
    return signedInfinity(negative);
  if (biased <= 0)
    return signedZero(negative);
  return signedZero(negative) | (static_cast<uint32_t>(biased) << kFractionBits) |
         (kept & kFractionMask);
}

// A finite float as sign * significand * 2^exponent (significand 0 for zeros
// and denormals, which the primitives read as zeros).
struct Finite {
  bool negative;
  int exponent;
  uint32_t significand;
};

Finite unpack(uint32_t a) {
  if (isZeroOrDenormal(a))
    return {signOf(a), 0, 0};
  return {signOf(a), significandExponent(a), significand(a)};
}

// Exact sum of two finite values given as sign, exponent and a magnitude of
// at most 112 bits, then rounded. The operand with the larger exponent is
// placed at bit 112 - its width; the other is aligned to it with jamming,
// which keeps the rounding exact (the lost bits lie far below the round bit).
uint32_t addFinite(bool negA, int expA, u128 magA, bool negB, int expB, u128 magB) {
  if (magA == 0 && magB == 0)
    return signedZero(negA && negB);
  if (magA == 0)
    return roundPack(negB, expB, magB);
  if (magB == 0)
    return roundPack(negA, expA, magA);
  // Normalise both to have their top bit at bit 111.
  int shiftA = 112 - bitWidth(magA);
  int shiftB = 112 - bitWidth(magB);
  magA <<= shiftA;
  expA -= shiftA;
  magB <<= shiftB;
  expB -= shiftB;
  if (expA < expB) {
    std::swap(negA, negB);
    std::swap(expA, expB);
    std::swap(magA, magB);
  }
  magB = shiftRightJam(magB, expA - expB);
  if (negA == negB)
    return roundPack(negA, expA, magA + magB);
  if (magA == magB)
    return signedZero(false); // exact cancellation is +0 when rounding to nearest
  if (magA > magB)
    return roundPack(negA, expA, magA - magB);
  return roundPack(negB, expA, magB - magA);
}

// Order of non-NaN canonical values with -0 below +0.
int32_t orderKey(uint32_t a) {
  int32_t magnitude = static_cast<int32_t>(a & ~kSignBit);
  return signOf(a) ? -magnitude - 1 : magnitude;
}

} // namespace

uint32_t roundToFloat(bool negative, int exponent, uint64_t magnitude) {
  return roundPack(negative, exponent, magnitude);
}

uint32_t fadd(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return kCanonicalNan;
  if (isInfinity(a) || isInfinity(b)) {
    if (isInfinity(a) && isInfinity(b) && signOf(a) != signOf(b))
      return kCanonicalNan;
    return isInfinity(a) ? a : b;
  }
  Finite x = unpack(a), y = unpack(b);
  return addFinite(x.negative, x.exponent, x.significand, y.negative, y.exponent, y.significand);
}

uint32_t fsub(uint32_t a, uint32_t b) {
  // a - b is a + (-b) exactly, NaN operands included (the result is canonical).
  return fadd(a, isNan(b) ? b : b ^ kSignBit);
}

uint32_t fmul(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return kCanonicalNan;
  bool negative = signOf(a) != signOf(b);
  if (isInfinity(a) || isInfinity(b)) {
    if (isZeroOrDenormal(a) || isZeroOrDenormal(b))
      return kCanonicalNan;
    return signedInfinity(negative);
  }
  Finite x = unpack(a), y = unpack(b);
  return roundPack(negative, x.exponent + y.exponent,
                   static_cast<u128>(uint64_t(x.significand) * y.significand));
}

uint32_t ffma(uint32_t a, uint32_t b, uint32_t c) {
  if (isNan(a) || isNan(b) || isNan(c))
    return kCanonicalNan;
  bool productNegative = signOf(a) != signOf(b);
  bool productZero = isZeroOrDenormal(a) || isZeroOrDenormal(b);
  if (isInfinity(a) || isInfinity(b)) {
    if (productZero)
      return kCanonicalNan;
    if (isInfinity(c) && signOf(c) != productNegative)
      return kCanonicalNan;
    return signedInfinity(productNegative);
  }
  if (isInfinity(c))
    return c;
  Finite x = unpack(a), y = unpack(b), z = unpack(c);
  return addFinite(productNegative, x.exponent + y.exponent,
                   static_cast<u128>(uint64_t(x.significand) * y.significand), z.negative,
                   z.exponent, z.significand);
}

uint32_t fmin(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return kCanonicalNan;
  a = canonical(a);
  b = canonical(b);
  return orderKey(a) <= orderKey(b) ? a : b;
}

uint32_t fmax(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return kCanonicalNan;
  a = canonical(a);
  b = canonical(b);
  return orderKey(a) >= orderKey(b) ? a : b;
}

uint32_t fabs(uint32_t a) {
  return canonical(a) & (isNan(a) ? ~0u : ~kSignBit);
}

uint32_t fneg(uint32_t a) {
  return isNan(a) ? kCanonicalNan : canonical(a) ^ kSignBit;
}

uint32_t flt(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return 0;
  a = canonical(a);
  b = canonical(b);
  // -0 and +0 compare equal.
  if ((a | b) == kSignBit || (a | b) == 0)
    return 0;
  return orderKey(a) < orderKey(b) ? ~0u : 0u;
}

uint32_t fle(uint32_t a, uint32_t b) {
  if (isNan(a) || isNan(b))
    return 0;
  a = canonical(a);
  b = canonical(b);
  if (((a | b) & ~kSignBit) == 0)
    return ~0u;
  return orderKey(a) <= orderKey(b) ? ~0u : 0u;
}

uint32_t fisnan(uint32_t a) {
  return isNan(a) ? ~0u : 0u;
}

uint32_t fround(uint32_t a) {
  if (isNan(a))
    return kCanonicalNan;
  a = canonical(a);
  int e = biasedExponent(a);
  if (e >= kBias + kFractionBits) // |a| >= 2^23: already integral (or infinite)
    return a;
  if (e < kBias - 1) // |a| < 0.5
    return a & kSignBit;
  // 0.5 <= |a| < 2^23: round the fixed-point significand at the binary point.
  int fractionBits = kBias + kFractionBits - e; // 1..24
  uint32_t m = significand(a);
  uint32_t integer = m >> fractionBits;
  uint32_t rest = m & ((1u << fractionBits) - 1);
  uint32_t half = 1u << (fractionBits - 1);
  if (rest > half || (rest == half && (integer & 1)))
    ++integer;
  return roundPack(signOf(a), 0, integer);
}

uint32_t f2i(uint32_t a) {
  if (isNan(a))
    return 0;
  a = canonical(a);
  bool negative = signOf(a);
  int e = biasedExponent(a);
  if (e >= kBias + 31) // |a| >= 2^31
    return negative ? 0x80000000u : 0x7fffffffu;
  uint32_t r = fround(a);
  if (isZeroOrDenormal(r))
    return 0;
  uint32_t magnitude = significand(r);
  int shift = significandExponent(r);
  uint64_t value = shift >= 0 ? uint64_t(magnitude) << shift : magnitude >> -shift;
  if (!negative)
    return value > 0x7fffffffu ? 0x7fffffffu : static_cast<uint32_t>(value);
  return static_cast<uint32_t>(-static_cast<int64_t>(value));
}

uint32_t i2f(uint32_t a) {
  bool negative = signOf(a);
  uint32_t magnitude = negative ? (~a + 1) : a; // 0x80000000 stays 2^31
  return roundPack(negative, 0, magnitude);
}

namespace {

// |a| truncated toward zero as an integer, for |a| < 2^64 (callers saturate
// larger magnitudes first); denormals and |a| < 1 give 0.
uint64_t truncatedMagnitude(uint32_t a) {
  if (isZeroOrDenormal(a))
    return 0;
  const int shift = significandExponent(a);
  const uint64_t m = significand(a);
  if (shift >= 0)
    return m << shift;
  return shift <= -24 ? 0 : m >> -shift;
}

// a truncated toward zero as an int64, saturating; NaN gives 0.
uint64_t truncateToInt64(uint32_t a) {
  if (isNan(a))
    return 0;
  const bool negative = signOf(a);
  if (biasedExponent(a) >= kBias + 63) // |a| >= 2^63 (-2^63 itself saturates to itself)
    return negative ? 0x8000000000000000u : 0x7fffffffffffffffu;
  const uint64_t magnitude = truncatedMagnitude(a);
  return negative ? 0 - magnitude : magnitude;
}

} // namespace

uint32_t f2iz(uint32_t a) {
  if (isNan(a))
    return 0;
  const bool negative = signOf(a);
  if (biasedExponent(a) >= kBias + 31) // |a| >= 2^31
    return negative ? 0x80000000u : 0x7fffffffu;
  const uint64_t magnitude = truncatedMagnitude(a);
  return static_cast<uint32_t>(negative ? 0 - magnitude : magnitude);
}

uint32_t f2lzlo(uint32_t a) {
  return static_cast<uint32_t>(truncateToInt64(a));
}

uint32_t f2lzhi(uint32_t a) {
  return static_cast<uint32_t>(truncateToInt64(a) >> 32);
}

uint32_t l2f(uint32_t lo, uint32_t hi) {
  const uint64_t value = uint64_t(hi) << 32 | lo;
  const bool negative = signOf(hi);
  const uint64_t magnitude = negative ? 0 - value : value; // -2^63 stays 2^63
  return roundPack(negative, 0, magnitude);
}

} // namespace npu::arith::soft
