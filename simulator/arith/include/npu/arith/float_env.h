// The host floating-point environment the fast paths need: MXCSR with
// flush-to-zero (FTZ), denormals-are-zero (DAZ), round to nearest even and
// every exception masked. On x86 SSE/AVX this gives exactly the rounding and
// flushing of docs/arith.md (tininess is detected after rounding); NaN
// results still need canonicalising by the caller.
#pragma once

#include <cstdint>

namespace npu::arith {

// Sets the environment above for the current thread and restores the
// previous MXCSR on destruction. Nesting is cheap: when the environment is
// already in place the constructor does not write MXCSR.
class FloatEnvGuard {
public:
  FloatEnvGuard();
  ~FloatEnvGuard();
  FloatEnvGuard(const FloatEnvGuard &) = delete;
  FloatEnvGuard &operator=(const FloatEnvGuard &) = delete;

  // The MXCSR value the guard installs.
  static constexpr uint32_t kMxcsr = 0x9fc0; // FTZ | RC=nearest | all exceptions masked | DAZ

private:
  uint32_t saved_;
};

} // namespace npu::arith
