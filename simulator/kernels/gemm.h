// fp32 GEMM with the accumulation order of docs/arith.md: every C[i][j] is
// acc = fma(A[i][k], B[k][j], acc) for k = 0..K-1 in increasing order,
// starting from +0 or, when accumulating, from the old C. Blocking over K
// stores the partial C and resumes from it, which keeps that order exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace npu::sim::kernels {

struct GemmShape {
  size_t m = 0, k = 0, n = 0;
  // Row pitches of A, B, C as stored, in elements. A is M x K (K x M with
  // transA); B is K x N (N x K with transB).
  size_t lda = 0, ldb = 0, ldc = 0;
  bool transA = false, transB = false;
  bool accumulate = false;
};

// Requires the caller to run under FTZ/DAZ round-to-nearest (see
// FloatEnvGuard); NaN results are canonicalised to 0x7fc00000.
// Each span must hold every element the shape reaches through it (a matrix
// of R rows of C elements, P apart, reaches (R - 1) * P + C): the kernels
// index the spans' data, so a short span would silently read or write the
// memory after it. A short span is a bug of the caller: std::logic_error.
// The kernels also read A and B through checked indices, so their own
// index bugs throw the same instead of reading past an operand.
void gemm(const GemmShape &shape, std::span<const float> a, std::span<const float> b,
          std::span<float> c);

// The obviously-correct loop nest, for tests; the same span checks.
void gemmReference(const GemmShape &shape, std::span<const float> a, std::span<const float> b,
                   std::span<float> c);

} // namespace npu::sim::kernels
