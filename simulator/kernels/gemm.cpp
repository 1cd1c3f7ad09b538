#include "gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::sim::kernels {

namespace {

constexpr size_t kMr = 6;   // rows of the register block
constexpr size_t kNr = 16;  // columns of the register block (two 8-lane vectors)
constexpr size_t kKc = 256; // depth of a packed panel
constexpr size_t kMc = 120; // rows of A packed at once (multiple of kMr)
constexpr size_t kNc = 2048; // columns of B packed at once (multiple of kNr)

constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

// The kernels read A and B only through `reach`, so an index past an
// operand's span is a clear error (std::logic_error) instead of a read of
// the memory after it; it costs a comparison per packed element.
const float *reach(std::span<const float> operand, size_t first, size_t count) {
  if (first > operand.size() || count > operand.size() - first)
    throw std::logic_error("GEMM kernel: reads elements [" + std::to_string(first) + ", " +
                           std::to_string(first + count) + ") of an operand span of " +
                           std::to_string(operand.size()));
  return operand.data() + first;
}
float elementA(const GemmShape &s, std::span<const float> a, size_t i, size_t k) {
  return *reach(a, s.transA ? k * s.lda + i : i * s.lda + k, 1);
}
float elementB(const GemmShape &s, std::span<const float> b, size_t k, size_t j) {
  return *reach(b, s.transB ? j * s.ldb + k : k * s.ldb + j, 1);
}

// A[ic:ic+mc, pc:pc+kc] as kMr-row panels, k-major inside a panel; rows past
// the matrix are zero so the kernel needs no row tail.
void packA(const GemmShape &s, std::span<const float> a, size_t ic, size_t mc, size_t pc, size_t kc,
           float *out) {
  for (size_t ir = 0; ir < mc; ir += kMr) {
    size_t rows = std::min(kMr, mc - ir);
    for (size_t p = 0; p < kc; ++p) {
      for (size_t r = 0; r < rows; ++r)
        out[p * kMr + r] = elementA(s, a, ic + ir + r, pc + p);
      for (size_t r = rows; r < kMr; ++r)
        out[p * kMr + r] = 0.0f;
    }
    out += kc * kMr;
  }
}

// B[pc:pc+kc, jc:jc+nc] as kNr-column panels, k-major inside a panel.
void packB(const GemmShape &s, std::span<const float> b, size_t pc, size_t kc, size_t jc, size_t nc,
           float *out) {
  for (size_t jr = 0; jr < nc; jr += kNr) {
    size_t cols = std::min(kNr, nc - jr);
    for (size_t p = 0; p < kc; ++p) {
      float *dst = out + p * kNr;
      if (!s.transB && cols == kNr) {
        std::memcpy(dst, reach(b, (pc + p) * s.ldb + jc + jr, kNr), kNr * sizeof(float));
        continue;
      }
      for (size_t c = 0; c < cols; ++c)
        dst[c] = elementB(s, b, pc + p, jc + jr + c);
      for (size_t c = cols; c < kNr; ++c)
        dst[c] = 0.0f;
    }
    out += kc * kNr;
  }
}

__attribute__((target("avx2,fma"))) inline __m256 canonicalise(__m256 v) {
  __m256 isNaN = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNaN)), isNaN);
}

// C[0:6, 0:16] (pitch ldc) over one packed panel pair. `fresh` starts from
// +0 instead of loading C; `last` canonicalises NaNs on the way out.
__attribute__((target("avx2,fma"))) void microKernel(size_t kc, const float *ap, const float *bp,
                                                      float *c, size_t ldc, bool fresh, bool last) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (size_t r = 0; r < kMr; ++r) {
    acc[r][0] = fresh ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc);
    acc[r][1] = fresh ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + 8);
  }
  for (size_t p = 0; p < kc; ++p) {
    __m256 b0 = _mm256_load_ps(bp + p * kNr);
    __m256 b1 = _mm256_load_ps(bp + p * kNr + 8);
#pragma GCC unroll 6
    for (size_t r = 0; r < kMr; ++r) {
      __m256 av = _mm256_broadcast_ss(ap + p * kMr + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 6
  for (size_t r = 0; r < kMr; ++r) {
    _mm256_storeu_ps(c + r * ldc, last ? canonicalise(acc[r][0]) : acc[r][0]);
    _mm256_storeu_ps(c + r * ldc + 8, last ? canonicalise(acc[r][1]) : acc[r][1]);
  }
}

bool hostHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

// Scalar form of the same order, used where the host lacks AVX2/FMA; fmaf
// is a true fused multiply-add and honours MXCSR like the vector path.
void gemmScalar(const GemmShape &s, std::span<const float> a, std::span<const float> b, float *c) {
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < s.n; ++j) {
      float acc = s.accumulate ? c[i * s.ldc + j] : 0.0f;
      for (size_t k = 0; k < s.k; ++k)
        acc = __builtin_fmaf(elementA(s, a, i, k), elementB(s, b, k, j), acc);
      if (acc != acc)
        std::memcpy(&acc, &kCanonicalNaN, 4);
      c[i * s.ldc + j] = acc;
    }
}

// Throws unless `held` elements cover `rows` rows of `cols` elements,
// `pitch` apart, as stored (the transpose already applied).
void requireCovers(const char *operand, size_t held, size_t rows, size_t cols, size_t pitch) {
  size_t reach = 0;
  const bool fits = rows == 0 || cols == 0 ||
                    (!__builtin_mul_overflow(rows - 1, pitch, &reach) &&
                     !__builtin_add_overflow(reach, cols, &reach));
  if (fits && reach <= held)
    return;
  throw std::logic_error(
      std::string("GEMM operand ") + operand + ": its span holds " + std::to_string(held) +
      " elements, but " + std::to_string(rows) + " rows of " + std::to_string(cols) + " elements " +
      std::to_string(pitch) + " apart reach " +
      (fits ? std::to_string(reach) : std::string("past 2^64")) + " from its first");
}

void requireSpans(const GemmShape &s, size_t a, size_t b, size_t c) {
  requireCovers("A", a, s.transA ? s.k : s.m, s.transA ? s.m : s.k, s.lda);
  requireCovers("B", b, s.transB ? s.n : s.k, s.transB ? s.k : s.n, s.ldb);
  requireCovers("C", c, s.m, s.n, s.ldc);
}

} // namespace

void gemmReference(const GemmShape &s, std::span<const float> a, std::span<const float> b,
                   std::span<float> c) {
  requireSpans(s, a.size(), b.size(), c.size());
  gemmScalar(s, a, b, c.data());
}

void gemm(const GemmShape &s, std::span<const float> a, std::span<const float> b,
          std::span<float> cSpan) {
  requireSpans(s, a.size(), b.size(), cSpan.size());
  float *c = cSpan.data();
  if (s.m == 0 || s.n == 0)
    return;
  if (!hostHasAvx2Fma() || s.k == 0) {
    gemmScalar(s, a, b, c);
    return;
  }
  struct AlignedFree {
    void operator()(float *p) const { std::free(p); }
  };
  const size_t packedA = kMc * kKc, packedB = kKc * std::min(kNc, (s.n + kNr - 1) / kNr * kNr);
  std::unique_ptr<float, AlignedFree> bufA(
      static_cast<float *>(std::aligned_alloc(64, packedA * sizeof(float))));
  std::unique_ptr<float, AlignedFree> bufB(
      static_cast<float *>(std::aligned_alloc(64, (packedB + kNr) * sizeof(float))));
  float edge[kMr * kNr] = {};

  for (size_t jc = 0; jc < s.n; jc += kNc) {
    const size_t nc = std::min(kNc, s.n - jc);
    for (size_t pc = 0; pc < s.k; pc += kKc) {
      const size_t kc = std::min(kKc, s.k - pc);
      const bool fresh = pc == 0 && !s.accumulate;
      const bool last = pc + kc == s.k;
      packB(s, b, pc, kc, jc, nc, bufB.get());
      for (size_t ic = 0; ic < s.m; ic += kMc) {
        const size_t mc = std::min(kMc, s.m - ic);
        packA(s, a, ic, mc, pc, kc, bufA.get());
        for (size_t jr = 0; jr < nc; jr += kNr) {
          const size_t cols = std::min(kNr, nc - jr);
          const float *bp = bufB.get() + (jr / kNr) * kc * kNr;
          for (size_t ir = 0; ir < mc; ir += kMr) {
            const size_t rows = std::min(kMr, mc - ir);
            const float *ap = bufA.get() + (ir / kMr) * kc * kMr;
            float *ctile = c + (ic + ir) * s.ldc + jc + jr;
            if (rows == kMr && cols == kNr) {
              microKernel(kc, ap, bp, ctile, s.ldc, fresh, last);
              continue;
            }
            // Partial tile: run the full kernel on a scratch copy.
            if (!fresh)
              for (size_t r = 0; r < rows; ++r)
                std::memcpy(edge + r * kNr, ctile + r * s.ldc, cols * sizeof(float));
            microKernel(kc, ap, bp, edge, kNr, fresh, last);
            for (size_t r = 0; r < rows; ++r)
              std::memcpy(ctile + r * s.ldc, edge + r * kNr, cols * sizeof(float));
          }
        }
      }
    }
  }
}

} // namespace npu::sim::kernels
