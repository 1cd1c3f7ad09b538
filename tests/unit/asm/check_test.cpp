// Check regions: the ulp distance, the comparison and the lines npu-sim
// prints for it.
#include "npu/arith/ulp.h"
#include "npu/bin/check.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

namespace {

using namespace npu;

std::vector<uint8_t> floatBytes(std::initializer_list<float> values) {
  std::vector<uint8_t> out(values.size() * 4);
  size_t at = 0;
  for (float f : values) {
    std::memcpy(out.data() + at, &f, 4);
    at += 4;
  }
  return out;
}

TEST(UlpDistance, CountsRepresentableValuesAcrossZeroAndNaN) {
  EXPECT_EQ(arith::ulpDistance(0x3f800000u, 0x3f800000u), 0u);
  EXPECT_EQ(arith::ulpDistance(0x3f800000u, 0x3f800001u), 1u);
  EXPECT_EQ(arith::ulpDistance(0x3f800001u, 0x3f800000u), 1u);
  EXPECT_EQ(arith::ulpDistance(0x80000000u, 0x00000000u), 0u); // -0 and +0
  EXPECT_EQ(arith::ulpDistance(0x80000001u, 0x00000001u), 2u); // smallest denormals
  EXPECT_EQ(arith::ulpDistance(0xff800000u, 0x7f800000u), 2 * uint64_t(0x7f800000u));
  EXPECT_EQ(arith::ulpDistance(0x7fc00000u, 0xffc00001u), 0u); // any two NaNs
  EXPECT_EQ(arith::ulpDistance(0x7fc00000u, 0x3f800000u), arith::kUnorderedUlp);
  EXPECT_EQ(arith::ulpDistance(0x3f800000u, 0x7f800001u), arith::kUnorderedUlp);
}

TEST(CompareCheck, F32RegionWithinAndOutsideTolerance) {
  bin::CheckRegion check{0x1000, bin::CheckRegion::Kind::F32Ulp, 1, floatBytes({1.0f, 2.0f, 3.0f})};
  std::vector<uint8_t> actual = check.expected;
  const uint32_t oneUlpUp = std::bit_cast<uint32_t>(1.0f) + 1;
  std::memcpy(actual.data(), &oneUlpUp, 4);
  bin::CheckOutcome ok = bin::compareCheck(check, actual);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.worstUlp, 1u);
  EXPECT_EQ(bin::describeOutcome(check, ok),
            "check 0x00001000 (+12 bytes, f32 ulp): ok, max 1 ulp");

  const uint32_t nan = 0x7fc00000u;
  std::memcpy(actual.data() + 8, &nan, 4);
  bin::CheckOutcome failed = bin::compareCheck(check, actual);
  ASSERT_EQ(failed.mismatches, 1u);
  ASSERT_EQ(failed.shown.size(), 1u);
  EXPECT_EQ(bin::describeMismatch(check, failed.shown[0]),
            "  mismatch at 0x00001008: expected 0x40400000 (3), actual 0x7fc00000 (nan), inf ulp "
            "(tolerance 1)");
  EXPECT_EQ(bin::describeOutcome(check, failed),
            "check 0x00001000 (+12 bytes, f32 ulp): FAILED, 1 mismatching elements");
}

TEST(CompareCheck, ExactRegionCountsBytesAndShowsTheFirstTen) {
  bin::CheckRegion check{0x2000, bin::CheckRegion::Kind::Exact, 0, std::vector<uint8_t>(16, 0xab)};
  EXPECT_EQ(bin::describeOutcome(check, bin::compareCheck(check, check.expected)),
            "check 0x00002000 (+16 bytes, exact): ok");
  const std::vector<uint8_t> actual(16, 0xcd);
  const bin::CheckOutcome outcome = bin::compareCheck(check, actual);
  EXPECT_EQ(outcome.mismatches, 16u);
  ASSERT_EQ(outcome.shown.size(), bin::kShownMismatches);
  EXPECT_EQ(bin::describeMismatch(check, outcome.shown[9]),
            "  mismatch at 0x00002009: expected 0xab, actual 0xcd");
  EXPECT_EQ(bin::describeOutcome(check, outcome),
            "check 0x00002000 (+16 bytes, exact): FAILED, 16 mismatching bytes");
}

} // namespace
