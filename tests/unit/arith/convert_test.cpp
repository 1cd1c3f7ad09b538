// The storage conversions of npu/arith/convert.h against independent
// references: the host compiler's _Float16 (IEEE conversions, round to
// nearest even) for f16, and the nearest of the two neighbouring bf16 values
// computed in double for bf16.
#include "npu/arith/convert.h"
#include "operands.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace {

using namespace npu::arith;
using test::narrowingPatterns;

bool isNaN32(uint32_t x) {
  return (x & 0x7fffffffu) > 0x7f800000u;
}

uint16_t referenceF16(uint32_t x) {
  if (isNaN32(x))
    return kF16NaN;
  if ((x & 0x7f800000u) == 0) // binary32 denormals and zeros: a zero of their sign
    return static_cast<uint16_t>(x >> 16 & 0x8000u);
  return std::bit_cast<uint16_t>(static_cast<_Float16>(std::bit_cast<float>(x)));
}

uint16_t referenceBf16(uint32_t x) {
  if (isNaN32(x))
    return kBf16NaN;
  const uint32_t below = x & 0xffff0000u;
  if (below == x)
    return static_cast<uint16_t>(x >> 16);
  const uint32_t above = below + 0x10000u; // the next bf16 away from zero (or infinity)
  const auto value = [](uint32_t bits) { return double(std::bit_cast<float>(bits)); };
  // At the top of the finite range the value above is +-inf: round as if it
  // were 2^128 (one unit beyond the largest finite), as IEEE overflow does.
  const double up = (above & 0x7fffffffu) == 0x7f800000u
                        ? std::copysign(std::ldexp(1.0, 128), value(below))
                        : value(above);
  const double dx = std::fabs(value(x) - value(below)), du = std::fabs(up - value(x));
  if (dx < du)
    return static_cast<uint16_t>(below >> 16);
  if (du < dx)
    return static_cast<uint16_t>(above >> 16);
  return static_cast<uint16_t>((below >> 16) & 1u ? above >> 16 : below >> 16);
}

TEST(Convert, EveryF16WidensExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const _Float16 value = std::bit_cast<_Float16>(static_cast<uint16_t>(h));
    const uint32_t expected =
        value != value ? kLaneNaN : std::bit_cast<uint32_t>(static_cast<float>(value));
    ASSERT_EQ(widenF16(static_cast<uint16_t>(h)), expected) << std::hex << h;
  }
}

TEST(Convert, F16NarrowingRoundsToNearestEvenWithSubnormals) {
  for (uint32_t x : narrowingPatterns(13))
    ASSERT_EQ(narrowF16(x), referenceF16(x)) << std::hex << x;
  EXPECT_EQ(narrowF16(0x477fefffu), 0x7bffu); // just below 65520: the largest finite
  EXPECT_EQ(narrowF16(0x477ff000u), 0x7c00u); // 65520: a tie, to infinity
  EXPECT_EQ(narrowF16(0x33000000u), 0x0000u); // 2^-25: a tie, to +0
  EXPECT_EQ(narrowF16(0x33000001u), 0x0001u); // just above: the smallest subnormal
  EXPECT_EQ(narrowF16(0x387fc000u), 0x03ffu); // the largest subnormal
  EXPECT_EQ(narrowF16(0x387fe000u), 0x0400u); // its tie (odd) rounds up to the smallest normal
}

TEST(Convert, Bf16NarrowingRoundsToNearestEven) {
  for (uint32_t x : narrowingPatterns(16))
    ASSERT_EQ(narrowBf16(x), referenceBf16(x)) << std::hex << x;
  EXPECT_EQ(narrowBf16(0x7f7f8000u), 0x7f80u); // a tie above the largest finite: infinity
  EXPECT_EQ(narrowBf16(0x7f7f7fffu), 0x7f7fu);
  EXPECT_EQ(narrowBf16(0xff800000u), 0xff80u);
}

TEST(Convert, WideningThenNarrowingIsTheIdentity) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    const bool f16NaN = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    EXPECT_EQ(narrowF16(widenF16(half)), f16NaN ? kF16NaN : half) << std::hex << h;
    const bool bf16NaN = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
    EXPECT_EQ(narrowBf16(widenBf16(half)), bf16NaN ? kBf16NaN : half) << std::hex << h;
  }
}

TEST(Convert, B8IsAMaskInTheLaneAndZeroOrOneInMemory) {
  EXPECT_EQ(widenB8(0), 0u);
  for (uint32_t b = 1; b < 256; ++b)
    EXPECT_EQ(widenB8(static_cast<uint8_t>(b)), 0xffffffffu);
  EXPECT_EQ(narrowB8(0), 0);
  EXPECT_EQ(narrowB8(0xffffffffu), 1);
}

} // namespace
