#include "npu/arith/float_env.h"

#include <xmmintrin.h>

namespace npu::arith {

// The exception flags (bits 0-5) are sticky status, not configuration: they
// are ignored when deciding whether the environment is already in place.
static constexpr uint32_t kStatusFlags = 0x3f;

FloatEnvGuard::FloatEnvGuard() : saved_(_mm_getcsr()) {
  if ((saved_ & ~kStatusFlags) != kMxcsr)
    _mm_setcsr(kMxcsr | (saved_ & kStatusFlags));
}

FloatEnvGuard::~FloatEnvGuard() {
  if ((saved_ & ~kStatusFlags) != kMxcsr)
    _mm_setcsr(saved_);
}

} // namespace npu::arith
