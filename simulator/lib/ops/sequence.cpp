// IOTA, TRI and CUMSUM (isa/sequence.td): elements computed from their index
// or their row's running sum. The ISS computes them directly (64-bit integer
// arithmetic and comparisons, the micro-programs the record's f32 recipe
// names applied to whole columns or element after element); the RTL vector
// engine runs the record's recipes, word by word for i64, and co-simulation
// compares the two.
#include "../context.h"
#include "../typed_streams.h"

#include "npu/arith/functions.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace npu::sim {

Work work(const isa::inst::Iota &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Iota &op) {
  LaneColumns out;
  out.words.resize(op.n);
  switch (op.dtype) {
  case isa::DType::f32: {
    // (binary32(i) * step) + start, as the lanes round: l2f of the u32 i,
    // then mul and add with their canonical inputs and flushed results.
    std::iota(out.words.begin(), out.words.end(), uint32_t{0});
    const float zero = 0.0f;
    float *words = reinterpret_cast<float *>(out.words.data());
    const std::array<arith::Operand, 2> toFloat = {arith::Operand{words},
                                                   arith::Operand{&zero, true}};
    arith::apply(arith::Program::L2f, toFloat, words, op.n);
    float step, start;
    std::memcpy(&step, &op.step, 4);
    std::memcpy(&start, &op.start, 4);
    const std::array<arith::Operand, 2> scaled = {arith::Operand{words},
                                                  arith::Operand{&step, true}};
    arith::apply(arith::Program::Mul, scaled, words, op.n);
    const std::array<arith::Operand, 2> shifted = {arith::Operand{words},
                                                   arith::Operand{&start, true}};
    arith::apply(arith::Program::Add, shifted, words, op.n);
    break;
  }
  case isa::DType::i32:
    for (uint64_t i = 0; i < op.n; ++i)
      out.words[i] = op.start + static_cast<uint32_t>(i) * op.step;
    break;
  case isa::DType::i64: {
    // start and step sign-extended; the sum modulo 2^64.
    const uint64_t start = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(op.start)));
    const uint64_t step = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(op.step)));
    out.high.resize(op.n);
    for (uint64_t i = 0; i < op.n; ++i) {
      const uint64_t v = start + i * step;
      out.words[i] = static_cast<uint32_t>(v);
      out.high[i] = static_cast<uint32_t>(v >> 32);
    }
    break;
  }
  default:
    // The packet's checks admit only the record's types.
    throw std::logic_error("iota: dtype outside the record's accepted types");
  }
  storeLanes(ctx, op.dst, op.dtype, out);
}

Work work(const isa::inst::Tri &op) {
  return {.elements = uint64_t(op.rows) * op.cols};
}

// The kept elements pass through lane form unchanged; the others take value
// as the store converts a lane value (an i64's high word its sign fill).
void execute(ExecContext &ctx, const isa::inst::Tri &op) {
  LaneColumns lanes = loadLanes(ctx, op.src, uint64_t(op.rows) * op.cols, op.dtype);
  const uint32_t fillHigh = static_cast<uint32_t>(static_cast<int32_t>(op.value) >> 31);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j) {
      const int64_t offset = static_cast<int64_t>(j) - static_cast<int64_t>(i);
      if (op.upper ? offset >= op.diagonal : offset <= op.diagonal)
        continue;
      const uint64_t k = i * op.cols + j;
      lanes.words[k] = op.value;
      if (!lanes.high.empty())
        lanes.high[k] = fillHigh;
    }
  storeLanes(ctx, op.dst, op.dtype, lanes);
}

Work work(const isa::inst::Cumsum &op) {
  return {.elements = uint64_t(op.rows) * op.cols};
}

// Each row's running sum in element order from +0: the integers wrap (an
// i64 in its two words), the floats add in binary32 by the lanes' add
// program (canonical inputs, flushed results), one element after another.
void execute(ExecContext &ctx, const isa::inst::Cumsum &op) {
  LaneColumns lanes = loadLanes(ctx, op.src, uint64_t(op.rows) * op.cols, op.dtype);
  for (uint64_t i = 0; i < op.rows; ++i) {
    uint64_t sum = 0;
    float fsum = 0.0f;
    for (uint64_t k = i * op.cols; k < (i + 1) * op.cols; ++k) {
      switch (op.dtype) {
      case isa::DType::i32:
        sum += lanes.words[k];
        lanes.words[k] = static_cast<uint32_t>(sum);
        break;
      case isa::DType::i64:
        sum += uint64_t{lanes.high[k]} << 32 | lanes.words[k];
        lanes.words[k] = static_cast<uint32_t>(sum);
        lanes.high[k] = static_cast<uint32_t>(sum >> 32);
        break;
      default: {
        float *x = reinterpret_cast<float *>(&lanes.words[k]);
        const std::array<arith::Operand, 2> in = {arith::Operand{&fsum}, arith::Operand{x}};
        arith::apply(arith::Program::Add, in, x, 1);
        fsum = *x;
        break;
      }
      }
    }
  }
  storeLanes(ctx, op.dst, op.dtype, lanes);
}

} // namespace npu::sim
