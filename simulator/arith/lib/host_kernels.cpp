// The micro-programs instantiated with the host providers. This is the only
// translation unit built with -mavx2 -mfma (see CMakeLists.txt).
#include "host_kernels.h"

#include "npu/arith/host_providers.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <tuple>

namespace npu::arith::detail {

namespace {

// Lanes past n read zeros and are never stored.
__m256i tailMask(size_t remaining) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining)), lane);
}

// Loads 8 elements of each input (or broadcasts it) and stores the result;
// Broadcast is a bit set of the inputs that are scalars. Flattened: a
// program called per vector, its constants rebuilt on every call, would
// cost more than its arithmetic.
template <size_t N, unsigned Broadcast, class F>
__attribute__((flatten)) void avx2Loop(F program, const Operand *in, float *dst, size_t n) {
  __m256 scalars[N > 0 ? N : 1];
  for (size_t k = 0; k < N; ++k)
    if (Broadcast & (1u << k))
      scalars[k] = _mm256_broadcast_ss(in[k].data);
  auto load = [&](size_t k, size_t i) {
    return (Broadcast & (1u << k)) ? scalars[k] : _mm256_loadu_ps(in[k].data + i);
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v[N];
    for (size_t k = 0; k < N; ++k)
      v[k] = load(k, i);
    _mm256_storeu_ps(dst + i, std::apply(program, std::to_array(v)));
  }
  if (i < n) {
    __m256i mask = tailMask(n - i);
    __m256 v[N];
    for (size_t k = 0; k < N; ++k)
      v[k] = (Broadcast & (1u << k)) ? scalars[k] : _mm256_maskload_ps(in[k].data + i, mask);
    _mm256_maskstore_ps(dst + i, mask, std::apply(program, std::to_array(v)));
  }
}

// Runs avx2Loop instantiated for the inputs' broadcast mask (one of 2^N),
// so that its loads do not branch per element.
template <size_t N, unsigned Broadcast = 0, class F>
void avx2Dispatch(F program, std::span<const Operand> in, float *dst, size_t n) {
  if constexpr (Broadcast + 1 < (1u << N)) {
    unsigned broadcast = 0;
    for (size_t k = 0; k < N; ++k)
      broadcast |= in[k].broadcast ? 1u << k : 0u;
    if (broadcast != Broadcast)
      return avx2Dispatch<N, Broadcast + 1>(program, in, dst, n);
  }
  avx2Loop<N, Broadcast>(program, in.data(), dst, n);
}

template <size_t N, class F>
void scalarLoop(F program, std::span<const Operand> in, float *dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float v[N];
    for (size_t k = 0; k < N; ++k)
      v[k] = in[k].data[in[k].broadcast ? 0 : i];
    dst[i] = std::apply(program, std::to_array(v));
  }
}

} // namespace

void applyAvx2(Program program, std::span<const Operand> inputs, float *dst, size_t n) {
  switch (program) {
#define NPU_AVX2_CASE(name, Name, numInputs)                                                       \
  case Program::Name:                                                                              \
    return avx2Dispatch<numInputs>([](auto... v) { return microcode::name<Avx2>(v...); }, inputs,  \
                                   dst, n);
    NPU_FOR_EACH_MICROPROGRAM(NPU_AVX2_CASE)
#undef NPU_AVX2_CASE
  }
}

void applyHostScalar(Program program, std::span<const Operand> inputs, float *dst, size_t n) {
  switch (program) {
#define NPU_SCALAR_CASE(name, Name, numInputs)                                                     \
  case Program::Name:                                                                              \
    return scalarLoop<numInputs>([](auto... v) { return microcode::name<HostScalar>(v...); },      \
                                 inputs, dst, n);
    NPU_FOR_EACH_MICROPROGRAM(NPU_SCALAR_CASE)
#undef NPU_SCALAR_CASE
  }
}

uint32_t evaluateHostScalar(Program program, std::span<const uint32_t> inputs) {
  float v[kMaxInputs] = {};
  for (size_t k = 0; k < inputs.size(); ++k)
    v[k] = std::bit_cast<float>(inputs[k]);
  return std::bit_cast<uint32_t>(microcode::run<HostScalar>(program, v));
}

uint32_t evaluateAvx2(Program program, std::span<const uint32_t> inputs) {
  __m256 v[kMaxInputs] = {};
  for (size_t k = 0; k < inputs.size(); ++k)
    v[k] = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(inputs[k])));
  __m256 result = microcode::run<Avx2>(program, v);
  return static_cast<uint32_t>(_mm256_extract_epi32(_mm256_castps_si256(result), 0));
}

} // namespace npu::arith::detail
