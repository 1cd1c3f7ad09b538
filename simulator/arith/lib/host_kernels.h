// Entry points of the translation unit compiled with -mavx2 -mfma. Callers
// must have checked hostHasAvx2Fma() and installed FloatEnvGuard.
#pragma once

#include "npu/arith/functions.h"

namespace npu::arith::detail {

void applyAvx2(Program program, std::span<const Operand> inputs, float *dst, size_t n);
void applyHostScalar(Program program, std::span<const Operand> inputs, float *dst, size_t n);
uint32_t evaluateHostScalar(Program program, std::span<const uint32_t> inputs);
uint32_t evaluateAvx2(Program program, std::span<const uint32_t> inputs);

} // namespace npu::arith::detail
