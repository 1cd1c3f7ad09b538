// fp32 GEMM with the accumulation order of docs/arith.md: every C[i][j] is
// acc = fma(A[i][k], B[k][j], acc) for k = 0..K-1 in increasing order,
// starting from +0 or, when accumulating, from the old C. Blocking over K
// stores the partial C and resumes from it, which keeps that order exact.
// Threads split the output (rows or columns of C), never K, so every
// element is computed by one thread in that order whatever their count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
// FloatEnvGuard; worker threads run under the caller's MXCSR); NaN results
// are canonicalised to 0x7fc00000.
// Each span must hold every element the shape reaches through it (a matrix
// of R rows of C elements, P apart, reaches (R - 1) * P + C): the kernels
// index the spans' data, so a short span would silently read or write the
// memory after it. A short span is a bug of the caller: std::logic_error.
// Runs the fastest kernel the host supports on issThreads() threads
// (host_threads.h).
void gemm(const GemmShape &shape, std::span<const float> a, std::span<const float> b,
          std::span<float> c);

// The obviously-correct loop nest, for tests; the same span checks.
void gemmReference(const GemmShape &shape, std::span<const float> a, std::span<const float> b,
                   std::span<float> c);

// The micro-kernels, chosen at run time by the host's CPU features.
enum class GemmKernel { Scalar, Avx2, Avx512 };
const char *gemmKernelName(GemmKernel kernel);
// The fastest kernel the host supports (what gemm() runs).
GemmKernel hostGemmKernel();
// Every kernel the host can run, slowest first.
std::vector<GemmKernel> hostGemmKernels();

// A kernel's blocking: register block mr x nr; panels kc deep; mc rows of
// A and nc columns of B packed at once (the tests cross each boundary).
struct GemmBlocking {
  size_t mr, nr, kc, mc, nc;
};
GemmBlocking gemmBlocking(GemmKernel kernel);

// gemm() on a given kernel (one of hostGemmKernels()) and thread count, for
// the tests, which compare every path bit for bit, and the benchmark.
void gemmWith(GemmKernel kernel, unsigned threads, const GemmShape &shape, std::span<const float> a,
              std::span<const float> b, std::span<float> c);

} // namespace npu::sim::kernels
