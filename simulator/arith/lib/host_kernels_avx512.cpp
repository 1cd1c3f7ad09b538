// The micro-programs on sixteen lanes of a ZMM register. This translation
// unit alone is built with -mavx512f -mavx512dq (see CMakeLists.txt); its
// provider and loops have internal linkage, so that no inline function
// compiled for AVX-512 can stand in for another translation unit's copy.
// Like Avx2, every primitive is bit-identical to ReferenceProvider after the
// canonicalisation the generated code applies, under FloatEnvGuard (the
// EVEX instructions follow MXCSR's rounding, FTZ and DAZ as the VEX ones).
#include "host_kernels.h"

#include "npu/arith/provider.h"

#if !defined(__AVX512F__) || !defined(__AVX512DQ__)
#error "host_kernels_avx512.cpp needs -mavx512f -mavx512dq"
#endif

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() as the unused
// merge source, which it then reports as used uninitialised (GCC bug
// 105593, fixed in 13): no value of this file is.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <array>
#include <bit>
#include <tuple>

namespace npu::arith::detail {

namespace {

struct Avx512 {
  using V = __m512;

  static __m512i asInt(V a) { return _mm512_castps_si512(a); }
  static V asFloat(__m512i a) { return _mm512_castsi512_ps(a); }
  // A compare's lanes as the all-ones or zero words the programs hold.
  static V fromMask(__mmask16 m) { return asFloat(_mm512_movm_epi32(m)); }
  static __mmask16 toMask(V m) { return _mm512_movepi32_mask(asInt(m)); }

  static V constant(uint32_t b) { return asFloat(_mm512_set1_epi32(static_cast<int32_t>(b))); }
  static V fadd(V a, V b) { return _mm512_add_ps(a, b); }
  static V fsub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V fmul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V ffma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // vminps/vmaxps return the second operand for a NaN or equal operands:
  // both orders combined give Avx2's NaN and signed-zero results.
  static V fmin(V a, V b) { return _mm512_or_ps(_mm512_min_ps(a, b), _mm512_min_ps(b, a)); }
  static V fmax(V a, V b) {
    V m = _mm512_and_ps(_mm512_max_ps(a, b), _mm512_max_ps(b, a));
    return _mm512_or_ps(m, fromMask(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q)));
  }
  static V fabs(V a) { return _mm512_and_ps(a, constant(0x7fffffffu)); }
  static V fneg(V a) { return _mm512_xor_ps(a, constant(0x80000000u)); }
  static V flt(V a, V b) { return fromMask(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)); }
  static V fle(V a, V b) { return fromMask(_mm512_cmp_ps_mask(a, b, _CMP_LE_OQ)); }
  static V fisnan(V a) { return fromMask(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q)); }
  static V fround(V a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // vcvtps2dq gives 0x80000000 for NaN and every out-of-range value: the
  // maximum where a >= 2^31, 0 where a is NaN.
  static V saturated(__m512i converted, V a) {
    const __mmask16 tooLarge = _mm512_cmp_ps_mask(a, constant(0x4f000000u), _CMP_GE_OQ);
    converted = _mm512_mask_mov_epi32(converted, tooLarge, _mm512_set1_epi32(0x7fffffff));
    return asFloat(_mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(a, a, _CMP_ORD_Q), converted));
  }
  static V f2i(V a) { return saturated(_mm512_cvtps_epi32(a), a); }
  static V f2iz(V a) { return saturated(_mm512_cvttps_epi32(a), a); }
  static V i2f(V a) { return _mm512_cvtepi32_ps(asInt(a)); }
  static V iadd(V a, V b) { return asFloat(_mm512_add_epi32(asInt(a), asInt(b))); }
  static V isub(V a, V b) { return asFloat(_mm512_sub_epi32(asInt(a), asInt(b))); }
  static V ishl(V a, int count) {
    return asFloat(_mm512_slli_epi32(asInt(a), static_cast<unsigned>(count)));
  }
  static V ishr(V a, int count) {
    return asFloat(_mm512_srli_epi32(asInt(a), static_cast<unsigned>(count)));
  }
  static V isra(V a, int count) {
    return asFloat(_mm512_srai_epi32(asInt(a), static_cast<unsigned>(count)));
  }
  static V iand(V a, V b) { return _mm512_and_ps(a, b); }
  static V ior(V a, V b) { return _mm512_or_ps(a, b); }
  static V ixor(V a, V b) { return _mm512_xor_ps(a, b); }
  // m ? a : b bit by bit (0xca), which for the all-ones or zero masks the
  // generator guarantees is the lane select.
  static V sel(V m, V a, V b) {
    return asFloat(_mm512_ternarylogic_epi32(asInt(m), asInt(a), asInt(b), 0xca));
  }
  static V imul(V a, V b) { return asFloat(_mm512_mullo_epi32(asInt(a), asInt(b))); }
  // As Avx2::imulhu: the even lanes' 64-bit products shifted down, the odd
  // lanes' (operands shifted down first) with their high words in place.
  static V imulhu(V a, V b) {
    const __m512i even = _mm512_srli_epi64(_mm512_mul_epu32(asInt(a), asInt(b)), 32);
    const __m512i odd =
        _mm512_mul_epu32(_mm512_srli_epi64(asInt(a), 32), _mm512_srli_epi64(asInt(b), 32));
    return asFloat(_mm512_mask_blend_epi32(0xaaaa, even, odd));
  }
  static V ieq(V a, V b) { return fromMask(_mm512_cmpeq_epi32_mask(asInt(a), asInt(b))); }
  static V ilt(V a, V b) { return fromMask(_mm512_cmplt_epi32_mask(asInt(a), asInt(b))); }
  static V iltu(V a, V b) { return fromMask(_mm512_cmplt_epu32_mask(asInt(a), asInt(b))); }
  // The variable shifts give 0 (the sign fill for srav) from 32 up, read
  // unsigned: the primitives' definition.
  static V ishlv(V a, V b) { return asFloat(_mm512_sllv_epi32(asInt(a), asInt(b))); }
  static V ishrv(V a, V b) { return asFloat(_mm512_srlv_epi32(asInt(a), asInt(b))); }
  static V israv(V a, V b) { return asFloat(_mm512_srav_epi32(asInt(a), asInt(b))); }
  // The int64s (hi:lo) in lane order: unpacking interleaves within 128-bit
  // blocks, so the halves hold lanes {0,1,4,5,...} and {2,3,6,7,...}, which
  // the permutation puts back in order after the conversion (vcvtqq2ps
  // rounds by MXCSR: nearest even).
  static V l2f(V lo, V hi) {
    const __m256 evenPairs = _mm512_cvtepi64_ps(_mm512_unpacklo_epi32(asInt(lo), asInt(hi)));
    const __m256 oddPairs = _mm512_cvtepi64_ps(_mm512_unpackhi_epi32(asInt(lo), asInt(hi)));
    const V joined = _mm512_insertf32x8(_mm512_castps256_ps512(evenPairs), oddPairs, 1);
    const __m512i order = _mm512_setr_epi32(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    return _mm512_permutexvar_ps(order, joined);
  }
  // One half (8 lanes) of a truncated to int64s: vcvttps2qq gives the
  // minimum for NaN and every out-of-range value; the maximum where
  // a >= 2^63, 0 where a is NaN.
  static __m512i truncateToInt64(__m256 a) {
    const __m512i converted = _mm512_cvttps_epi64(a);
    const __m512 wide = _mm512_castps256_ps512(a);
    const __mmask8 tooLarge =
        static_cast<__mmask8>(_mm512_cmp_ps_mask(wide, constant(0x5f000000u), _CMP_GE_OQ));
    const __mmask8 ordered = static_cast<__mmask8>(_mm512_cmp_ps_mask(wide, wide, _CMP_ORD_Q));
    const __m512i saturated = _mm512_mask_mov_epi64(
        converted, tooLarge, _mm512_set1_epi64(static_cast<int64_t>(0x7fffffffffffffffu)));
    return _mm512_maskz_mov_epi64(ordered, saturated);
  }
  // The low (shift 0) or high (shift 32) words of a's int64s, in lane order.
  static V int64Words(V a, unsigned shift) {
    const __m256i low =
        _mm512_cvtepi64_epi32(_mm512_srli_epi64(truncateToInt64(_mm512_castps512_ps256(a)), shift));
    const __m256i high = _mm512_cvtepi64_epi32(
        _mm512_srli_epi64(truncateToInt64(_mm512_extractf32x8_ps(a, 1)), shift));
    return asFloat(_mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1));
  }
  static V f2lzlo(V a) { return int64Words(a, 0); }
  static V f2lzhi(V a) { return int64Words(a, 32); }
  static V canonicalNan(V a) {
    return _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q),
                              constant(soft::kCanonicalNan));
  }
  // Under DAZ a denormal compares equal to zero; keep only its sign.
  static V flushDenormal(V a) {
    return _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_EQ_OQ),
                              _mm512_and_ps(a, constant(soft::kSignBit)));
  }
};

static_assert(PrimitiveProvider<Avx512>);

// Loads 16 elements of each input (or broadcasts it) and stores the result;
// Broadcast is a bit set of the inputs that are scalars. The tail runs
// masked: lanes past n read zeros and are never stored. Flattened: a
// program called per vector, its constants rebuilt on every call, would
// cost more than its arithmetic.
template <size_t N, unsigned Broadcast, class F>
__attribute__((flatten)) void avx512Loop(F program, const Operand *in, float *dst, size_t n) {
  __m512 scalars[N > 0 ? N : 1];
  for (size_t k = 0; k < N; ++k)
    if (Broadcast & (1u << k))
      scalars[k] = _mm512_set1_ps(*in[k].data);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v[N];
    for (size_t k = 0; k < N; ++k)
      v[k] = (Broadcast & (1u << k)) ? scalars[k] : _mm512_loadu_ps(in[k].data + i);
    _mm512_storeu_ps(dst + i, std::apply(program, std::to_array(v)));
  }
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512 v[N];
    for (size_t k = 0; k < N; ++k)
      v[k] = (Broadcast & (1u << k)) ? scalars[k] : _mm512_maskz_loadu_ps(mask, in[k].data + i);
    _mm512_mask_storeu_ps(dst + i, mask, std::apply(program, std::to_array(v)));
  }
}

// avx512Loop instantiated for the inputs' broadcast mask (one of 2^N).
template <size_t N, unsigned Broadcast = 0, class F>
void avx512Dispatch(F program, std::span<const Operand> in, float *dst, size_t n) {
  if constexpr (Broadcast + 1 < (1u << N)) {
    unsigned broadcast = 0;
    for (size_t k = 0; k < N; ++k)
      broadcast |= in[k].broadcast ? 1u << k : 0u;
    if (broadcast != Broadcast)
      return avx512Dispatch<N, Broadcast + 1>(program, in, dst, n);
  }
  avx512Loop<N, Broadcast>(program, in.data(), dst, n);
}

} // namespace

void applyAvx512(Program program, std::span<const Operand> inputs, float *dst, size_t n) {
  switch (program) {
#define NPU_AVX512_CASE(name, Name, numInputs)                                                     \
  case Program::Name:                                                                              \
    return avx512Dispatch<numInputs>([](auto... v) { return microcode::name<Avx512>(v...); },      \
                                     inputs, dst, n);
    NPU_FOR_EACH_MICROPROGRAM(NPU_AVX512_CASE)
#undef NPU_AVX512_CASE
  }
}

uint32_t evaluateAvx512(Program program, std::span<const uint32_t> inputs) {
  __m512 v[kMaxInputs] = {};
  for (size_t k = 0; k < inputs.size(); ++k)
    v[k] = Avx512::constant(inputs[k]);
  const __m512 result = microcode::run<Avx512>(program, v);
  return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(Avx512::asInt(result))));
}

} // namespace npu::arith::detail
