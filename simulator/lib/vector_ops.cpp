#include "vector_ops.h"

#include "host_threads.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace npu::sim {

namespace {

constexpr size_t kLanes = isa::hw::kVectorLanes;
static_assert((kLanes & (kLanes - 1)) == 0, "the pairwise tree needs a power-of-two lane count");

// The most inputs a micro-program takes.
constexpr size_t kMaxInputs = [] {
  size_t most = 0;
  for (const arith::microcode::ProgramInfo &program : arith::microcode::kPrograms)
    most = std::max<size_t>(most, program.numInputs);
  return most;
}();

uint32_t bitsOfFloat(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Denormals read as zeros of the same sign (DAZ).
float flushed(float x) {
  const uint32_t u = bitsOfFloat(x);
  return (u & 0x7f800000u) == 0 ? floatOfBits(u & 0x80000000u) : x;
}

// fmax of docs/arith.md: NaN if either is NaN, -0 < +0, denormals as zeros.
float specMax(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return floatOfBits(kCanonicalNaN);
  a = flushed(a);
  b = flushed(b);
  if (a == b) // equal values, or +0 and -0: +0 wins
    return floatOfBits(bitsOfFloat(a) & bitsOfFloat(b));
  return a > b ? a : b;
}

// Combines the lanes pairwise: ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)) for L = 8.
template <class Combine> float tree(float *lanes, Combine combine) {
  for (size_t width = kLanes / 2; width >= 1; width /= 2)
    for (size_t l = 0; l < width; ++l)
      lanes[l] = combine(lanes[2 * l], lanes[2 * l + 1]);
  return lanes[0];
}

} // namespace

unsigned partsFor(uint64_t elements, uint64_t units) {
  return static_cast<unsigned>(std::max<uint64_t>(
      1, std::min({uint64_t(kernels::issThreads()), units, elements / kElementsPerThread})));
}

void forRowRanges(uint64_t rows, uint64_t cols,
                  const std::function<void(uint64_t first, uint64_t end)> &rowRange) {
  const unsigned parts = partsFor(rows * cols, rows);
  if (parts == 1)
    return rowRange(0, rows);
  kernels::runParts(parts, [&](unsigned part) {
    rowRange(partBegin(rows, part, parts), partBegin(rows, part + 1, parts));
  });
}

void applyOnThreads(Program program, std::span<const arith::Operand> inputs, float *dst, size_t n) {
  const unsigned parts = partsFor(n, n);
  // More inputs than any program takes: arith::apply's arity error.
  if (parts == 1 || inputs.size() > kMaxInputs)
    return arith::apply(program, inputs, dst, n);
  kernels::runParts(parts, [&](unsigned part) {
    const uint64_t first = partBegin(n, part, parts), end = partBegin(n, part + 1, parts);
    std::array<arith::Operand, kMaxInputs> shifted;
    for (size_t k = 0; k < inputs.size(); ++k)
      shifted[k] = {inputs[k].broadcast ? inputs[k].data : inputs[k].data + first,
                    inputs[k].broadcast};
    arith::apply(program, {shifted.data(), inputs.size()}, dst + first, end - first);
  });
}

float canonical(float x) { return std::isnan(x) ? floatOfBits(kCanonicalNaN) : x; }

float scalar(Program program, std::initializer_list<float> inputs) {
  std::vector<uint32_t> bits;
  for (float f : inputs)
    bits.push_back(bitsOfFloat(f));
  return floatOfBits(arith::evaluate(program, bits));
}

float laneSum(const float *x, size_t n) {
  // The host adds round like fadd under FloatEnvGuard; NaN payloads are
  // made canonical once at the end, which NaN propagation makes equivalent.
  float lanes[kLanes] = {};
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (size_t l = 0; l < kLanes; ++l)
      lanes[l] += x[j + l];
  for (size_t l = 0; j + l < n; ++l)
    lanes[l] += x[j + l];
  return canonical(tree(lanes, [](float a, float b) { return a + b; }));
}

float laneMaxPortable(const float *x, size_t n) {
  float lanes[kLanes];
  for (float &l : lanes)
    l = -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < n; ++j)
    lanes[j % kLanes] = specMax(lanes[j % kLanes], x[j]);
  return tree(lanes, specMax);
}

namespace {

// One element a lane into laneMaxAvx2's lanes: flushed (by its exponent
// bits, not a compare: the same under any MXCSR) and taken by Avx2::fmax's
// formula, which on flushed values is specMax but for a NaN's bits (all
// ones instead of the canonical NaN).
__attribute__((target("avx2"))) __m256 takeMax(__m256 lanes, __m256 v) {
  const __m256i zeroOrDenormal =
      _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7f800000)),
                         _mm256_setzero_si256());
  const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(0x80000000u)));
  v = _mm256_blendv_ps(v, _mm256_and_ps(v, sign), _mm256_castsi256_ps(zeroOrDenormal));
  const __m256 larger = _mm256_and_ps(_mm256_max_ps(lanes, v), _mm256_max_ps(v, lanes));
  return _mm256_or_ps(larger, _mm256_cmp_ps(lanes, v, _CMP_UNORD_Q));
}

} // namespace

// The L = 8 lanes are a ymm register's; the tree's specMax makes any NaN
// lane the canonical NaN, as the portable lanes' is.
__attribute__((target("avx2"))) float laneMaxAvx2(const float *x, size_t n) {
  static_assert(kLanes == 8, "a ymm register holds the lanes");
  __m256 lanes = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    lanes = takeMax(lanes, _mm256_loadu_ps(x + j));
  if (j < n) {
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - j)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 taken = takeMax(lanes, _mm256_maskload_ps(x + j, tail));
    lanes = _mm256_blendv_ps(lanes, taken, _mm256_castsi256_ps(tail));
  }
  alignas(32) float stored[kLanes];
  _mm256_store_ps(stored, lanes);
  return tree(stored, specMax);
}

float laneMax(const float *x, size_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? laneMaxAvx2(x, n) : laneMaxPortable(x, n);
}

} // namespace npu::sim
