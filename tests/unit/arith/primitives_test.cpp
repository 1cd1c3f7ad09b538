// The integer-only reference primitives against the host FPU under
// FloatEnvGuard (x86 SSE/AVX with FTZ and DAZ), through both host providers.
// Host results are canonicalised (NaN payloads, denormals passed through by
// bit operations); everything else must agree bit for bit. This is also the
// evidence that x86 detects tininess after rounding, as docs/arith.md says.
#include "npu/arith/float_env.h"
#include "npu/arith/functions.h"
#include "npu/arith/host_providers.h"
#include "npu/arith/softfloat.h"
#include "operands.h"

#include "../full_coverage.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdio>
#include <string>

namespace npu::arith {
namespace {

using test::OperandSource;
using test::specialValues;

uint32_t bitsOf(float f) {
  return std::bit_cast<uint32_t>(f);
}
float floatOf(uint32_t u) {
  return std::bit_cast<float>(u);
}
uint32_t canonicalHost(float f) {
  return soft::canonical(bitsOf(f));
}

uint32_t lane0(__m256 v) {
  return static_cast<uint32_t>(_mm256_extract_epi32(_mm256_castps_si256(v), 0));
}
__m256 splat(uint32_t u) {
  return _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(u)));
}

std::string hex(uint32_t u) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", u);
  return buf;
}

class PrimitivesTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!hostHasAvx2Fma())
      NPU_SKIP_OR_REQUIRE("the host providers need AVX2 and FMA");
  }
  FloatEnvGuard env_;
};

// Which host results the providers may leave non-canonical.
enum class Compare { Canonical, Exact };

template <class Ref, class Scalar, class Vector>
void checkBinary(const char *name, Ref ref, Scalar scalar, Vector vector, Compare compare,
                 const std::vector<std::pair<uint32_t, uint32_t>> &operands) {
  int failures = 0;
  for (auto [a, b] : operands) {
    uint32_t want = ref(a, b);
    uint32_t gotScalar = bitsOf(scalar(floatOf(a), floatOf(b)));
    uint32_t gotVector = lane0(vector(splat(a), splat(b)));
    if (compare == Compare::Canonical) {
      gotScalar = soft::canonical(gotScalar);
      gotVector = soft::canonical(gotVector);
    }
    if ((gotScalar != want || gotVector != want) && ++failures <= 10)
      ADD_FAILURE() << name << "(" << hex(a) << ", " << hex(b) << "): reference " << hex(want)
                    << ", host scalar " << hex(gotScalar) << ", avx2 " << hex(gotVector);
  }
  EXPECT_EQ(failures, 0) << name;
}

std::vector<std::pair<uint32_t, uint32_t>> binaryOperands(uint64_t seed, size_t randomCount) {
  std::vector<std::pair<uint32_t, uint32_t>> ops;
  const std::vector<uint32_t> specials = specialValues();
  for (uint32_t a : specials)
    for (uint32_t b : specials)
      ops.emplace_back(a, b);
  OperandSource src(seed);
  for (size_t i = 0; i < randomCount; ++i) {
    uint32_t a = src.mixed();
    switch (i % 3) {
    case 0: ops.emplace_back(a, src.mixed()); break;
    case 1: ops.emplace_back(a, src.near(a, 2)); break; // cancellation in fadd/fsub
    default: {
      // Products near the least normal number (tininess) and the largest.
      uint32_t exponentSum = (i & 8) ? 126 + 127 : 254 + 127 - 128;
      uint32_t ea = 64 + static_cast<uint32_t>(src.rng()() % 126);
      uint32_t eb = exponentSum - ea;
      uint32_t ma = static_cast<uint32_t>(src.rng()()) & 0x807fffffu;
      uint32_t mb = static_cast<uint32_t>(src.rng()()) & 0x807fffffu;
      ops.emplace_back(ma | (ea << 23), mb | (eb << 23));
    }
    }
  }
  return ops;
}

constexpr size_t kRandom = 2'000'000;

TEST_F(PrimitivesTest, AddSubMulMatchTheHost) {
  auto ops = binaryOperands(1, kRandom);
  checkBinary("fadd", soft::fadd, HostScalar::fadd, Avx2::fadd, Compare::Canonical, ops);
  checkBinary("fsub", soft::fsub, HostScalar::fsub, Avx2::fsub, Compare::Canonical, ops);
  checkBinary("fmul", soft::fmul, HostScalar::fmul, Avx2::fmul, Compare::Canonical, ops);
}

TEST_F(PrimitivesTest, MinMaxComparesMatchTheHost) {
  auto ops = binaryOperands(2, kRandom / 4);
  checkBinary("fmin", soft::fmin, HostScalar::fmin, Avx2::fmin, Compare::Canonical, ops);
  checkBinary("fmax", soft::fmax, HostScalar::fmax, Avx2::fmax, Compare::Canonical, ops);
  checkBinary("flt", soft::flt, HostScalar::flt, Avx2::flt, Compare::Exact, ops);
  checkBinary("fle", soft::fle, HostScalar::fle, Avx2::fle, Compare::Exact, ops);
}

TEST_F(PrimitivesTest, FusedMultiplyAddMatchesTheHost) {
  const std::vector<uint32_t> specials = specialValues();
  OperandSource src(3);
  int failures = 0;
  auto check = [&](uint32_t a, uint32_t b, uint32_t c) {
    uint32_t want = soft::ffma(a, b, c);
    uint32_t gotScalar = canonicalHost(HostScalar::ffma(floatOf(a), floatOf(b), floatOf(c)));
    uint32_t gotVector = soft::canonical(lane0(Avx2::ffma(splat(a), splat(b), splat(c))));
    if ((gotScalar != want || gotVector != want) && ++failures <= 10)
      ADD_FAILURE() << "ffma(" << hex(a) << ", " << hex(b) << ", " << hex(c) << "): reference "
                    << hex(want) << ", host scalar " << hex(gotScalar) << ", avx2 "
                    << hex(gotVector);
  };
  for (uint32_t a : specials)
    for (uint32_t b : specials)
      for (uint32_t c : {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u,
                         0xff800000u, 0x7fc00000u, 0x00800000u, 0x80800000u, 0x00000001u})
        check(a, b, c);
  for (size_t i = 0; i < kRandom; ++i) {
    uint32_t a = src.mixed(), b = src.mixed();
    switch (i % 3) {
    case 0: check(a, b, src.mixed()); break;
    case 1: {
      // c close to -a*b: massive cancellation, the case fma exists for.
      uint32_t product = soft::fmul(a, b);
      check(a, b, src.near(product ^ 0x80000000u, 1));
      break;
    }
    default: check(src.moderate(), src.moderate(), src.moderate());
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST_F(PrimitivesTest, UnaryPrimitivesMatchTheHost) {
  std::vector<uint32_t> inputs = specialValues();
  OperandSource src(4);
  for (size_t i = 0; i < kRandom; ++i)
    inputs.push_back(i % 2 ? src.any() : src.moderate());
  // Around the rounding boundaries of fround and f2i.
  for (uint32_t u = 0x3e800000; u < 0x3e800000 + 4096; ++u)
    inputs.push_back(u);
  for (uint32_t u = 0x4effff00; u < 0x4f000100; ++u)
    inputs.push_back(u);
  // Around the truncating conversions' boundaries (1, 2^31, 2^63) too.
  for (uint32_t u : test::truncationPatterns())
    inputs.push_back(u);
  for (uint32_t u = 0x5effff00; u < 0x5f000100; ++u) {
    inputs.push_back(u);
    inputs.push_back(u | 0x80000000u);
  }
  int failures = 0;
  auto check = [&](const char *name, uint32_t in, uint32_t want, uint32_t gotScalar,
                   uint32_t gotVector) {
    if ((gotScalar != want || gotVector != want) && ++failures <= 10)
      ADD_FAILURE() << name << "(" << hex(in) << "): reference " << hex(want) << ", host scalar "
                    << hex(gotScalar) << ", avx2 " << hex(gotVector);
  };
  for (uint32_t x : inputs) {
    float f = floatOf(x);
    __m256 v = splat(x);
    check("fabs", x, soft::fabs(x), canonicalHost(HostScalar::fabs(f)),
          soft::canonical(lane0(Avx2::fabs(v))));
    check("fneg", x, soft::fneg(x), canonicalHost(HostScalar::fneg(f)),
          soft::canonical(lane0(Avx2::fneg(v))));
    check("fisnan", x, soft::fisnan(x), bitsOf(HostScalar::fisnan(f)), lane0(Avx2::fisnan(v)));
    check("fround", x, soft::fround(x), canonicalHost(HostScalar::fround(f)),
          soft::canonical(lane0(Avx2::fround(v))));
    check("f2i", x, soft::f2i(x), bitsOf(HostScalar::f2i(f)), lane0(Avx2::f2i(v)));
    check("i2f", x, soft::i2f(x), bitsOf(HostScalar::i2f(f)), lane0(Avx2::i2f(v)));
    check("f2iz", x, soft::f2iz(x), bitsOf(HostScalar::f2iz(f)), lane0(Avx2::f2iz(v)));
    check("f2lzlo", x, soft::f2lzlo(x), bitsOf(HostScalar::f2lzlo(f)), lane0(Avx2::f2lzlo(v)));
    check("f2lzhi", x, soft::f2lzhi(x), bitsOf(HostScalar::f2lzhi(f)), lane0(Avx2::f2lzhi(v)));
  }
  EXPECT_EQ(failures, 0);
}

// The integer primitives of docs/types.md §4 on the integer edge values
// crossed with each other and on random pairs (half of them with small
// second operands, the shift amounts that matter).
TEST_F(PrimitivesTest, IntegerPrimitivesMatchTheHost) {
  std::vector<std::pair<uint32_t, uint32_t>> ops;
  const std::vector<uint32_t> edges = test::integerEdgeValues();
  for (uint32_t a : edges)
    for (uint32_t b : edges)
      ops.emplace_back(a, b);
  OperandSource src(5);
  for (size_t i = 0; i < kRandom / 4; ++i)
    ops.emplace_back(src.any(), i % 2 ? src.any() : static_cast<uint32_t>(src.rng()() % 40));
  checkBinary("imul", soft::imul, HostScalar::imul, Avx2::imul, Compare::Exact, ops);
  checkBinary("imulhu", soft::imulhu, HostScalar::imulhu, Avx2::imulhu, Compare::Exact, ops);
  checkBinary("ieq", soft::ieq, HostScalar::ieq, Avx2::ieq, Compare::Exact, ops);
  checkBinary("ilt", soft::ilt, HostScalar::ilt, Avx2::ilt, Compare::Exact, ops);
  checkBinary("iltu", soft::iltu, HostScalar::iltu, Avx2::iltu, Compare::Exact, ops);
  checkBinary("ishlv", soft::ishlv, HostScalar::ishlv, Avx2::ishlv, Compare::Exact, ops);
  checkBinary("ishrv", soft::ishrv, HostScalar::ishrv, Avx2::ishrv, Compare::Exact, ops);
  checkBinary("israv", soft::israv, HostScalar::israv, Avx2::israv, Compare::Exact, ops);
  // ieq must see equal patterns as equal: the crossed edges include a == b.
  for (uint32_t a : edges)
    EXPECT_EQ(soft::ieq(a, a), ~0u) << hex(a);
}

// l2f (lo, hi) against the host's int64 conversion: the rounding
// neighbourhoods of every binade and random int64 values of every size.
TEST_F(PrimitivesTest, Int64ToFloatMatchesTheHost) {
  std::vector<std::pair<uint32_t, uint32_t>> ops = test::int64EdgePairs();
  OperandSource src(6);
  for (size_t i = 0; i < kRandom / 4; ++i) {
    const uint64_t v = src.rng()() >> (src.rng()() % 64);
    ops.emplace_back(static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32));
  }
  checkBinary("l2f", soft::l2f, HostScalar::l2f, Avx2::l2f, Compare::Exact, ops);
}

// Hand-checked cases of the spec that the host comparison alone would not
// document.
TEST(SoftFloat, SpecExamples) {
  // Tininess after rounding: (1 - 2^-46) 2^-126 rounds to 2^-126.
  EXPECT_EQ(soft::fmul(0x20000001, 0x1fffffff), 0x00800000u);
  EXPECT_EQ(soft::ffma(0x20000001, 0x9fffffff, 0x80000000), 0x80800000u);
  // Results below 2^-126 after rounding flush to a zero of their sign,
  // exact ones included.
  EXPECT_EQ(soft::fsub(0x00c00000, 0x00800000), 0x00000000u);
  EXPECT_EQ(soft::fsub(0x00800000, 0x00c00000), 0x80000000u);
  EXPECT_EQ(soft::fmul(0x00800000, 0x3f000000), 0x00000000u);
  // Denormal inputs are zeros of their sign.
  EXPECT_EQ(soft::fadd(0x00000001, 0x00000000), 0x00000000u);
  EXPECT_EQ(soft::fadd(0x80000001, 0x80000000), 0x80000000u);
  EXPECT_EQ(soft::fmul(0x80000001, 0x3f800000), 0x80000000u);
  EXPECT_EQ(soft::flt(0x00000000, 0x00000001), 0u);
  // One canonical NaN, whatever the operands' payloads and signs.
  EXPECT_EQ(soft::fadd(0xffc00001, 0x3f800000), soft::kCanonicalNan);
  EXPECT_EQ(soft::fmul(0x7f800000, 0x00000000), soft::kCanonicalNan);
  EXPECT_EQ(soft::fneg(0x7fc00000), soft::kCanonicalNan);
  EXPECT_EQ(soft::fabs(0xffc00000), soft::kCanonicalNan);
  // Exact cancellation is +0; -0 + -0 is -0.
  EXPECT_EQ(soft::fadd(0x3f800000, 0xbf800000), 0x00000000u);
  EXPECT_EQ(soft::fadd(0x80000000, 0x80000000), 0x80000000u);
  // fmin/fmax: NaN if either is NaN; -0 < +0.
  EXPECT_EQ(soft::fmin(0x7fc00000, 0x3f800000), soft::kCanonicalNan);
  EXPECT_EQ(soft::fmax(0x3f800000, 0x7f800001), soft::kCanonicalNan);
  EXPECT_EQ(soft::fmin(0x00000000, 0x80000000), 0x80000000u);
  EXPECT_EQ(soft::fmax(0x80000000, 0x00000000), 0x00000000u);
  // Conversions: ties to even, saturation, NaN to 0.
  EXPECT_EQ(soft::fround(0x3f000000), 0x00000000u); // 0.5 -> 0
  EXPECT_EQ(soft::fround(0xbfc00000), 0xc0000000u); // -1.5 -> -2
  EXPECT_EQ(soft::fround(0x40200000), 0x40000000u); // 2.5 -> 2
  EXPECT_EQ(soft::fround(0xbe800000), 0x80000000u); // -0.25 -> -0
  EXPECT_EQ(soft::f2i(0x40200000), 2u);
  EXPECT_EQ(soft::f2i(0x4f000000), 0x7fffffffu); // 2^31 saturates
  EXPECT_EQ(soft::f2i(0xcf000000), 0x80000000u); // -2^31 is exact
  EXPECT_EQ(soft::f2i(0xff800000), 0x80000000u);
  EXPECT_EQ(soft::f2i(0x7fc00000), 0u);
  EXPECT_EQ(soft::i2f(0x01000001), 0x4b800000u); // 2^24 + 1 -> 2^24 (tie to even)
  EXPECT_EQ(soft::i2f(0x80000000), 0xcf000000u);
  // Truncation toward zero, saturating at the int32 and int64 ranges; NaN
  // and denormals give 0.
  EXPECT_EQ(soft::f2iz(0x3fffffff), 1u);          // 1.9999999 -> 1
  EXPECT_EQ(soft::f2iz(0xbfffffff), 0xffffffffu); // -1.9999999 -> -1
  EXPECT_EQ(soft::f2iz(0xbf7fffff), 0u);          // -0.99999994 -> 0
  EXPECT_EQ(soft::f2iz(0x4effffff), 0x7fffff80u);
  EXPECT_EQ(soft::f2iz(0x4f000000), 0x7fffffffu); // 2^31 saturates
  EXPECT_EQ(soft::f2iz(0xcf000000), 0x80000000u); // -2^31 is exact
  EXPECT_EQ(soft::f2iz(0xcf000001), 0x80000000u);
  EXPECT_EQ(soft::f2iz(0xff800000), 0x80000000u);
  EXPECT_EQ(soft::f2iz(0x7f800000), 0x7fffffffu);
  EXPECT_EQ(soft::f2iz(0xffc00001), 0u);
  EXPECT_EQ(soft::f2iz(0x80000001), 0u);
  auto f2lz = [](uint32_t a) { return uint64_t(soft::f2lzhi(a)) << 32 | soft::f2lzlo(a); };
  EXPECT_EQ(f2lz(0x4f800000), 0x0000000100000000u); // 2^32
  EXPECT_EQ(f2lz(0xcf800000), 0xffffffff00000000u); // -2^32
  EXPECT_EQ(f2lz(0xbfc00000), 0xffffffffffffffffu); // -1.5 -> -1
  EXPECT_EQ(f2lz(0x5effffff), 0x7fffff8000000000u); // the largest below 2^63
  EXPECT_EQ(f2lz(0x5f000000), 0x7fffffffffffffffu); // 2^63 saturates
  EXPECT_EQ(f2lz(0xdf000000), 0x8000000000000000u); // -2^63 is exact
  EXPECT_EQ(f2lz(0xff800000), 0x8000000000000000u);
  EXPECT_EQ(f2lz(0x7fc00000), 0u);
  EXPECT_EQ(f2lz(0x00400000), 0u);
  // int64 to binary32, one rounding from all 64 bits.
  EXPECT_EQ(soft::l2f(0x00000001, 0x00000001), 0x4f800000u); // 2^32 + 1 -> 2^32
  EXPECT_EQ(soft::l2f(0x01000001, 0), 0x4b800000u);          // 2^24 + 1: tie to even
  EXPECT_EQ(soft::l2f(0x01000003, 0), 0x4b800002u);          // 2^24 + 3: tie to even, up
  EXPECT_EQ(soft::l2f(0x00010001, 0x100), 0x53800001u);      // 2^40 + 2^16 + 1: sticky
  EXPECT_EQ(soft::l2f(0x00010000, 0x100), 0x53800000u);      // 2^40 + 2^16: tie, down
  EXPECT_EQ(soft::l2f(0xffffffff, 0x7fffffff), 0x5f000000u); // INT64_MAX -> 2^63
  EXPECT_EQ(soft::l2f(0, 0x80000000), 0xdf000000u);          // INT64_MIN
  EXPECT_EQ(soft::l2f(0xffffffff, 0xffffffff), 0xbf800000u); // -1
  EXPECT_EQ(soft::l2f(0, 0), 0u);
  // Integer primitives: products, orders, variable shifts out of range.
  EXPECT_EQ(soft::imul(0x00010000, 0x00010000), 0u);
  EXPECT_EQ(soft::imulhu(0xffffffff, 0xffffffff), 0xfffffffeu);
  EXPECT_EQ(soft::imul(0xffffffff, 0xffffffff), 1u);
  EXPECT_EQ(soft::ilt(0xffffffff, 0), ~0u);
  EXPECT_EQ(soft::iltu(0xffffffff, 0), 0u);
  EXPECT_EQ(soft::ilt(0x80000000, 0x7fffffff), ~0u);
  EXPECT_EQ(soft::ishlv(1, 31), 0x80000000u);
  EXPECT_EQ(soft::ishlv(1, 32), 0u);
  EXPECT_EQ(soft::ishlv(1, 0xffffffff), 0u); // a negative amount is out of range
  EXPECT_EQ(soft::ishrv(0x80000000, 31), 1u);
  EXPECT_EQ(soft::ishrv(0x80000000, 32), 0u);
  EXPECT_EQ(soft::israv(0x80000000, 32), 0xffffffffu);
  EXPECT_EQ(soft::israv(0x40000000, 100), 0u);
  // Overflow after rounding.
  EXPECT_EQ(soft::fadd(0x7f7fffff, 0x73000000), 0x7f800000u);
  EXPECT_EQ(soft::fadd(0x7f7fffff, 0x72ffffff), 0x7f7fffffu);
}

TEST(FloatEnvGuard, SetsAndRestoresMxcsr) {
  const uint32_t before = _mm_getcsr();
  {
    FloatEnvGuard guard;
    EXPECT_EQ(_mm_getcsr() & ~0x3fu, FloatEnvGuard::kMxcsr);
    {
      FloatEnvGuard nested;
      EXPECT_EQ(_mm_getcsr() & ~0x3fu, FloatEnvGuard::kMxcsr);
    }
    EXPECT_EQ(_mm_getcsr() & ~0x3fu, FloatEnvGuard::kMxcsr);
  }
  EXPECT_EQ(_mm_getcsr() & ~0x3fu, before & ~0x3fu);
}

} // namespace
} // namespace npu::arith
