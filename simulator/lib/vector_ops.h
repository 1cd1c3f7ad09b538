// Array operations of the vector engine, each exactly the spec arithmetic of
// docs/arith.md: elementwise work runs the micro-programs through
// npu::arith::apply (over several host threads when large), reductions
// follow the L-lane order. Internal to libnpu_iss; callers run under
// arith::FloatEnvGuard (Iss::step installs it).
#pragma once

#include "npu/arith/functions.h"
#include "npu/isa/isa.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>

namespace npu::sim {

using arith::Program;

inline arith::Operand each(const float *data) { return {data, false}; }
inline arith::Operand every(const float *value) { return {value, true}; }

// Below this many elements per thread an elementwise run stays on one:
// waking the workers costs microseconds.
inline constexpr size_t kElementsPerThread = size_t(1) << 16;

// How many parts (host threads) `elements` elements of work split into: at
// most issThreads(), each part at least kElementsPerThread elements, at
// most `units` (the rows of a row operation).
unsigned partsFor(uint64_t elements, uint64_t units);

// Item range [first, end) of part `part` of `parts` over `items` items:
// contiguous, in order, covering them all.
inline uint64_t partBegin(uint64_t items, unsigned part, unsigned parts) {
  return items * part / parts;
}

// Calls rowRange(first, end) on disjoint ranges covering rows [0, rows) of
// `cols` elements each, on partsFor(rows * cols, rows) host threads: for row
// operations whose rows are independent (each range with its own scratch).
void forRowRanges(uint64_t rows, uint64_t cols,
                  const std::function<void(uint64_t first, uint64_t end)> &rowRange);

// dst[i] = program(inputs[0][i], ...) for i < n as arith::apply, split into
// disjoint ranges over partsFor(n, n) host threads: the same bits for any
// thread count. dst may alias an input that is not broadcast.
void applyOnThreads(Program program, std::span<const arith::Operand> inputs, float *dst, size_t n);

// dst[i] = program(inputs...[i]) for i < n.
inline void map(Program program, std::initializer_list<arith::Operand> inputs, float *dst,
                size_t n) {
  applyOnThreads(program, std::span<const arith::Operand>(inputs.begin(), inputs.size()), dst, n);
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
// laneMax's two paths, which give the same bits (laneMax takes the second
// where the host has AVX2), for the tests that compare them.
float laneMaxPortable(const float *x, size_t n);
float laneMaxAvx2(const float *x, size_t n);

} // namespace npu::sim
