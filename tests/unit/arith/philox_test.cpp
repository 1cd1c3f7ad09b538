// npu/arith/philox.h against the published Philox4x32-10 known-answer
// vectors (Random123's kat_vectors) and against an independent
// implementation written here differently: 16-bit limb products instead of
// 64-bit ones, round keys as seed + r * W instead of a running bump, the
// round's permutation spelled out on named words.
#include "npu/arith/philox.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

namespace {

using namespace npu::arith;

// The 64-bit product of two u32 from four 16 x 16-bit partial products.
struct Product {
  uint32_t low, high;
};
Product schoolbook(uint32_t a, uint32_t b) {
  const uint32_t a0 = a & 0xffffu, a1 = a >> 16, b0 = b & 0xffffu, b1 = b >> 16;
  const uint32_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  // The middle column: the high half of p00 plus the low halves of the cross
  // products (at most 3 * 0xffff, no overflow).
  const uint32_t middle = (p00 >> 16) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return {(middle << 16) | (p00 & 0xffffu), p11 + (p01 >> 16) + (p10 >> 16) + (middle >> 16)};
}

std::array<uint32_t, 4> independentPhilox(std::array<uint32_t, 4> ctr, uint32_t key0,
                                          uint32_t key1) {
  for (uint32_t r = 0; r < 10; ++r) {
    const uint32_t k0 = key0 + r * 0x9e3779b9u, k1 = key1 + r * 0xbb67ae85u;
    const Product p0 = schoolbook(0xd2511f53u, ctr[0]);
    const Product p1 = schoolbook(0xcd9e8d57u, ctr[2]);
    const uint32_t x0 = p1.high ^ ctr[1] ^ k0;
    const uint32_t x1 = p1.low;
    const uint32_t x2 = p0.high ^ ctr[3] ^ k1;
    const uint32_t x3 = p0.low;
    ctr = {x0, x1, x2, x3};
  }
  return ctr;
}

struct KnownAnswer {
  PhiloxCounter ctr;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123 1.14, examples/kat_vectors, the three philox4x32 10-round lines.
constexpr KnownAnswer kKnownAnswers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

TEST(Philox, MatchesThePublishedKnownAnswers) {
  for (const KnownAnswer &kat : kKnownAnswers) {
    EXPECT_EQ(philox4x32_10(kat.ctr, kat.key), kat.expected) << std::hex << kat.ctr[0];
    EXPECT_EQ(independentPhilox(kat.ctr, kat.key[0], kat.key[1]), kat.expected)
        << std::hex << kat.ctr[0];
  }
}

TEST(Philox, LaneProductsMatchTheSchoolbookProduct) {
  std::mt19937 gen(15);
  const uint32_t edges[] = {0, 1, 0xffffu, 0x10000u, 0x7fffffffu, 0x80000000u, 0xffffffffu};
  for (uint32_t a : edges)
    for (uint32_t b : edges) {
      EXPECT_EQ(mulLow(a, b), schoolbook(a, b).low) << a << " * " << b;
      EXPECT_EQ(mulHigh(a, b), schoolbook(a, b).high) << a << " * " << b;
    }
  for (int i = 0; i < 100000; ++i) {
    const uint32_t a = gen(), b = gen();
    ASSERT_EQ(mulLow(a, b), schoolbook(a, b).low) << a << " * " << b;
    ASSERT_EQ(mulHigh(a, b), schoolbook(a, b).high) << a << " * " << b;
  }
}

TEST(Philox, MatchesTheIndependentImplementationOnRandomBlocks) {
  std::mt19937 gen(5);
  for (int i = 0; i < 20000; ++i) {
    const PhiloxCounter ctr = {static_cast<uint32_t>(gen()), static_cast<uint32_t>(gen()),
                               static_cast<uint32_t>(gen()), static_cast<uint32_t>(gen())};
    const PhiloxKey key = {static_cast<uint32_t>(gen()), static_cast<uint32_t>(gen())};
    ASSERT_EQ(philox4x32_10(ctr, key), independentPhilox(ctr, key[0], key[1])) << i;
  }
}

// Element i is word i mod 4 of the block offset + i / 4, a 64-bit counter in
// words 0 and 1: the carry into word 1 and the seed's halves are where a
// layout mistake would show.
TEST(Philox, ElementsTakeTheWordsOfTheirBlock) {
  const uint64_t seeds[] = {0, 0x123456789abcdef0u, ~uint64_t{0}};
  const uint64_t offsets[] = {0, 7, 0xfffffffeu, 0xffffffffffffffffu};
  for (uint64_t seed : seeds)
    for (uint64_t offset : offsets)
      for (uint64_t i = 0; i < 16; ++i) {
        const uint64_t block = offset + i / 4;
        const auto words = independentPhilox(
            {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
            static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
        EXPECT_EQ(philoxElement(seed, offset, i), words[i % 4])
            << std::hex << seed << " " << offset << " " << i;
      }
}

// Advancing the offset by n / 4 continues the stream: rand(8, offset 0) is
// rand(4, offset 0) followed by rand(4, offset 1).
TEST(Philox, TheOffsetContinuesTheStream) {
  const uint64_t seed = 0x0123456789abcdefu;
  for (uint64_t i = 0; i < 64; ++i)
    EXPECT_EQ(philoxElement(seed, 3, i + 4 * 5), philoxElement(seed, 8, i)) << i;
  // Different seeds and offsets give different streams.
  EXPECT_NE(philoxElement(seed, 0, 0), philoxElement(seed + 1, 0, 0));
  EXPECT_NE(philoxElement(seed, 0, 0), philoxElement(seed, 1, 0));
  EXPECT_NE(philoxElement(seed, 0, 0), philoxElement(seed ^ uint64_t{1} << 40, 0, 0));
}

TEST(Philox, UniformsAreTheTop24BitsTimes2ToTheMinus24) {
  EXPECT_EQ(uniformFromBits(0), 0.0f);
  EXPECT_EQ(uniformFromBits(0xffu), 0.0f);
  EXPECT_EQ(uniformFromBits(0x100u), 0x1p-24f);
  EXPECT_EQ(uniformFromBits(0xffffffffu), 1.0f - 0x1p-24f);
  std::mt19937 gen(24);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t x = gen();
    const double exact = static_cast<double>(x >> 8) / 16777216.0;
    ASSERT_EQ(static_cast<double>(uniformFromBits(x)), exact) << x;
  }
}

} // namespace
