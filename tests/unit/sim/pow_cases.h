// POW (the tensor form of torch.pow) on every pair of base and exponent
// among the binary32 edge values (type_pairs.h's) and the exponents whose
// special cases C99 F.9.4.4 names (odd and even integers of both signs,
// halves, values past 2^24 that are even integers), under each broadcast of
// the exponent. The ISS op tests run them against the reference model, the
// RTL op tests against the ISS. On bf16 and f16 (binary32 lanes, the
// result rounded once on store) the same over the type's edge and ordinary
// values (half_float_cases.h) with such exponents, and over kRowShapes.
#pragma once

#include "half_float_cases.h"
#include "integer_cases.h"
#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace npu::test {

inline std::vector<uint64_t> powEdges() {
  std::vector<uint64_t> e = edgeElements(isa::DType::f32);
  // 2, 3, -2, -3, 0.5, -0.5, 1e-5, 10, 16777215 (the largest odd integer
  // below 2^24), -16777215.
  for (uint64_t v :
       std::initializer_list<uint64_t>{0x40000000, 0x40400000, 0xc0000000, 0xc0400000, 0x3f000000,
                                       0xbf000000, 0x3727c5ac, 0x41200000, 0x4b7fffff, 0xcb7fffff})
    e.push_back(v);
  return e;
}

// A 16-bit float type's values (halfFloatValues) and the exponents 2, 3,
// -2, -3, 0.5, -0.5, 10 in it.
inline std::vector<uint64_t> halfPowEdges(isa::DType type) {
  std::vector<uint64_t> e = halfFloatValues(type);
  for (uint64_t v :
       type == isa::DType::bf16
           ? std::vector<uint64_t>{0x4000, 0x4040, 0xc000, 0xc040, 0x3f00, 0xbf00, 0x4120}
           : std::vector<uint64_t>{0x4000, 0x4200, 0xc000, 0xc200, 0x3800, 0xb800, 0x4900})
    e.push_back(v);
  return e;
}

// Calls run(make, name) for each float type POW accepts and each broadcast
// of b (in place for `none`), and on bf16 and f16 for the shape sweep;
// returns the count.
template <class Run> int forEachPowTest(Run run) {
  int count = 0;
  for (isa::DType type : {isa::DType::f32, isa::DType::bf16, isa::DType::f16}) {
    if (!accepts(isa::Opcode::POW, type))
      continue;
    const std::vector<uint64_t> e = type == isa::DType::f32 ? powEdges() : halfPowEdges(type);
    const uint32_t k = static_cast<uint32_t>(e.size());
    for (unsigned bcast = 0; bcast < 4; ++bcast) {
      const auto make = [&](auto &place) {
        isa::inst::Pow op;
        op.dtype = type;
        op.bcast = static_cast<isa::Broadcast>(bcast);
        op.rows = k;
        op.cols = k;
        const std::vector<uint64_t> a = placeEdgePairs(op, place, type, e, 8);
        op.dst = bcast == 0 ? op.a : placeElements(place, type, std::vector<uint64_t>(a.size(), 0));
        return isa::packetOf(op);
      };
      run(make, "pow " + typeName(type) + " bcast " + std::to_string(bcast) +
                    (bcast == 0 ? " in place" : ""));
      ++count;
    }
    if (type != isa::DType::f32)
      count += shapeSweepTests<isa::inst::Pow>(run, type, e, type);
  }
  return count;
}

} // namespace npu::test
