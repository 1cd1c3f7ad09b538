#include "gemm.h"

#include "host_threads.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace npu::sim::kernels {

namespace {

constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

// The operands past requireSpans: every index the shape reaches is inside
// them, so the loops below index the data directly.
struct Operands {
  const float *a, *b;
  float *c;
};

// Scalar form of the same order, used where the host lacks AVX2/FMA and as
// the reference; fmaf is a true fused multiply-add and honours MXCSR like
// the vector paths.
void gemmScalar(const GemmShape &s, Operands o) {
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < s.n; ++j) {
      float acc = s.accumulate ? o.c[i * s.ldc + j] : 0.0f;
      for (size_t k = 0; k < s.k; ++k)
        acc = __builtin_fmaf(o.a[s.transA ? k * s.lda + i : i * s.lda + k],
                             o.b[s.transB ? j * s.ldb + k : k * s.ldb + j], acc);
      if (acc != acc)
        std::memcpy(&acc, &kCanonicalNaN, 4);
      o.c[i * s.ldc + j] = acc;
    }
}

// Packing buffers, one pair per thread, reused from packet to packet.
struct PackBuffers {
  struct Free {
    void operator()(float *p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> a, b;
  size_t aFloats = 0, bFloats = 0;

  static float *reserve(std::unique_ptr<float, Free> &buffer, size_t &held, size_t floats) {
    if (held < floats) {
      // 64-byte aligned (the kernels load panels aligned), rounded up to it.
      const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
      buffer.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
      if (!buffer)
        throw std::bad_alloc();
      held = floats;
    }
    return buffer.get();
  }
};
thread_local PackBuffers tBuffers;

// Writes `lines` lines of `depth` elements (`pitch` apart, from `src`)
// as the first `lines` of the W elements of each of the `depth` rows of
// `out`, the rest of each row zero: the packing of a panel whose operand is
// stored the other way round. Whole 4 x 4 blocks go through SSE registers
// (baseline x86-64), the edges one element at a time.
template <size_t W>
void transposeInto(const float *src, size_t pitch, size_t lines, size_t depth, float *out) {
  const size_t lines4 = lines / 4 * 4, depth4 = depth / 4 * 4;
  for (size_t l = 0; l < lines4; l += 4) {
    const float *s0 = src + l * pitch;
    for (size_t p = 0; p < depth4; p += 4) {
      __m128 r0 = _mm_loadu_ps(s0 + p), r1 = _mm_loadu_ps(s0 + pitch + p);
      __m128 r2 = _mm_loadu_ps(s0 + 2 * pitch + p), r3 = _mm_loadu_ps(s0 + 3 * pitch + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(out + p * W + l, r0);
      _mm_storeu_ps(out + (p + 1) * W + l, r1);
      _mm_storeu_ps(out + (p + 2) * W + l, r2);
      _mm_storeu_ps(out + (p + 3) * W + l, r3);
    }
    for (size_t p = depth4; p < depth; ++p)
      for (size_t q = 0; q < 4; ++q)
        out[p * W + l + q] = s0[q * pitch + p];
  }
  for (size_t l = lines4; l < lines; ++l)
    for (size_t p = 0; p < depth; ++p)
      out[p * W + l] = src[l * pitch + p];
  if (lines < W)
    for (size_t p = 0; p < depth; ++p)
      std::fill(out + p * W + lines, out + p * W + W, 0.0f);
}

// kc rows of `count` (at most W) floats, `pitch` apart from src, as rows
// of W floats, the columns past `count` zero: a panel whose layout already
// matches the operand's.
template <size_t W>
void copyPanel(const float *src, size_t pitch, size_t count, size_t kc, float *out) {
  for (size_t p = 0; p < kc; ++p, src += pitch, out += W) {
    if (count == W) {
      std::memcpy(out, src, W * sizeof(float));
      continue;
    }
    std::memcpy(out, src, count * sizeof(float));
    std::fill(out + count, out + W, 0.0f);
  }
}

// A[ic:ic+mc, pc:pc+kc] as Mr-row panels, k-major inside a panel; rows past
// the matrix are zero so the kernel needs no row tail.
template <size_t Mr>
void packA(const GemmShape &s, const float *a, size_t ic, size_t mc, size_t pc, size_t kc,
           float *out) {
  for (size_t ir = 0; ir < mc; ir += Mr, out += kc * Mr) {
    const size_t rows = std::min(Mr, mc - ir);
    if (s.transA) {
      // Stored K x M: the panel's rows at one k are adjacent.
      copyPanel<Mr>(a + pc * s.lda + ic + ir, s.lda, rows, kc, out);
      continue;
    }
    // Stored M x K: a transpose into the panel.
    transposeInto<Mr>(a + (ic + ir) * s.lda + pc, s.lda, rows, kc, out);
  }
}

// B[pc:pc+kc, jc:jc+nc] as Nr-column panels, k-major inside a panel;
// columns past the matrix are zero.
template <size_t Nr>
void packB(const GemmShape &s, const float *b, size_t pc, size_t kc, size_t jc, size_t nc,
           float *out) {
  for (size_t jr = 0; jr < nc; jr += Nr, out += kc * Nr) {
    const size_t cols = std::min(Nr, nc - jr);
    if (!s.transB) {
      copyPanel<Nr>(b + pc * s.ldb + jc + jr, s.ldb, cols, kc, out);
      continue;
    }
    // Stored N x K: a transpose into the panel.
    transposeInto<Nr>(b + (jc + jr) * s.ldb + pc, s.ldb, cols, kc, out);
  }
}

// The AVX2/FMA kernel: a 6 x 16 register block (12 ymm accumulators).
struct Avx2 {
  static constexpr size_t kMr = 6, kNr = 16;
  static constexpr size_t kKc = 256, kMc = 120, kNc = 2048;

  __attribute__((target("avx2,fma"))) static __m256 canonicalise(__m256 v) {
    const __m256 isNaN = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNaN)), isNaN);
  }

  // C[0:6, 0:16] (pitch ldc) over one packed panel pair. `fresh` starts from
  // +0 instead of loading C; `last` canonicalises NaNs on the way out.
  __attribute__((target("avx2,fma"))) static void
  block(size_t kc, const float *ap, const float *bp, float *c, size_t ldc, bool fresh, bool last) {
    __m256 acc[kMr][2];
#pragma GCC unroll 6
    for (size_t r = 0; r < kMr; ++r) {
      acc[r][0] = fresh ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc);
      acc[r][1] = fresh ? _mm256_setzero_ps() : _mm256_loadu_ps(c + r * ldc + 8);
    }
    for (size_t p = 0; p < kc; ++p) {
      const __m256 b0 = _mm256_load_ps(bp + p * kNr);
      const __m256 b1 = _mm256_load_ps(bp + p * kNr + 8);
#pragma GCC unroll 6
      for (size_t r = 0; r < kMr; ++r) {
        const __m256 av = _mm256_broadcast_ss(ap + p * kMr + r);
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

  // A partial tile runs the full block on a scratch copy of its C.
  static void tile(size_t kc, const float *ap, const float *bp, float *c, size_t ldc, bool fresh,
                   bool last, size_t rows, size_t cols) {
    if (rows == kMr && cols == kNr)
      return block(kc, ap, bp, c, ldc, fresh, last);
    float edge[kMr * kNr] = {};
    if (!fresh)
      for (size_t r = 0; r < rows; ++r)
        std::memcpy(edge + r * kNr, c + r * ldc, cols * sizeof(float));
    block(kc, ap, bp, edge, kNr, fresh, last);
    for (size_t r = 0; r < rows; ++r)
      std::memcpy(c + r * ldc, edge + r * kNr, cols * sizeof(float));
  }
};

// The AVX-512 kernel: a 12 x 32 register block (24 zmm accumulators, two
// B vectors and a broadcast A element of the 32 registers). Blocking for
// this host's caches (48 KiB L1d, 2 MiB L2 per core): a B micro-panel of
// kKc x 32 stays in L1 while the kMc x kKc block of A streams from L2.
struct Avx512 {
  static constexpr size_t kMr = 12, kNr = 32;
  static constexpr size_t kKc = 256, kMc = 240, kNc = 4096;

  __attribute__((target("avx512f"))) static __m512 canonicalise(__m512 v) {
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNaN)));
  }

  // C[0:rows, 0:cols] over one panel pair; a partial tile loads and stores
  // through masks (a masked-off lane neither reads nor faults), so it needs
  // no scratch copy. Rows past `rows` are computed from A's zero padding
  // and dropped.
  template <bool Partial>
  __attribute__((target("avx512f"))) static void block(size_t kc, const float *ap, const float *bp,
                                                       float *c, size_t ldc, bool fresh, bool last,
                                                       size_t rows, size_t cols) {
    __mmask16 mask[2] = {0xffff, 0xffff};
    if constexpr (Partial)
      for (size_t v = 0; v < 2; ++v)
        mask[v] = cols >= 16 * (v + 1) ? 0xffff
                  : cols <= 16 * v     ? 0
                                       : static_cast<__mmask16>((1u << (cols - 16 * v)) - 1);
    __m512 acc[kMr][2];
#pragma GCC unroll 12
    for (size_t r = 0; r < kMr; ++r)
      for (size_t v = 0; v < 2; ++v) {
        if (fresh || (Partial && r >= rows))
          acc[r][v] = _mm512_setzero_ps();
        else if constexpr (Partial)
          acc[r][v] = _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v);
        else
          acc[r][v] = _mm512_loadu_ps(c + r * ldc + 16 * v);
      }
    for (size_t p = 0; p < kc; ++p) {
      const __m512 b0 = _mm512_load_ps(bp + p * kNr);
      const __m512 b1 = _mm512_load_ps(bp + p * kNr + 16);
#pragma GCC unroll 12
      for (size_t r = 0; r < kMr; ++r) {
        const __m512 av = _mm512_set1_ps(ap[p * kMr + r]);
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      }
    }
#pragma GCC unroll 12
    for (size_t r = 0; r < kMr; ++r) {
      if (Partial && r >= rows)
        break;
      for (size_t v = 0; v < 2; ++v) {
        const __m512 out = last ? canonicalise(acc[r][v]) : acc[r][v];
        if constexpr (Partial)
          _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], out);
        else
          _mm512_storeu_ps(c + r * ldc + 16 * v, out);
      }
    }
  }

  static void tile(size_t kc, const float *ap, const float *bp, float *c, size_t ldc, bool fresh,
                   bool last, size_t rows, size_t cols) {
    if (rows == kMr && cols == kNr)
      return block<false>(kc, ap, bp, c, ldc, fresh, last, rows, cols);
    block<true>(kc, ap, bp, c, ldc, fresh, last, rows, cols);
  }
};

// The blocked loop nest (jc, pc, ic, jr, ir) around kernel K's tiles, on
// the whole of `s` from one thread.
template <class K> void gemmBlocked(const GemmShape &s, Operands o) {
  const size_t ncMax = std::min(K::kNc, (s.n + K::kNr - 1) / K::kNr * K::kNr);
  const size_t mcMax = std::min(K::kMc, (s.m + K::kMr - 1) / K::kMr * K::kMr);
  const size_t kcMax = std::min(K::kKc, s.k);
  float *bufA = PackBuffers::reserve(tBuffers.a, tBuffers.aFloats, mcMax * kcMax);
  float *bufB = PackBuffers::reserve(tBuffers.b, tBuffers.bFloats, kcMax * ncMax);
  for (size_t jc = 0; jc < s.n; jc += K::kNc) {
    const size_t nc = std::min(K::kNc, s.n - jc);
    for (size_t pc = 0; pc < s.k; pc += K::kKc) {
      const size_t kc = std::min(K::kKc, s.k - pc);
      const bool fresh = pc == 0 && !s.accumulate;
      const bool last = pc + kc == s.k;
      packB<K::kNr>(s, o.b, pc, kc, jc, nc, bufB);
      for (size_t ic = 0; ic < s.m; ic += K::kMc) {
        const size_t mc = std::min(K::kMc, s.m - ic);
        packA<K::kMr>(s, o.a, ic, mc, pc, kc, bufA);
        for (size_t jr = 0; jr < nc; jr += K::kNr) {
          const size_t cols = std::min(K::kNr, nc - jr);
          const float *bp = bufB + jr * kc;
          for (size_t ir = 0; ir < mc; ir += K::kMr) {
            float *ctile = o.c + (ic + ir) * s.ldc + jc + jr;
            // The next tile's C rows (in the same columns; a pass over a
            // kKc panel is long enough for them to arrive): rows of a
            // large C are pages apart and leave the caches between passes.
            const size_t rows = std::min(K::kMr, mc - ir);
            if (ir + K::kMr < mc)
              for (size_t r = 0; r < std::min(K::kMr, mc - ir - K::kMr); ++r)
                for (size_t line = 0; line < cols; line += 16)
                  _mm_prefetch(reinterpret_cast<const char *>(ctile + (K::kMr + r) * s.ldc + line),
                               _MM_HINT_T0);
            K::tile(kc, bufA + ir * kc, bp, ctile, s.ldc, fresh, last, rows, cols);
          }
        }
      }
    }
  }
}

void gemmOneThread(GemmKernel kernel, const GemmShape &s, Operands o) {
  if (s.k == 0 || kernel == GemmKernel::Scalar)
    return gemmScalar(s, o);
  if (kernel == GemmKernel::Avx512)
    return gemmBlocked<Avx512>(s, o);
  gemmBlocked<Avx2>(s, o);
}

// Below this many multiply-adds per thread a GEMM runs on one: waking the
// workers costs microseconds.
constexpr size_t kFmasPerThread = size_t(1) << 20;

// Splits C into `threads` bands of whole register blocks, by rows when it
// has as many rows as columns, else by columns; each band is an
// independent GEMM of the same K.
void gemmThreaded(GemmKernel kernel, unsigned threads, const GemmShape &s, Operands o) {
  const GemmBlocking blocking = gemmBlocking(kernel);
  const bool byRows = s.m >= s.n;
  const size_t unit = byRows ? blocking.mr : blocking.nr, extent = byRows ? s.m : s.n;
  const size_t units = (extent + unit - 1) / unit;
  const size_t fmas = s.m * s.n * s.k; // no overflow: the operands are in memory
  const size_t count =
      std::min({size_t(threads), units, std::max<size_t>(1, fmas / kFmasPerThread)});
  if (count <= 1 || kernel == GemmKernel::Scalar || s.k == 0)
    return gemmOneThread(kernel, s, o);
  const auto band = [&](unsigned index) {
    const size_t first = units * index / count * unit;
    const size_t end = std::min(extent, units * (index + 1) / count * unit);
    GemmShape part = s;
    Operands at = o;
    if (byRows) {
      part.m = end - first;
      at.a += s.transA ? first : first * s.lda;
      at.c += first * s.ldc;
    } else {
      part.n = end - first;
      at.b += s.transB ? first * s.ldb : first;
      at.c += first;
    }
    gemmOneThread(kernel, part, at);
  };
  runParts(static_cast<unsigned>(count), band);
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

const char *gemmKernelName(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::Scalar: return "scalar";
  case GemmKernel::Avx2: return "avx2";
  case GemmKernel::Avx512: return "avx512";
  }
  return "?";
}

std::vector<GemmKernel> hostGemmKernels() {
  std::vector<GemmKernel> kernels = {GemmKernel::Scalar};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    kernels.push_back(GemmKernel::Avx2);
  if (__builtin_cpu_supports("avx512f"))
    kernels.push_back(GemmKernel::Avx512);
  return kernels;
}

GemmBlocking gemmBlocking(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::Avx2: return {Avx2::kMr, Avx2::kNr, Avx2::kKc, Avx2::kMc, Avx2::kNc};
  case GemmKernel::Avx512: return {Avx512::kMr, Avx512::kNr, Avx512::kKc, Avx512::kMc, Avx512::kNc};
  case GemmKernel::Scalar: break;
  }
  return {1, 1, SIZE_MAX, SIZE_MAX, SIZE_MAX}; // the scalar loop nest blocks nothing
}

GemmKernel hostGemmKernel() {
  static const GemmKernel best = hostGemmKernels().back();
  return best;
}

void gemmReference(const GemmShape &s, std::span<const float> a, std::span<const float> b,
                   std::span<float> c) {
  requireSpans(s, a.size(), b.size(), c.size());
  gemmScalar(s, {a.data(), b.data(), c.data()});
}

void gemmWith(GemmKernel kernel, unsigned threads, const GemmShape &s, std::span<const float> a,
              std::span<const float> b, std::span<float> c) {
  requireSpans(s, a.size(), b.size(), c.size());
  if (s.m == 0 || s.n == 0)
    return;
  gemmThreaded(kernel, std::max(1u, threads), s, {a.data(), b.data(), c.data()});
}

void gemm(const GemmShape &s, std::span<const float> a, std::span<const float> b,
          std::span<float> c) {
  gemmWith(hostGemmKernel(), issThreads(), s, a, b, c);
}

} // namespace npu::sim::kernels
