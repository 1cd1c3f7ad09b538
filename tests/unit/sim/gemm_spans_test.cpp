// The GEMM kernel indexes its operands' data, so a span shorter than the
// matrix its shape reaches would let it read or write the memory after the
// span unnoticed (the ISS's span checks see only what the semantics ask
// for). The kernel refuses such a span.
#include "gemm.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using npu::sim::kernels::GemmShape;

struct Operands {
  std::vector<float> a, b, c;
};

// Operands exactly as long as the shape reaches, with pitches past the rows.
Operands exactOperands(const GemmShape &s) {
  const auto reach = [](size_t rows, size_t cols, size_t pitch) {
    return (rows - 1) * pitch + cols;
  };
  Operands o;
  o.a.resize(reach(s.transA ? s.k : s.m, s.transA ? s.m : s.k, s.lda));
  o.b.resize(reach(s.transB ? s.n : s.k, s.transB ? s.k : s.n, s.ldb));
  o.c.resize(reach(s.m, s.n, s.ldc));
  for (size_t i = 0; i < o.a.size(); ++i)
    o.a[i] = float(i % 7);
  for (size_t i = 0; i < o.b.size(); ++i)
    o.b[i] = float(i % 5) - 2;
  return o;
}

std::string messageOf(const GemmShape &s, std::span<const float> a, std::span<const float> b,
                      std::span<float> c) {
  try {
    npu::sim::kernels::gemm(s, a, b, c);
  } catch (const std::logic_error &e) {
    return e.what();
  }
  return "";
}

TEST(GemmKernel, RefusesASpanShorterThanTheMatrixItsShapeReaches) {
  // Also single columns, which the reach computation once let through
  // (ISS mutant gemm.cpp:132, `cols == 0` read as `cols == 1`).
  for (int form = 0; form < 8; ++form) {
    GemmShape s = form < 4 ? GemmShape{.m = 7, .k = 20, .n = 18} : GemmShape{.m = 7, .k = 1, .n = 1};
    s.transA = form & 1;
    s.transB = form & 2;
    s.lda = (s.transA ? s.m : s.k) + 3;
    s.ldb = (s.transB ? s.k : s.n) + 1;
    s.ldc = s.n + 2;
    Operands o = exactOperands(s);
    const std::string where = "form " + std::to_string(form);

    // Exactly long enough: the kernel runs and agrees with the loop nest.
    std::vector<float> expected = o.c;
    npu::sim::kernels::gemmReference(s, o.a, o.b, expected);
    EXPECT_EQ(messageOf(s, o.a, o.b, o.c), "") << where;
    EXPECT_EQ(o.c, expected) << where;

    const std::span<const float> a(o.a), b(o.b);
    const std::span<float> c(o.c);
    EXPECT_EQ(messageOf(s, a.first(a.size() - 1), b, c),
              "GEMM operand A: its span holds " + std::to_string(a.size() - 1) + " elements, but " +
                  std::to_string(s.transA ? s.k : s.m) + " rows of " +
                  std::to_string(s.transA ? s.m : s.k) + " elements " + std::to_string(s.lda) +
                  " apart reach " + std::to_string(a.size()) + " from its first")
        << where;
    EXPECT_NE(messageOf(s, a, b.first(b.size() - 1), c).find("GEMM operand B: its span holds"),
              std::string::npos)
        << where;
    EXPECT_NE(messageOf(s, a, b, c.first(c.size() - 1)).find("GEMM operand C: its span holds"),
              std::string::npos)
        << where;
    EXPECT_THROW(npu::sim::kernels::gemmReference(s, a, b.first(b.size() / 2), c), std::logic_error)
        << where;
  }
}

// A NaN the products create (inf * 0, inf - inf) leaves both kernels as
// the canonical NaN: the host's default NaN is negative (0xffc00000). The
// scalar kernel runs only on hosts without AVX2/FMA, so the regression
// never reaches it here; this test does.
TEST(GemmKernel, BothKernelsCanonicaliseTheNaNsTheyCreate) {
  const float inf = std::numeric_limits<float>::infinity();
  const GemmShape s{.m = 1, .k = 2, .n = 2, .lda = 2, .ldb = 2, .ldc = 2};
  const std::vector<float> a = {inf, 1.0f}, b = {0.0f, 1.0f, 1.0f, -inf};
  for (bool reference : {true, false}) {
    std::vector<float> c(2);
    if (reference)
      npu::sim::kernels::gemmReference(s, a, b, c);
    else
      npu::sim::kernels::gemm(s, a, b, c);
    for (float x : c)
      EXPECT_EQ(std::bit_cast<uint32_t>(x), 0x7fc00000u) << (reference ? "scalar" : "gemm");
  }
}

TEST(GemmKernel, RefusesAShapeWhoseReachOverflows) {
  const GemmShape s{.m = 2, .k = 2, .n = 2, .lda = SIZE_MAX, .ldb = 2, .ldc = 2};
  std::vector<float> a(4), b(4), c(4);
  EXPECT_EQ(messageOf(s, a, b, c), "GEMM operand A: its span holds 4 elements, but 2 rows of 2 "
                                   "elements " +
                                       std::to_string(SIZE_MAX) +
                                       " apart reach past 2^64 from its first");
}

} // namespace
