// Every GEMM kernel the host runs (scalar, AVX2, AVX-512) against the loop
// nest, bit for bit: shapes one below, at and one above every blocking
// boundary of the kernel (register block, panel depth, packed rows of A
// and columns of B), both transposes, accumulation, pitches past the rows,
// special values and denormals, and 1, 2 and 3 threads (which split C only,
// so the bits cannot depend on their count).
#include "gemm.h"
#include "npu/arith/float_env.h"
#include "random_cases.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using npu::sim::kernels::GemmKernel;
using npu::sim::kernels::GemmShape;

struct Case {
  GemmShape shape;
  std::vector<float> a, b, c;
};

// A case of the shape in transpose form `form` (bit 0 transA, bit 1
// transB), pitches `pad` past the rows, operands from cases::randomFloat
// with `specialPercent` special values, scaled by 2^scale (products of
// scaled operands fall below the normal range: FTZ).
Case makeCase(size_t m, size_t k, size_t n, int form, bool accumulate, size_t pad,
              int specialPercent, uint64_t seed, int scale = 0) {
  Case t;
  GemmShape &s = t.shape;
  s = {.m = m,
       .k = k,
       .n = n,
       .transA = (form & 1) != 0,
       .transB = (form & 2) != 0,
       .accumulate = accumulate};
  s.lda = (s.transA ? m : k) + pad;
  s.ldb = (s.transB ? k : n) + pad;
  s.ldc = n + pad;
  std::mt19937_64 rng(seed);
  const auto fill = [&](std::vector<float> &v, size_t rows, size_t cols, size_t pitch) {
    v.resize((rows - 1) * pitch + cols);
    for (float &x : v)
      x = std::ldexp(std::bit_cast<float>(npu::cases::randomFloat(rng, specialPercent)), scale);
  };
  fill(t.a, s.transA ? k : m, s.transA ? m : k, s.lda);
  fill(t.b, s.transB ? n : k, s.transB ? k : n, s.ldb);
  fill(t.c, m, n, s.ldc);
  return t;
}

std::string describe(GemmKernel kernel, unsigned threads, const GemmShape &s) {
  return std::string(npu::sim::kernels::gemmKernelName(kernel)) + " on " + std::to_string(threads) +
         " threads, " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
         std::to_string(s.n) + (s.transA ? " transA" : "") + (s.transB ? " transB" : "") +
         (s.accumulate ? " acc" : "") + " lda " + std::to_string(s.lda);
}

// The kernel's C against the loop nest's, as bit patterns (NaNs included).
void expectSameBits(const Case &t, GemmKernel kernel, unsigned threads) {
  std::vector<float> expected = t.c, got = t.c;
  npu::sim::kernels::gemmReference(t.shape, t.a, t.b, expected);
  npu::sim::kernels::gemmWith(kernel, threads, t.shape, t.a, t.b, got);
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i]) && !differ++)
      first = i;
  EXPECT_EQ(differ, 0u) << describe(kernel, threads, t.shape) << ": first at element " << first
                        << ", 0x" << std::hex << std::bit_cast<uint32_t>(got[first])
                        << " instead of 0x" << std::bit_cast<uint32_t>(expected[first]);
}

TEST(GemmKernels, AgreeWithTheLoopNestAcrossEveryBlockingBoundary) {
  npu::arith::FloatEnvGuard env;
  for (GemmKernel kernel : npu::sim::kernels::hostGemmKernels()) {
    const auto bl = npu::sim::kernels::gemmBlocking(kernel);
    if (kernel == GemmKernel::Scalar)
      continue; // blocks nothing: the next test runs it
    // Each dimension around its boundaries while the others stay one past
    // a register block and a panel.
    const size_t m0 = bl.mr + 1, n0 = bl.nr + 1, k0 = bl.kc + 1;
    std::vector<std::array<size_t, 3>> shapes;
    for (size_t m : {size_t(1), bl.mr - 1, bl.mr, bl.mr + 1, bl.mc - 1, bl.mc, bl.mc + 1,
                     2 * bl.mc + bl.mr + 1})
      shapes.push_back({m, k0, n0});
    // nc + nr: a whole register block of columns past the first packed
    // block of B, which packing copies in one piece from its column offset
    // (a mutant that dropped that offset once survived the regression).
    for (size_t n :
         {size_t(1), bl.nr - 1, bl.nr, bl.nr + 1, bl.nc - 1, bl.nc, bl.nc + 1, bl.nc + bl.nr})
      shapes.push_back({m0, k0, n});
    for (size_t k : {size_t(1), bl.kc - 1, bl.kc, 2 * bl.kc + 1})
      shapes.push_back({m0, k, n0});
    uint64_t seed = 1;
    for (const auto &[m, k, n] : shapes)
      for (int form = 0; form < 4; ++form)
        for (bool accumulate : {false, true})
          expectSameBits(makeCase(m, k, n, form, accumulate, form, 0, seed++), kernel, 1);
  }
}

// Infinities, NaNs (either sign, any payload), denormals (read as zeros:
// DAZ), huge values that overflow, and products below the normal range
// (flushed: FTZ), over shapes with partial register blocks.
TEST(GemmKernels, AgreeWithTheLoopNestOnSpecialValuesAndDenormals) {
  npu::arith::FloatEnvGuard env;
  uint64_t seed = 100;
  for (GemmKernel kernel : npu::sim::kernels::hostGemmKernels())
    for (int scale : {0, -66})
      for (const auto &[m, k, n] : {std::array<size_t, 3>{13, 9, 35}, {5, 3, 7}, {25, 40, 64}})
        for (int form = 0; form < 4; ++form)
          for (bool accumulate : {false, true})
            expectSameBits(makeCase(m, k, n, form, accumulate, 1, scale ? 0 : 25, seed++, scale),
                           kernel, 1);
}

// The kernels (and the loop nest the tests above compare them with) follow
// docs/arith.md's ffma chain under the float environment, on values whose
// results show each rule: a denormal operand is a zero (DAZ: 2^100 * 2^-127
// would be 2^-27), a denormal result is flushed (FTZ: 2^-24 * 2^-110), each
// step rounds once (1 + 2^-24 + 2^-24 is 1, not 1 + 2^-23), and
// inf - inf is the canonical NaN (the host's default NaN is 0xffc00000).
TEST(GemmKernels, FollowTheFfmaChainOfTheArithmeticSpec) {
  npu::arith::FloatEnvGuard env;
  const float inf = std::bit_cast<float>(0x7f800000u), denormal = std::bit_cast<float>(0x00400000u);
  const GemmShape s{.m = 1, .k = 3, .n = 4, .lda = 3, .ldb = 4, .ldc = 4};
  const std::vector<float> a = {0x1p100f, 0x1p-24f, 0x1p-24f};
  const std::vector<float> b = {denormal, 0.0f,      0x1p-100f, inf,  //
                                0.0f,     0x1p-110f, 1.0f,      0.0f, //
                                0.0f,     0.0f,      1.0f,      -inf};
  const uint32_t expected[] = {0, 0, 0x3f800000, 0x7fc00000};
  auto kernels = npu::sim::kernels::hostGemmKernels();
  for (int reference = 0; reference <= int(kernels.size()); ++reference) {
    std::vector<float> c(4, 5.0f);
    if (reference == int(kernels.size()))
      npu::sim::kernels::gemmReference(s, a, b, c);
    else
      npu::sim::kernels::gemmWith(kernels[reference], 1, s, a, b, c);
    for (size_t j = 0; j < 4; ++j)
      EXPECT_EQ(std::bit_cast<uint32_t>(c[j]), expected[j])
          << "column " << j << " of "
          << (reference == int(kernels.size())
                  ? "the loop nest"
                  : npu::sim::kernels::gemmKernelName(kernels[reference]));
  }
}

TEST(GemmKernels, GiveTheSameBitsOnOneTwoAndThreeThreads) {
  npu::arith::FloatEnvGuard env;
  uint64_t seed = 200;
  for (GemmKernel kernel : npu::sim::kernels::hostGemmKernels())
    // Split by rows (m >= n) and by columns, each band large enough to run
    // on its own thread; some special values.
    for (const auto &[m, k, n] : {std::array<size_t, 3>{301, 260, 90}, {40, 300, 517}})
      for (int form = 0; form < 4; ++form) {
        const Case t = makeCase(m, k, n, form, form == 3, 2, 1, seed++);
        for (unsigned threads : {1u, 2u, 3u})
          expectSameBits(t, kernel, threads);
      }
}

} // namespace
