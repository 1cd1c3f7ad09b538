// The reference model's cast element (npu::sim::reference::castElement,
// docs/types.md §3) on every pair of types over their edge values, against
// an oracle written on the host's own conversions (double truncation with
// explicit saturation, the compiler's int64 and _Float16 conversions), and
// on hand-computed cases for each rule of §3.
#include "npu/arith/convert.h"
#include "npu/sim/reference.h"
#include "type_pairs.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

namespace npu::sim::reference {
namespace {

using isa::DType;

bool isFloat(DType t) {
  return t == DType::f32 || t == DType::bf16 || t == DType::f16;
}

// A float element as the lanes read it, on the host: a denormal binary32 is
// a zero of its sign (f16 has none once widened).
float hostFloat(DType type, uint64_t storage) {
  float x;
  if (type == DType::f16)
    return static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(storage)));
  const uint32_t bits =
      type == DType::bf16 ? static_cast<uint32_t>(storage) << 16 : static_cast<uint32_t>(storage);
  x = std::bit_cast<float>(bits);
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

uint64_t oracle(DType from, DType to, uint64_t storage) {
  const bool floatSource = isFloat(from);
  const float x = floatSource ? hostFloat(from, storage) : 0.0f;
  const int64_t v = from == DType::i32   ? static_cast<int32_t>(static_cast<uint32_t>(storage))
                    : from == DType::i64 ? static_cast<int64_t>(storage)
                    : from == DType::b8  ? (static_cast<uint8_t>(storage) != 0)
                                         : 0;
  if (isFloat(to)) {
    // The integer rounds to binary32 once (cvtsi2ss of all 64 bits), then
    // the store rounds to the narrower type.
    const float f = floatSource ? x : static_cast<float>(v);
    if (std::isnan(f))
      return to == DType::f32    ? arith::kLaneNaN
             : to == DType::bf16 ? arith::kBf16NaN
                                 : arith::kF16NaN;
    if (to == DType::f32)
      return std::bit_cast<uint32_t>(f);
    if (to == DType::f16)
      return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    return arith::narrowBf16(std::bit_cast<uint32_t>(f));
  }
  if (to == DType::b8)
    return floatSource ? (x != 0.0f || std::isnan(x)) : v != 0;
  if (!floatSource)
    return to == DType::i32 ? static_cast<uint32_t>(v) : static_cast<uint64_t>(v);
  const double limit = to == DType::i32 ? 2147483648.0 : 9223372036854775808.0;
  const double t = std::trunc(static_cast<double>(x));
  const int64_t r = std::isnan(x) ? 0
                    : t >= limit  ? (to == DType::i32 ? INT32_MAX : INT64_MAX)
                    : t < -limit  ? (to == DType::i32 ? INT32_MIN : INT64_MIN)
                                  : static_cast<int64_t>(t);
  return to == DType::i32 ? static_cast<uint32_t>(r) : static_cast<uint64_t>(r);
}

TEST(CastReference, EveryPairAgreesWithTheHostOracle) {
  int pairs = 0, failures = 0;
  test::forEachTypePair([&](DType from, DType to) {
    ++pairs;
    for (uint64_t e : test::edgeElements(from)) {
      const uint64_t want = oracle(from, to, e), got = castElement(from, to, e);
      if (got != want && ++failures <= 20)
        ADD_FAILURE() << test::typeName(from) << " -> " << test::typeName(to) << " of 0x"
                      << std::hex << e << ": reference 0x" << got << ", oracle 0x" << want;
    }
  });
  EXPECT_EQ(pairs, 36);
  EXPECT_EQ(failures, 0);
}

// The rules of docs/types.md §3, one case each.
TEST(CastReference, RulesOfTypesMd) {
  // float -> integer: toward zero, saturating, NaN gives 0.
  EXPECT_EQ(castElement(DType::f32, DType::i64, 0x406ccccd), 3u);                  // 3.7
  EXPECT_EQ(castElement(DType::f32, DType::i64, 0xc06ccccd), ~uint64_t(0) - 2);    // -3.7
  EXPECT_EQ(castElement(DType::f32, DType::i32, 0x501502f9), 0x7fffffffu);         // 1e10
  EXPECT_EQ(castElement(DType::f32, DType::i32, 0xff800000), 0x80000000u);         // -inf
  EXPECT_EQ(castElement(DType::f32, DType::i64, 0x7fc00000), 0u);                  // NaN
  EXPECT_EQ(castElement(DType::f32, DType::i64, 0x5f000000), 0x7fffffffffffffffu); // 2^63
  EXPECT_EQ(castElement(DType::f16, DType::i32, 0xc100), 0xfffffffeu);             // -2.5
  // integer -> float: nearest even, int64 with one rounding from 64 bits.
  EXPECT_EQ(castElement(DType::i64, DType::f32, 0x0020000000000001), 0x5a000000u); // 2^53
  EXPECT_EQ(castElement(DType::i64, DType::f32, 0x0000010000010001), 0x53800001u);
  EXPECT_EQ(castElement(DType::i64, DType::f32, 0x8000000000000000), 0xdf000000u);
  EXPECT_EQ(castElement(DType::i32, DType::f32, 0x01000003), 0x4b800002u); // 2^24 + 4
  // To bf16/f16 through binary32, as the stream stores: 2^24 + 1 -> 2^24.
  EXPECT_EQ(castElement(DType::i32, DType::bf16, 0x01000001), 0x4b80u);
  EXPECT_EQ(castElement(DType::i32, DType::f16, 0x0000fff0), 0x7c00u); // 65520: inf
  // integer -> narrower integer: two's complement wraps.
  EXPECT_EQ(castElement(DType::i64, DType::i32, 0x0000000100000001), 1u);
  EXPECT_EQ(castElement(DType::i32, DType::i64, 0x80000000), 0xffffffff80000000u);
  // to b8: nonzero is true (NaN included; both zeros and, read as zeros,
  // denormals false); from b8: 0 or 1.
  EXPECT_EQ(castElement(DType::f32, DType::b8, 0xffc00001), 1u);
  EXPECT_EQ(castElement(DType::f32, DType::b8, 0x80000000), 0u);
  EXPECT_EQ(castElement(DType::f32, DType::b8, 0x00000001), 0u);
  EXPECT_EQ(castElement(DType::f16, DType::b8, 0x0001), 1u); // an f16 subnormal is normal in a lane
  EXPECT_EQ(castElement(DType::i64, DType::b8, 0x0000000100000000), 1u);
  EXPECT_EQ(castElement(DType::b8, DType::i64, 0x02), 1u);
  EXPECT_EQ(castElement(DType::b8, DType::f16, 0xff), 0x3c00u);
  EXPECT_EQ(castElement(DType::b8, DType::bf16, 0x00), 0u);
  // float -> float: exact widening, one RNE narrowing, the types' NaNs.
  EXPECT_EQ(castElement(DType::f16, DType::f32, 0x0001), 0x33800000u);
  EXPECT_EQ(castElement(DType::bf16, DType::f16, 0x7f80), 0x7c00u);
  EXPECT_EQ(castElement(DType::f32, DType::bf16, 0x3f808000), 0x3f80u);
  EXPECT_EQ(castElement(DType::f16, DType::bf16, 0x7c01), 0x7fc0u);
  EXPECT_EQ(castElement(DType::bf16, DType::f32, 0xffc1), 0x7fc00000u);
  EXPECT_EQ(castElement(DType::f32, DType::f32, 0x807fffff), 0x80000000u); // DAZ
}

} // namespace
} // namespace npu::sim::reference
