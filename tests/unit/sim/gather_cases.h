// GATHER's directed cases, for the ISS (against the reference model) and the
// RTL (against the ISS) op tests: every type the record accepts, both index
// modes and types, with and without wrap, over shapes whose rows end inside
// a word, a beat and a burst, the first and last index (and -n, -1 under
// wrap), and one index out of range per case of the fault variety.
#pragma once

#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace npu::test {

struct GatherCase {
  uint32_t outer, n, count, inner;
  isa::GatherMode mode;
  isa::IndexType itype;
  bool wrap;
  std::vector<int64_t> index; // outer x count x inner (full) or count (shared)
  bool faults;                // one index is outside the range
};

// Shapes (outer, n, count, inner): one element; one table row (n = 1);
// more indices than rows; rows of an odd number of elements (a 1- or 2-byte
// element's row starts inside a word); rows longer than a beat (32 bytes)
// and than a burst (512 bytes); several outer slices of each.
inline constexpr uint32_t kGatherShapes[][4] = {{1, 1, 1, 1}, {5, 1, 3, 2},  {1, 4, 9, 3},
                                                {3, 5, 2, 7}, {2, 7, 5, 33}, {1, 9, 3, 300}};

// Every index position in range: the first and last row (-n and -1 under
// wrap) at the first positions, then random ones. A faulting case puts one
// index out of range (n, one below the range, and an extreme of the index
// type, in turn) at a middle position.
inline std::vector<GatherCase> gatherCases() {
  std::mt19937_64 rng(0x6a7e);
  std::vector<GatherCase> cases;
  int bad = 0;
  for (const auto &shape : kGatherShapes)
    for (isa::GatherMode mode : {isa::GatherMode::full, isa::GatherMode::shared})
      for (isa::IndexType itype : {isa::IndexType::i32, isa::IndexType::i64})
        for (bool wrap : {false, true})
          for (bool faults : {false, true}) {
            GatherCase c{shape[0], shape[1], shape[2], shape[3], mode, itype, wrap, {}, faults};
            const int64_t n = c.n, low = wrap ? -n : 0;
            const uint64_t positions =
                mode == isa::GatherMode::full ? uint64_t(c.outer) * c.count * c.inner : c.count;
            const std::vector<int64_t> edges =
                wrap ? std::vector<int64_t>{0, n - 1, -n, -1} : std::vector<int64_t>{n - 1, 0};
            for (uint64_t p = 0; p < positions; ++p)
              c.index.push_back(p < edges.size() ? edges[p]
                                                 : low + static_cast<int64_t>(rng() % (n - low)));
            if (faults) {
              const bool i64 = itype == isa::IndexType::i64;
              const int64_t extreme[] = {
                  i64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min(),
                  i64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max()};
              const int64_t values[] = {n, low - 1, extreme[0], extreme[1]};
              c.index[positions / 2] = values[bad++ % 4];
            }
            cases.push_back(std::move(c));
          }
  return cases;
}

// Calls run(type, case) for every GATHER test: each type GATHER accepts,
// each of gatherCases. Returns the number of types.
template <class Run> int forEachGatherTest(Run run) {
  return forEachAcceptedType(isa::Opcode::GATHER, [&](isa::DType type) {
    for (const GatherCase &c : gatherCases())
      run(type, c);
  });
}

// The GATHER of one test: random source elements, the indices, and a
// destination filled with a pattern (the elements a fault leaves unwritten
// keep it).
template <class Place, class Rng>
isa::inst::Gather gatherOf(isa::DType type, const GatherCase &c, Place place, Rng &rng) {
  isa::inst::Gather op;
  op.dtype = type;
  op.outer = c.outer;
  op.n = c.n;
  op.count = c.count;
  op.inner = c.inner;
  op.mode = c.mode;
  op.itype = c.itype;
  op.wrap = c.wrap;
  const unsigned size = typeBytes(type);
  std::vector<uint64_t> src(uint64_t(c.outer) * c.n * c.inner);
  for (uint64_t &e : src)
    e = rng() & (size == 8 ? ~uint64_t(0) : (uint64_t(1) << 8 * size) - 1);
  op.src = place(packedWords(type, src, 0x5a));
  std::vector<uint32_t> index;
  for (int64_t i : c.index) {
    index.push_back(static_cast<uint32_t>(i));
    if (c.itype == isa::IndexType::i64)
      index.push_back(static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32));
  }
  op.index = place(index);
  op.dst = place(
      std::vector<uint32_t>((uint64_t(c.outer) * c.count * c.inner * size + 3) / 4, 0xa5a5a5a5u));
  return op;
}

inline std::string gatherName(const isa::inst::Gather &op, const GatherCase &c) {
  return "gather " + typeName(op.dtype) + " " + std::to_string(op.outer) + "x" +
         std::to_string(op.n) + "->" + std::to_string(op.count) + "x" + std::to_string(op.inner) +
         (op.mode == isa::GatherMode::full ? " full" : " shared") +
         (op.itype == isa::IndexType::i64 ? " i64" : " i32") + (op.wrap ? " wrap" : "") +
         (c.faults ? " with a bad index" : "");
}

} // namespace npu::test
