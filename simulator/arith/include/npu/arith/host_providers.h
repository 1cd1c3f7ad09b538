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
  static V imul(V a, V b) { return fromBits(bits(a) * bits(b)); }
  static V imulhu(V a, V b) {
    return fromBits(static_cast<uint32_t>((uint64_t(bits(a)) * bits(b)) >> 32));
  }
  static V ieq(V a, V b) { return mask(bits(a) == bits(b)); }
  static V ilt(V a, V b) {
    return mask(static_cast<int32_t>(bits(a)) < static_cast<int32_t>(bits(b)));
  }
  static V iltu(V a, V b) { return mask(bits(a) < bits(b)); }
  // C++ shifts by 32 or more are undefined: the out-of-range amounts are
  // spelled out (docs/types.md §3).
  static V ishlv(V a, V b) { return fromBits(bits(b) < 32 ? bits(a) << bits(b) : 0u); }
  static V ishrv(V a, V b) { return fromBits(bits(b) < 32 ? bits(a) >> bits(b) : 0u); }
  static V israv(V a, V b) {
    return fromBits(
        static_cast<uint32_t>(static_cast<int32_t>(bits(a)) >> (bits(b) < 32 ? bits(b) : 31u)));
  }
  // cvtsi2ss rounds by MXCSR, which FloatEnvGuard sets to nearest even.
  static V l2f(V lo, V hi) {
    const int64_t value = static_cast<int64_t>(uint64_t(bits(hi)) << 32 | bits(lo));
    return out(_mm_cvtsi64_ss(_mm_setzero_ps(), value));
  }
  // cvttss2si gives the "integer indefinite" (the minimum) for NaN and for
  // every out-of-range value: NaN becomes 0, too large the maximum.
  static V f2iz(V a) {
    if (a != a)
      return fromBits(0);
    if (a >= 2147483648.0f)
      return fromBits(0x7fffffffu);
    return fromBits(static_cast<uint32_t>(_mm_cvttss_si32(in(a))));
  }
  static uint64_t truncateToInt64(V a) {
    if (a != a)
      return 0;
    if (a >= 9223372036854775808.0f)
      return 0x7fffffffffffffffu;
    return static_cast<uint64_t>(_mm_cvttss_si64(in(a)));
  }
  static V f2lzlo(V a) { return fromBits(static_cast<uint32_t>(truncateToInt64(a))); }
  static V f2lzhi(V a) { return fromBits(static_cast<uint32_t>(truncateToInt64(a) >> 32)); }
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
  static V imul(V a, V b) { return asFloat(_mm256_mullo_epi32(asInt(a), asInt(b))); }
  // mul_epu32 multiplies the even lanes into 64-bit products: the high
  // words of the even lanes' products are shifted down, the odd lanes'
  // products (their operands shifted down first) have theirs in place.
  static V imulhu(V a, V b) {
    const __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(asInt(a), asInt(b)), 32);
    const __m256i odd =
        _mm256_mul_epu32(_mm256_srli_epi64(asInt(a), 32), _mm256_srli_epi64(asInt(b), 32));
    return asFloat(_mm256_blend_epi32(even, odd, 0xaa));
  }
  static V ieq(V a, V b) { return asFloat(_mm256_cmpeq_epi32(asInt(a), asInt(b))); }
  static V ilt(V a, V b) { return asFloat(_mm256_cmpgt_epi32(asInt(b), asInt(a))); }
  // Unsigned order is signed order with both sign bits flipped.
  static V iltu(V a, V b) {
    const __m256i flip = _mm256_set1_epi32(static_cast<int32_t>(0x80000000u));
    return asFloat(
        _mm256_cmpgt_epi32(_mm256_xor_si256(asInt(b), flip), _mm256_xor_si256(asInt(a), flip)));
  }
  // The AVX2 variable shifts read the amount as unsigned and give 0 (the
  // sign fill for srav) from 32 up: the primitives' definition.
  static V ishlv(V a, V b) { return asFloat(_mm256_sllv_epi32(asInt(a), asInt(b))); }
  static V ishrv(V a, V b) { return asFloat(_mm256_srlv_epi32(asInt(a), asInt(b))); }
  static V israv(V a, V b) { return asFloat(_mm256_srav_epi32(asInt(a), asInt(b))); }
  // AVX2 has no 64-bit integer conversions: lane by lane on the scalar unit.
  template <class F> static V perLane(V a, V b, F f) {
    alignas(32) uint32_t x[8], y[8], r[8];
    _mm256_store_si256(reinterpret_cast<__m256i *>(x), asInt(a));
    _mm256_store_si256(reinterpret_cast<__m256i *>(y), asInt(b));
    for (int l = 0; l < 8; ++l)
      r[l] = HostScalar::bits(f(HostScalar::fromBits(x[l]), HostScalar::fromBits(y[l])));
    return asFloat(_mm256_load_si256(reinterpret_cast<const __m256i *>(r)));
  }
  static V l2f(V lo, V hi) { return perLane(lo, hi, HostScalar::l2f); }
  static V f2iz(V a) {
    V converted = asFloat(_mm256_cvttps_epi32(a));
    V tooLarge = _mm256_cmp_ps(a, constant(0x4f000000u), _CMP_GE_OQ);
    V ordered = _mm256_cmp_ps(a, a, _CMP_ORD_Q);
    return _mm256_and_ps(_mm256_xor_ps(converted, tooLarge), ordered);
  }
  static V f2lzlo(V a) {
    return perLane(a, a, [](float x, float) { return HostScalar::f2lzlo(x); });
  }
  static V f2lzhi(V a) {
    return perLane(a, a, [](float x, float) { return HostScalar::f2lzhi(x); });
  }
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
