// Small helpers shared by the op families for sizes and saturating work
// estimates. Internal to libnpu_iss.
#pragma once

#include <cstdint>
#include <limits>

namespace npu::sim {

// Work estimates saturate instead of faulting: perf mode never touches
// memory, and an absurd size only makes the estimate absurd.
inline uint64_t satMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
inline uint64_t satAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

} // namespace npu::sim
