// Entry points of the translation units compiled with -mavx2 -mfma and with
// -mavx512f -mavx512dq. Callers must have checked hostHasAvx2Fma() (resp.
// hostHasAvx512()) and installed FloatEnvGuard.
#pragma once

#include "npu/arith/functions.h"

#include <algorithm>

namespace npu::arith::detail {

// The most inputs a micro-program takes: the size of a staging array for one
// program's inputs.
inline constexpr size_t kMaxInputs = [] {
  size_t most = 0;
  for (const microcode::ProgramInfo &program : microcode::kPrograms)
    most = std::max<size_t>(most, program.numInputs);
  return most;
}();

void applyAvx2(Program program, std::span<const Operand> inputs, float *dst, size_t n);
void applyHostScalar(Program program, std::span<const Operand> inputs, float *dst, size_t n);
uint32_t evaluateHostScalar(Program program, std::span<const uint32_t> inputs);
uint32_t evaluateAvx2(Program program, std::span<const uint32_t> inputs);
void applyAvx512(Program program, std::span<const Operand> inputs, float *dst, size_t n);
uint32_t evaluateAvx512(Program program, std::span<const uint32_t> inputs);

} // namespace npu::arith::detail
