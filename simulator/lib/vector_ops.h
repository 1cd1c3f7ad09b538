// Array operations of the vector engine, each exactly the spec arithmetic of
// docs/arith.md: elementwise work runs the micro-programs through
// npu::arith::apply, reductions follow the L-lane order. Internal to
// libnpu_iss; callers run under arith::FloatEnvGuard (Iss::step installs it).
#pragma once

#include "npu/arith/functions.h"
#include "npu/isa/isa.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>

namespace npu::sim {

using arith::Program;

inline arith::Operand each(const float *data) { return {data, false}; }
inline arith::Operand every(const float *value) { return {value, true}; }

// dst[i] = program(inputs...[i]) for i < n.
inline void map(Program program, std::initializer_list<arith::Operand> inputs, float *dst,
                size_t n) {
  arith::apply(program, std::span<const arith::Operand>(inputs.begin(), inputs.size()), dst, n);
}

// The micro-program of the .td record of instruction Op (its Program field).
template <class Op> constexpr Program programOf() {
  constexpr std::optional<Program> program =
      arith::microcode::programForOpcode(static_cast<uint32_t>(Op::kOpcode));
  static_assert(program.has_value(), "the instruction's record names no micro-program");
  return *program;
}

// One evaluation of a program on scalars (per-packet constants).
float scalar(Program program, std::initializer_list<float> inputs);

// The canonical NaN and denormal flushing of docs/arith.md, for values that
// pass through without arithmetic.
inline constexpr uint32_t kCanonicalNaN = 0x7fc00000u;
float canonical(float x);

// Sum and maximum of n elements in the spec's lane order: element j goes to
// lane j mod L, lanes accumulate in index order (from +0, resp. -inf) and
// combine by the fixed pairwise tree.
float laneSum(const float *x, size_t n);
float laneMax(const float *x, size_t n);

} // namespace npu::sim
