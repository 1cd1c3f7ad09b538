// Operand generators shared by the arithmetic tests: special values, values
// at the denormal and tininess boundaries, the rounding neighbourhoods of
// the storage conversions, and random bit patterns.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace npu::arith::test {

// Zeros, denormals, the normal range's ends, infinities, NaNs with and
// without payload and sign, and values around 1, 2^23, 2^24 and 2^31.
inline std::vector<uint32_t> specialValues() {
  std::vector<uint32_t> v = {
      0x00000000, 0x00000001, 0x00000100, 0x003fffff, 0x00400000,
      0x007fffff, // +0, denormals
      0x00800000, 0x00800001, 0x00ffffff, 0x01000000, 0x0d800000,
      0x1f800000, // small normals
      0x20000000, 0x20000001, 0x1fffffff, 0x33800000, 0x34000000,
      0x3effffff, // 2^-63, 2^-24, ...
      0x3f000000, 0x3f000001, 0x3f7fffff, 0x3f800000, 0x3f800001,
      0x3fc00000, // 0.5, 1, 1.5
      0x3fffffff, 0x40000000, 0x40400000, 0x4b000000, 0x4b000001,
      0x4b400000, // 2, 3, 2^23
      0x4b7fffff, 0x4b800000, 0x4effffff, 0x4f000000, 0x4f000001,
      0x5f000000,                                                 // 2^24, 2^31
      0x7effffff, 0x7f000000, 0x7f7fffff,                         // large, max
      0x7f800000, 0x7f800001, 0x7fc00000, 0x7fc00001, 0x7fffffff, // inf, NaNs
      0x3eaaaaab, 0x3dcccccd, 0x40490fdb, 0x42b17218, 0x42b17217,
      0xc2aeac50, // 1/3, 0.1, pi, exp limits
  };
  size_t positives = v.size();
  for (size_t i = 0; i < positives; ++i)
    v.push_back(v[i] | 0x80000000u);
  return v;
}

// Binary32 patterns for a conversion to a narrower float whose last place
// lies `lowBits` bits up (13 for f16, 16 for bf16): around every place a
// rounding decision changes, each narrow value's neighbourhood (ties and one
// unit of binary32 either side) in every binade of both signs, the
// subnormal and overflow thresholds and the specials among them, plus
// 4 million uniform random patterns.
inline std::vector<uint32_t> narrowingPatterns(int lowBits) {
  std::vector<uint32_t> out;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t top = 0; top < 1024; top += 3) {
        const uint32_t base = sign | exponent << 23 | top << 13;
        for (int32_t delta : {0, 1, -1, (1 << (lowBits - 1)), (1 << (lowBits - 1)) - 1,
                              (1 << (lowBits - 1)) + 1, (1 << lowBits) - 1})
          out.push_back(base + static_cast<uint32_t>(delta));
      }
  std::mt19937 rng(7);
  for (int i = 0; i < 4'000'000; ++i)
    out.push_back(rng());
  return out;
}

// 32-bit integer patterns where integer primitives change behaviour: 0, the
// extremes of int32 and uint32, every power of two and its neighbours of
// both signs, and the shift amounts around the 32-bit width.
inline std::vector<uint32_t> integerEdgeValues() {
  std::vector<uint32_t> v = {0u,          1u,          2u,          31u,         32u,
                             33u,         63u,         64u,         0x7fffffffu, 0x80000000u,
                             0x80000001u, 0xfffffffeu, 0xffffffffu, 0xffffffe0u, 0xffffffe1u};
  for (uint32_t k = 0; k < 32; ++k)
    for (uint32_t d : {0xffffffffu, 0u, 1u}) {
      v.push_back((1u << k) + d);
      v.push_back(0u - (1u << k) + d);
    }
  return v;
}

// int64 values as (low word, high word): every power of two and its
// neighbours of both signs, the int64 extremes, and the rounding
// neighbourhoods of a conversion to binary32 (a 24-bit significand) at
// every binade: ties, one either side, and ties decided only by a low bit
// far below (the sticky bits of a 64-bit source).
inline std::vector<std::pair<uint32_t, uint32_t>> int64EdgePairs() {
  using u64 = uint64_t;
  const u64 one = 1, all = ~u64{0};
  std::vector<u64> values = {0,         1,         all,      all >> 1, ~(all >> 1), ~(all >> 1) + 1,
                             all >> 32, one << 32, all << 32};
  for (int k = 0; k < 64; ++k)
    for (u64 d : {all, u64{0}, one, u64{2}}) {
      values.push_back((one << k) + d);
      values.push_back(0 - (one << k) + d);
    }
  for (int top = 24; top < 63; ++top) {
    const u64 lead = one << top, half = one << (top - 24);
    for (u64 significand : {lead, lead + (one << (top - 23)), (lead << 1) - (half << 1)})
      for (u64 low : {half, half - 1, half + 1, half | one, u64{0}}) {
        values.push_back(significand + low);
        values.push_back(0 - (significand + low));
      }
  }
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (u64 v : values)
    out.emplace_back(static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32));
  return out;
}

// Binary32 patterns around the places a truncating conversion changes: every
// binade from 2^-2 to 2^64 (the integer boundaries and the int32 and int64
// ranges' ends) with a few significands and one unit either side, both signs.
inline std::vector<uint32_t> truncationPatterns() {
  std::vector<uint32_t> out;
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t exponent = 125; exponent <= 191; ++exponent)
      for (uint32_t fraction : {0u, 1u, 0x400000u, 0x7fffffu, 0x7ffffeu, 0x000100u, 0x3fffffu})
        out.push_back(sign | exponent << 23 | fraction);
  return out;
}

// Random operands: half uniform bit patterns, half with exponents near the
// middle of the range so that sums, products and fused products of them
// exercise cancellation and rounding rather than only overflow.
class OperandSource {
public:
  explicit OperandSource(uint64_t seed) : rng_(seed) {}

  uint32_t any() { return static_cast<uint32_t>(rng_()); }

  uint32_t moderate() {
    auto r = static_cast<uint32_t>(rng_());
    uint32_t exponent = 96 + (r >> 23) % 64;
    return (r & 0x807fffffu) | (exponent << 23);
  }

  uint32_t mixed() {
    switch (rng_() % 4) {
    case 0: return any();
    case 1: {
      const std::vector<uint32_t> &s = specials();
      return s[rng_() % s.size()];
    }
    default: return moderate();
    }
  }

  // A value whose exponent lies within `spread` of `base`'s, random sign
  // and mantissa: operands that cancel when added.
  uint32_t near(uint32_t base, unsigned spread) {
    auto r = static_cast<uint32_t>(rng_());
    int exponent = static_cast<int>((base >> 23) & 0xff) + static_cast<int>(r % (2 * spread + 1)) -
                   static_cast<int>(spread);
    exponent = exponent < 1 ? 1 : (exponent > 254 ? 254 : exponent);
    return (r & 0x807fffffu) | (static_cast<uint32_t>(exponent) << 23);
  }

  std::mt19937_64 &rng() { return rng_; }

private:
  const std::vector<uint32_t> &specials() {
    static const std::vector<uint32_t> s = specialValues();
    return s;
  }
  std::mt19937_64 rng_;
};

} // namespace npu::arith::test
