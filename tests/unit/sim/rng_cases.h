// RAND's and RANDN's directed cases, for the ISS (against the reference model) and the
// RTL (against the ISS) op tests: every type the record accepts, over seeds
// and offsets that exercise the key's two words and the counter's carry,
// and lengths that are not multiples of 4 and end inside a beat, on a chunk
// boundary and a few chunks in.
#pragma once

#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <cstdint>
#include <string>
#include <vector>

namespace npu::test {

struct RandCase {
  uint32_t n;
  uint64_t seed;
  uint32_t offset;
};

// One element, a block and a bit, a partial beat, the vector engine's chunk
// of 128 elements and one past it, three chunks and a bit.
inline constexpr uint32_t kRandLengths[] = {1, 6, 7, 128, 129, 3 * 128 + 37};

inline std::vector<RandCase> randCases() {
  // Zero; the seed's halves told apart; all ones; offsets whose counter
  // carries into its second word within the packet (0xffffffff + i / 4).
  const std::pair<uint64_t, uint32_t> operands[] = {{0, 0},
                                                    {0x00000000ffffffffu, 1},
                                                    {0xffffffff00000000u, 0x7fffffffu},
                                                    {~uint64_t{0}, 0xfffffffeu},
                                                    {0x243f6a8885a308d3u, 0xffffffffu}};
  std::vector<RandCase> cases;
  for (uint32_t n : kRandLengths)
    for (auto [seed, offset] : operands)
      cases.push_back({n, seed, offset});
  return cases;
}

// Calls run(type, case) for every test of Op (isa::inst::Rand or Randn):
// each type it accepts, each of randCases. Returns the number of types.
template <class Op, class Run> int forEachRngTest(Run run) {
  return forEachAcceptedType(Op::kOpcode, [&](isa::DType type) {
    for (const RandCase &c : randCases())
      run(type, c);
  });
}

// The packet of one test: its destination filled with a pattern first,
// placed by place(words) (a twin's values(), returning its address).
template <class Op, class Place> Op rngOf(isa::DType type, const RandCase &c, Place place) {
  Op op;
  op.dtype = type;
  op.n = c.n;
  op.seed_lo = static_cast<uint32_t>(c.seed);
  op.seed_hi = static_cast<uint32_t>(c.seed >> 32);
  op.offset = c.offset;
  op.dst = place(std::vector<uint32_t>((uint64_t(c.n) * typeBytes(type) + 3) / 4, 0xa5a5a5a5u));
  return op;
}

template <class Op> std::string rngName(const Op &op) {
  return std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(op.dtype) + " of " +
         std::to_string(op.n) + " seed " + std::to_string(op.seed_hi) + ":" +
         std::to_string(op.seed_lo) + " offset " + std::to_string(op.offset);
}

} // namespace npu::test
