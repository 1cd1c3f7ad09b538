// Elementwise evaluation of the micro-programs of docs/arith.md (exp, log,
// div, pow, ...) over arrays, for the ISS. Every implementation gives the
// same bits; the fast ones are picked when the host supports them.
#pragma once

#include "npu/arith/microcode.h" // generated from isa/microcode.td

#include <cstddef>
#include <cstdint>
#include <span>

namespace npu::arith {

using microcode::Program;

enum class Implementation {
  Reference,  // integer-only golden model (npu/arith/softfloat.h), one element at a time
  HostScalar, // host FPU, one element at a time (needs AVX2 and FMA)
  Avx2,       // host FPU, 8 elements at a time (needs AVX2 and FMA)
  Avx512,     // host FPU, 16 elements at a time (needs AVX-512 F and DQ besides)
};

// Whether this CPU can run HostScalar and Avx2.
bool hostHasAvx2Fma();
// Whether this CPU can run Avx512 (and so every other implementation).
bool hostHasAvx512();
// Avx512, else Avx2, whichever the host has first; else Reference.
Implementation fastestImplementation();
const char *implementationName(Implementation impl);

// One input of an elementwise evaluation: n consecutive elements, or a
// single element used for every i (the scalar exponent of POWS, the divisor
// of DIVS, ...).
struct Operand {
  const float *data = nullptr;
  bool broadcast = false;
};

// dst[i] = program(inputs[0][i], inputs[1][i], ...) for i < n, with
// inputs.size() == microcode::kPrograms[program].numInputs (checked: throws
// std::invalid_argument). dst may alias an input that is not broadcast.
// Installs FloatEnvGuard itself; throws std::runtime_error when the host
// lacks the instructions `impl` needs.
void apply(Program program, std::span<const Operand> inputs, float *dst, size_t n,
           Implementation impl = fastestImplementation());

// dst[i] = program(src[i]) for a one-input program.
inline void applyUnary(Program program, const float *src, float *dst, size_t n,
                       Implementation impl = fastestImplementation()) {
  const Operand in[] = {{src}};
  apply(program, in, dst, n, impl);
}

// One evaluation, as raw 32-bit patterns (inputs.size() as for apply).
uint32_t evaluate(Program program, std::span<const uint32_t> inputs,
                  Implementation impl = Implementation::Reference);

} // namespace npu::arith
