// The vector engine's maximum reduction: its AVX2 path gives the portable
// loop's bits on every length class, alignment and special value.
#include "random_cases.h"
#include "vector_ops.h"

#include "npu/arith/float_env.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace npu;

TEST(LaneMax, Avx2PathGivesThePortableBits) {
  if (!__builtin_cpu_supports("avx2"))
    GTEST_SKIP() << "the host has no AVX2";
  arith::FloatEnvGuard env; // as Iss::step runs the reductions
  std::mt19937_64 rng(31);
  // Rows of mostly special values (NaN payloads, signed zeros, denormals
  // that must read as zeros, infinities), mostly ordinary ones, and ties
  // of zeros and denormals of both signs only.
  for (int specialPercent : {0, 10, 60, 100}) {
    std::vector<uint32_t> bits(200);
    for (uint32_t &b : bits)
      b = cases::randomFloat(rng, specialPercent);
    std::vector<uint32_t> ties(200);
    for (uint32_t &b : ties)
      b = static_cast<uint32_t>(rng() & 1) << 31 | (rng() % 2 ? 0 : rng() % 0x7fffff);
    for (const std::vector<uint32_t> *row : {&bits, &ties})
      for (size_t offset = 0; offset < 8; ++offset)
        for (size_t n = 0; n + offset <= 80; ++n) {
          const float *x = reinterpret_cast<const float *>(row->data() + offset);
          ASSERT_EQ(std::bit_cast<uint32_t>(sim::laneMaxAvx2(x, n)),
                    std::bit_cast<uint32_t>(sim::laneMaxPortable(x, n)))
              << "n " << n << ", offset " << offset << ", " << specialPercent << " % special";
        }
  }
}

TEST(LaneMax, ANanAnywhereGivesTheCanonicalNan) {
  arith::FloatEnvGuard env;
  for (size_t at = 0; at < 19; ++at) {
    std::vector<float> x(19, 1.0f);
    x[at] = std::bit_cast<float>(0xffc01234u);
    EXPECT_EQ(std::bit_cast<uint32_t>(sim::laneMax(x.data(), x.size())), sim::kCanonicalNaN) << at;
  }
}

} // namespace
