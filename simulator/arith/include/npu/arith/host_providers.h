// Host providers: the lane primitives on the host FPU, one lane (HostScalar)
// or eight (Avx2). Both must run under FloatEnvGuard and are bit-identical
// to ReferenceProvider after the canonicalisation the generated code applies
// (see provider.h). Only translation units compiled with -mavx2 -mfma may
// include this header; callers check hostHasAvx2Fma() first.
#pragma once

#if !defined(__AVX2__) || !defined(__FMA__)
#error "npu/arith/host_providers.h needs -mavx2 -mfma"
#endif

#include "npu/arith/provider.h"

#include <immintrin.h>

#include <bit>
#include <cstdint>

namespace npu::arith {

// One lane in an SSE register. Intrinsics rather than C++ operators keep the
// compiler from folding steps like x * 1.0f, whose only effect on this
// machine is the flush of a denormal x.
struct HostScalar {
  using V = float;

  static __m128 in(V a) { return _mm_set_ss(a); }
  static V out(__m128 a) { return _mm_cvtss_f32(a); }
  static uint32_t bits(V a) { return std::bit_cast<uint32_t>(a); }
  static V fromBits(uint32_t b) { return std::bit_cast<V>(b); }
  static V mask(bool m) { return fromBits(m ? ~0u : 0u); }

  static V constant(uint32_t b) { return fromBits(b); }
  static V fadd(V a, V b) { return out(_mm_add_ss(in(a), in(b))); }
  static V fsub(V a, V b) { return out(_mm_sub_ss(in(a), in(b))); }
  static V fmul(V a, V b) { return out(_mm_mul_ss(in(a), in(b))); }
  static V ffma(V a, V b, V c) { return out(_mm_fmadd_ss(in(a), in(b), in(c))); }
  // minss returns its second operand when either is NaN or both are equal;
  // ORing both orders yields a NaN for a NaN and -0 for {-0, +0}.
  static V fmin(V a, V b) {
    return out(_mm_or_ps(_mm_min_ss(in(a), in(b)), _mm_min_ss(in(b), in(a))));
  }
  // ANDing both orders yields +0 for {-0, +0}; the unordered mask turns the
  // result into a NaN when an operand is one.
  static V fmax(V a, V b) {
    __m128 m = _mm_and_ps(_mm_max_ss(in(a), in(b)), _mm_max_ss(in(b), in(a)));
    return out(_mm_or_ps(m, _mm_cmpunord_ss(in(a), in(b))));
  }
  static V fabs(V a) { return fromBits(bits(a) & 0x7fffffffu); }
  static V fneg(V a) { return fromBits(bits(a) ^ 0x80000000u); }
  static V flt(V a, V b) { return out(_mm_cmplt_ss(in(a), in(b))); }
  static V fle(V a, V b) { return out(_mm_cmple_ss(in(a), in(b))); }
  static V fisnan(V a) { return out(_mm_cmpunord_ss(in(a), in(a))); }
  static V fround(V a) {
    return out(_mm_round_ss(in(a), in(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // cvtss2si gives 0x80000000 for NaN and for every out-of-range value.
  static V f2i(V a) {
    if (a != a)
      return fromBits(0);
    if (a >= 2147483648.0f)
      return fromBits(0x7fffffffu);
    return fromBits(static_cast<uint32_t>(_mm_cvtss_si32(in(a))));
  }
  static V i2f(V a) { return out(_mm_cvtsi32_ss(_mm_setzero_ps(), static_cast<int32_t>(bits(a)))); }
  static V iadd(V a, V b) { return fromBits(bits(a) + bits(b)); }
  static V isub(V a, V b) { return fromBits(bits(a) - bits(b)); }
  static V ishl(V a, int count) { return fromBits(bits(a) << count); }
  static V ishr(V a, int count) { return fromBits(bits(a) >> count); }
  static V isra(V a, int count) {
    return fromBits(static_cast<uint32_t>(static_cast<int32_t>(bits(a)) >> count));
  }
  static V iand(V a, V b) { return fromBits(bits(a) & bits(b)); }
  static V ior(V a, V b) { return fromBits(bits(a) | bits(b)); }
  static V ixor(V a, V b) { return fromBits(bits(a) ^ bits(b)); }
  static V sel(V m, V a, V b) { return fromBits((bits(m) & bits(a)) | (~bits(m) & bits(b))); }
  static V canonicalNan(V a) { return soft::isNan(bits(a)) ? fromBits(soft::kCanonicalNan) : a; }
  static V flushDenormal(V a) {
    return soft::isZeroOrDenormal(bits(a)) ? fromBits(bits(a) & soft::kSignBit) : a;
  }
};

// Eight lanes in a YMM register.
struct Avx2 {
  using V = __m256;

  static __m256i asInt(V a) { return _mm256_castps_si256(a); }
  static V asFloat(__m256i a) { return _mm256_castsi256_ps(a); }

  static V constant(uint32_t b) { return asFloat(_mm256_set1_epi32(static_cast<int32_t>(b))); }
  static V fadd(V a, V b) { return _mm256_add_ps(a, b); }
  static V fsub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V fmul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V ffma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fmin(V a, V b) { return _mm256_or_ps(_mm256_min_ps(a, b), _mm256_min_ps(b, a)); }
  static V fmax(V a, V b) {
    V m = _mm256_and_ps(_mm256_max_ps(a, b), _mm256_max_ps(b, a));
    return _mm256_or_ps(m, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static V fabs(V a) { return _mm256_and_ps(a, constant(0x7fffffffu)); }
  static V fneg(V a) { return _mm256_xor_ps(a, constant(0x80000000u)); }
  static V flt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static V fle(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static V fisnan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static V fround(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // cvtps2dq gives 0x80000000 for NaN and for every out-of-range value:
  // flip it to 0x7fffffff where a >= 2^31 and clear it where a is NaN.
  static V f2i(V a) {
    V converted = asFloat(_mm256_cvtps_epi32(a));
    V tooLarge = _mm256_cmp_ps(a, constant(0x4f000000u), _CMP_GE_OQ);
    V ordered = _mm256_cmp_ps(a, a, _CMP_ORD_Q);
    return _mm256_and_ps(_mm256_xor_ps(converted, tooLarge), ordered);
  }
  static V i2f(V a) { return _mm256_cvtepi32_ps(asInt(a)); }
  static V iadd(V a, V b) { return asFloat(_mm256_add_epi32(asInt(a), asInt(b))); }
  static V isub(V a, V b) { return asFloat(_mm256_sub_epi32(asInt(a), asInt(b))); }
  static V ishl(V a, int count) { return asFloat(_mm256_slli_epi32(asInt(a), count)); }
  static V ishr(V a, int count) { return asFloat(_mm256_srli_epi32(asInt(a), count)); }
  static V isra(V a, int count) { return asFloat(_mm256_srai_epi32(asInt(a), count)); }
  static V iand(V a, V b) { return _mm256_and_ps(a, b); }
  static V ior(V a, V b) { return _mm256_or_ps(a, b); }
  static V ixor(V a, V b) { return _mm256_xor_ps(a, b); }
  // Masks are all-ones or all-zero (the generator checks that every sel mask
  // comes from a compare), so selecting on the sign bit is the same.
  static V sel(V m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V canonicalNan(V a) {
    return _mm256_blendv_ps(a, constant(soft::kCanonicalNan), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  // Under DAZ a denormal compares equal to zero; keep only its sign.
  static V flushDenormal(V a) {
    V isZero = _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_EQ_OQ);
    return _mm256_blendv_ps(a, _mm256_and_ps(a, constant(soft::kSignBit)), isZero);
  }
};

static_assert(PrimitiveProvider<HostScalar>);
static_assert(PrimitiveProvider<Avx2>);

} // namespace npu::arith
