// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011; the Random123 library's philox4x32 with 10
// rounds), the counter-based generator docs/types.md §5 names for RAND and
// RANDN, and the element layout docs/arith.md §3.5 gives them. A block is a
// pure function of its counter and key, so every backend reproduces the
// same bits from (seed, offset) and a lane computes its element's block with
// no state shared between lanes. The round uses only the lane primitives
// imul, imulhu, ixor and iadd (docs/arith.md §2), which is what lets the
// vector engine run it as a recipe.
#pragma once

#include <array>
#include <cstdint>

namespace npu::arith {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// The round multipliers and the key schedule's Weyl increments (the
// golden ratio and sqrt(3) - 1 in 0.32 fixed point), Random123's
// PHILOX_M4x32_0/1 and PHILOX_W32_0/1.
inline constexpr uint32_t kPhiloxM0 = 0xd2511f53u, kPhiloxM1 = 0xcd9e8d57u;
inline constexpr uint32_t kPhiloxW0 = 0x9e3779b9u, kPhiloxW1 = 0xbb67ae85u;
inline constexpr int kPhiloxRounds = 10;

// The low and high words of the 64-bit product of two u32: the lanes' imul
// and imulhu.
constexpr uint32_t mulLow(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(uint64_t{a} * b);
}
constexpr uint32_t mulHigh(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((uint64_t{a} * b) >> 32);
}

// One round: the products of words 0 and 2 with M0 and M1; their high words,
// xored with the other two words and the key, become words 0 and 2, their
// low words words 3 and 1 (the S-box and the permutation of Random123's
// philox4x32round).
constexpr PhiloxCounter philoxRound(const PhiloxCounter &c, const PhiloxKey &k) {
  return {mulHigh(kPhiloxM1, c[2]) ^ c[1] ^ k[0], mulLow(kPhiloxM1, c[2]),
          mulHigh(kPhiloxM0, c[0]) ^ c[3] ^ k[1], mulLow(kPhiloxM0, c[0])};
}

// Ten rounds, the key bumped by (W0, W1) between consecutive rounds (round r
// uses key + r * W, modulo 2^32 per word).
constexpr PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  for (int r = 0; r < kPhiloxRounds; ++r) {
    if (r > 0)
      k = {k[0] + kPhiloxW0, k[1] + kPhiloxW1};
    c = philoxRound(c, k);
  }
  return c;
}

// Element i of RAND's stream for (seed, offset) (docs/arith.md §3.5): word
// i mod 4 of the block whose counter is the 64-bit offset + floor(i / 4) in
// words 0 (low) and 1 (high), words 2 and 3 zero, keyed by the seed (word 0
// its low half).
constexpr uint32_t philoxElement(uint64_t seed, uint64_t offset, uint64_t i) {
  const uint64_t block = offset + i / 4;
  const PhiloxCounter words =
      philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return words[i % 4];
}

// The uniform binary32 in [0, 1) of a random word: its top 24 bits times
// 2^-24, exact (every value k * 2^-24, k < 2^24, is a binary32).
constexpr float uniformFromBits(uint32_t x) {
  return static_cast<float>(x >> 8) * 0x1p-24f;
}

} // namespace npu::arith
