// The storage converters of rtl/npu_convert_pkg.sv (Verilated through
// tests/rtl/npu_convert_wrapper.sv) against npu/arith/convert.h, bit for
// bit: every bf16 and f16 pattern widened and narrowed back, every byte,
// and the narrowings on the rounding neighbourhoods of convert_test.cpp
// (operands.h) with their 4 million random patterns each.
#include "Vnpu_convert_wrapper.h"
#include "npu/arith/convert.h"
#include "operands.h"

#include <gtest/gtest.h>
#include <verilated.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace npu::arith {
namespace {

std::string hex(uint32_t v, int digits) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*x", digits, v);
  return b;
}

class RtlConvert : public ::testing::Test {
protected:
  RtlConvert()
      : context_(std::make_unique<VerilatedContext>()),
        rtl_(std::make_unique<Vnpu_convert_wrapper>(context_.get())) {}

  // Narrows `lane` on the RTL and counts (and reports the first few)
  // results that differ from the model's.
  void checkNarrowing(uint32_t lane) {
    rtl_->lane = lane;
    rtl_->eval();
    expectSame("narrow_bf16", lane, 8, rtl_->narrowed_bf16, narrowBf16(lane), 4);
    expectSame("narrow_f16", lane, 8, rtl_->narrowed_f16, narrowF16(lane), 4);
    expectSame("narrow_b8", lane, 8, rtl_->narrowed_b8, narrowB8(lane), 2);
  }

  void expectSame(const char *name, uint32_t input, int inputDigits, uint32_t got, uint32_t want,
                  int digits) {
    ++evaluations_;
    if (got != want && ++failures_ <= 10)
      ADD_FAILURE() << name << "(" << hex(input, inputDigits) << "): model " << hex(want, digits)
                    << ", rtl " << hex(got, digits);
  }

  void TearDown() override {
    EXPECT_GT(evaluations_, 0);
    EXPECT_EQ(failures_, 0) << "of " << evaluations_ << " evaluations";
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vnpu_convert_wrapper> rtl_;
  long evaluations_ = 0, failures_ = 0;
};

TEST_F(RtlConvert, EveryHalfWidensAndNarrowsBack) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto half = static_cast<uint16_t>(h);
    rtl_->half_bits = half;
    rtl_->eval();
    const uint32_t bf16 = rtl_->widened_bf16, f16 = rtl_->widened_f16;
    expectSame("widen_bf16", h, 4, bf16, widenBf16(half), 8);
    expectSame("widen_f16", h, 4, f16, widenF16(half), 8);
    // The widened values are exactly representable: narrowing them back
    // exercises every exact case of both narrowings.
    checkNarrowing(bf16);
    checkNarrowing(f16);
  }
}

TEST_F(RtlConvert, F16RoundingNeighbourhoodsAndRandomPatterns) {
  for (uint32_t lane : test::narrowingPatterns(13))
    checkNarrowing(lane);
}

TEST_F(RtlConvert, Bf16RoundingNeighbourhoodsAndRandomPatterns) {
  for (uint32_t lane : test::narrowingPatterns(16))
    checkNarrowing(lane);
}

// Each named boundary of convert_test.cpp, through the RTL.
TEST_F(RtlConvert, RangeBoundaries) {
  for (uint32_t lane :
       {0x477fefffu, 0x477ff000u, 0x33000000u, 0x33000001u, 0x387fc000u, 0x387fe000u, 0x7f7f8000u,
        0x7f7f7fffu, 0xff800000u, 0x7f800001u, 0xffffffffu, 0x00000001u, 0x80000000u})
    checkNarrowing(lane);
}

TEST_F(RtlConvert, EveryByteWidensToAMaskAndEveryBitNarrowsToOne) {
  for (uint32_t b = 0; b < 0x100; ++b) {
    rtl_->byte_bits = static_cast<uint8_t>(b);
    rtl_->eval();
    expectSame("widen_b8", b, 2, rtl_->widened_b8, widenB8(static_cast<uint8_t>(b)), 8);
  }
  checkNarrowing(0);
  for (int bit = 0; bit < 32; ++bit)
    checkNarrowing(1u << bit);
}

} // namespace
} // namespace npu::arith
