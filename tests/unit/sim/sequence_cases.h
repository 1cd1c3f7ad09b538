// IOTA's, TRI's, CUMSUM's, ARGMAX's, ARGMIN's and COUNT's directed cases, for the ISS
// (against the reference model) and the RTL (against the ISS) op tests:
// every type the record accepts, over edge operands and lengths that end
// inside a beat, on a chunk boundary and a few chunks in.
#pragma once

#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <array>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace npu::test {

struct IotaCase {
  uint32_t n;
  uint32_t start, step; // the operands' 32-bit patterns
};

// Lengths: one element, a partial beat, the vector engine's chunk of 128
// elements (HW_VECTOR_LANES 8 x 16 groups) and one past it, and three
// chunks and a bit (the reads and writes of several chunks in flight).
inline constexpr uint32_t kIotaLengths[] = {1, 7, 128, 129, 3 * 128 + 37};

inline std::vector<IotaCase> iotaCases(isa::DType type) {
  std::vector<std::pair<uint32_t, uint32_t>> operands;
  if (type == isa::DType::f32) {
    const auto f = [](float x) { return std::bit_cast<uint32_t>(x); };
    operands = {
        {f(0.0f), f(1.0f)},   {f(-3.0f), f(0.5f)},  {f(1.0f), f(-0.25f)},
        // Inexact: two roundings per element.
        {f(0.1f), f(0.1f)},   {f(-2.7f), f(1.0f / 3.0f)},
        // Past 2^24 the sums round: start + i is not i + start.
        {f(16777216.0f), f(1.0f)}, {f(16777215.0f), f(3.0f)},
        // Overflow to infinity, infinity - infinity, NaN, denormals (as zeros).
        {f(3.0e38f), f(1.0e37f)}, {0xff800000u, 0x7f800000u}, {0x7fc00001u, f(1.0f)},
        {0x00000001u, 0x807fffffu}, {f(1.0f), 0x00400000u}, {f(-0.0f), f(-0.0f)}};
  } else {
    // int32 patterns, sign-extended for i64: the ends of the range, steps
    // whose products pass 2^31 and 2^32 (i64: values past 2^32 and below
    // -2^32, carries out of the low word), negative steps.
    operands = {{0, 1},          {5, 0xfffffffdu},        {0x7fffffffu, 1},
                {0x80000000u, 0xffffffffu}, {0xfffffffeu, 0x40000000u}, {123, 0x7fffffffu},
                {0x80000000u, 0x80000000u}, {0xffffffffu, 0x9e3779b9u}, {0, 0}};
  }
  std::vector<IotaCase> cases;
  for (uint32_t n : kIotaLengths)
    for (auto [start, step] : operands)
      cases.push_back({n, start, step});
  return cases;
}

// Calls run(type, case) for every IOTA test: each type IOTA accepts, each of
// iotaCases. Returns the number of types.
template <class Run> int forEachIotaTest(Run run) {
  const isa::InstrInfo &info = isa::info(isa::Opcode::IOTA);
  const isa::OperandInfo &dtype = info.operands[info.operandIndex("dtype")];
  int types = 0;
  for (isa::DType type : kAllTypes)
    if (dtype.accepts(static_cast<uint64_t>(type))) {
      ++types;
      for (const IotaCase &c : iotaCases(type))
        run(type, c);
    }
  return types;
}

// The IOTA of one test: its destination filled with a pattern first, placed
// by place(words) (a twin's values(), returning its address).
template <class Place> isa::inst::Iota iotaOf(isa::DType type, const IotaCase &c, Place place) {
  isa::inst::Iota op;
  op.dtype = type;
  op.n = c.n;
  op.start = c.start;
  op.step = c.step;
  op.dst = place(std::vector<uint32_t>((uint64_t(c.n) * typeBytes(type) + 3) / 4, 0xa5a5a5a5u));
  return op;
}

inline std::string iotaName(const isa::inst::Iota &op) {
  return "iota " + typeName(op.dtype) + " of " + std::to_string(op.n) + " from " +
         std::to_string(op.start) + " by " + std::to_string(op.step);
}

// TRI: a shape, a diagonal, a fill, lower or upper, in place or not.
struct TriCase {
  uint32_t rows, cols;
  int32_t diagonal;
  uint32_t value;
  bool upper, inPlace;
};

// Shapes: one element, a row shorter than a beat, rows across a chunk's
// end (130 columns) and many short rows; diagonals on, beside and far
// outside the matrix (every element kept or every element filled); fills:
// -inf and NaN (binary32 patterns, rounded for bf16/f16, nonzero for b8)
// and the int32 ends (-1 sign-fills an i64's high word).
inline std::vector<TriCase> triCases(isa::DType type) {
  const bool isFloat =
      type == isa::DType::f32 || type == isa::DType::bf16 || type == isa::DType::f16;
  const std::vector<uint32_t> values =
      isFloat ? std::vector<uint32_t>{0xff800000u, 0x7fc00001u, 0x00000000u}
              : std::vector<uint32_t>{0xffffffffu, 0x7fffffffu, 0x00000000u};
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1}, {5, 3}, {3, 7}, {6, 130}, {40, 9}};
  const int32_t diagonals[] = {0, 1, -1, 4, -7, 2147483647, -2147483647 - 1};
  std::vector<TriCase> cases;
  size_t k = 0;
  for (auto [rows, cols] : shapes)
    for (int32_t diagonal : diagonals)
      for (bool upper : {false, true}) {
        // The fill and in-place cycle through the cases (every shape sees each).
        cases.push_back({rows, cols, diagonal, values[k % values.size()], upper, k % 3 == 2});
        ++k;
      }
  return cases;
}

// Calls run(type, case) for every TRI test. Returns the number of types.
template <class Run> int forEachTriTest(Run run) {
  const isa::InstrInfo &info = isa::info(isa::Opcode::TRI);
  const isa::OperandInfo &dtype = info.operands[info.operandIndex("dtype")];
  int types = 0;
  for (isa::DType type : kAllTypes)
    if (dtype.accepts(static_cast<uint64_t>(type))) {
      ++types;
      for (const TriCase &c : triCases(type))
        run(type, c);
    }
  return types;
}

// The TRI of one test: its source the type's edge elements repeated, its
// destination filled with a pattern first (or the source, in place).
template <class Place> isa::inst::Tri triOf(isa::DType type, const TriCase &c, Place place) {
  isa::inst::Tri op;
  op.dtype = type;
  op.rows = c.rows;
  op.cols = c.cols;
  op.diagonal = c.diagonal;
  op.value = c.value;
  op.upper = c.upper;
  const std::vector<uint64_t> edges = edgeElements(type);
  std::vector<uint64_t> elements(uint64_t(c.rows) * c.cols);
  for (size_t i = 0; i < elements.size(); ++i)
    elements[i] = edges[i % edges.size()];
  op.src = place(packedWords(type, elements, 0x5a));
  op.dst = c.inPlace ? op.src
                     : place(std::vector<uint32_t>(
                           (elements.size() * typeBytes(type) + 3) / 4, 0xa5a5a5a5u));
  return op;
}

inline std::string triName(const isa::inst::Tri &op, bool inPlace) {
  return std::string(op.upper ? "triu " : "tril ") + typeName(op.dtype) + " " +
         std::to_string(op.rows) + "x" + std::to_string(op.cols) + " diagonal " +
         std::to_string(op.diagonal) + " value " + std::to_string(op.value) +
         (inPlace ? " in place" : "");
}

// CUMSUM: a shape, the elements of its rows, in place or not.
struct CumsumCase {
  uint32_t rows, cols;
  std::vector<uint64_t> elements; // rows x cols storage patterns
  bool inPlace;
  std::string what;
};

// A random element of `type`: any integer; a b8 byte, zero half the time;
// a float of either sign with a magnitude from 2^-8 to 2^8, so that long
// rows both cancel and round.
inline uint64_t randomElement(isa::DType type, std::mt19937_64 &rng) {
  const uint64_t r = rng();
  if (type == isa::DType::b8)
    return r & 1 ? r >> 8 & 0xff : 0;
  if (type == isa::DType::i32 || type == isa::DType::i64)
    return type == isa::DType::i32 ? r & 0xffffffffu : r;
  // Sign, an exponent in [-8, 8], random significand bits.
  const uint64_t sign = r >> 63, exponent = (r >> 32) % 17;
  if (type == isa::DType::f16)
    return sign << 15 | (7 + exponent) << 10 | (r & 0x3ff);
  const uint64_t f = sign << 31 | (119 + exponent) << 23 | (r & 0x7fffff);
  return type == isa::DType::bf16 ? f >> 16 : f;
}

// Shapes: one element, rows of 1 and of a partial beat, rows across a
// chunk's end (130) and of three chunks and a bit (421: the running sum
// carried across chunks and their reads and writes in flight), many short
// rows. Elements: the type's edge values (each row from a different one:
// zeros, denormals, infinities, NaNs, the integer ends), and random ones;
// every third case in place.
inline std::vector<CumsumCase> cumsumCases(isa::DType type) {
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1},   {9, 1},   {5, 3}, {3, 7},
                                                  {6, 130}, {2, 421}, {40, 9}};
  const std::vector<uint64_t> edges = edgeElements(type);
  std::mt19937_64 rng(0x5ca9 + static_cast<uint64_t>(type));
  std::vector<CumsumCase> cases;
  for (auto [rows, cols] : shapes)
    for (bool random : {false, true}) {
      CumsumCase c{rows, cols, {}, cases.size() % 3 == 2, random ? "random" : "edges"};
      for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t j = 0; j < cols; ++j)
          c.elements.push_back(random ? randomElement(type, rng)
                                      : edges[(i * 5 + j) % edges.size()]);
      cases.push_back(std::move(c));
    }
  return cases;
}

// Calls run(type, case) for every CUMSUM test. Returns the number of types.
template <class Run> int forEachCumsumTest(Run run) {
  const isa::InstrInfo &info = isa::info(isa::Opcode::CUMSUM);
  const isa::OperandInfo &dtype = info.operands[info.operandIndex("dtype")];
  int types = 0;
  for (isa::DType type : kAllTypes)
    if (dtype.accepts(static_cast<uint64_t>(type))) {
      ++types;
      for (const CumsumCase &c : cumsumCases(type))
        run(type, c);
    }
  return types;
}

// The CUMSUM of one test: its destination filled with a pattern first (or
// the source, in place).
template <class Place>
isa::inst::Cumsum cumsumOf(isa::DType type, const CumsumCase &c, Place place) {
  isa::inst::Cumsum op;
  op.dtype = type;
  op.rows = c.rows;
  op.cols = c.cols;
  op.src = place(packedWords(type, c.elements, 0x5a));
  op.dst = c.inPlace ? op.src
                     : place(std::vector<uint32_t>((c.elements.size() * typeBytes(type) + 3) / 4,
                                                   0xa5a5a5a5u));
  return op;
}

inline std::string cumsumName(const isa::inst::Cumsum &op, const CumsumCase &c) {
  return "cumsum " + typeName(op.dtype) + " " + std::to_string(op.rows) + "x" +
         std::to_string(op.cols) + " " + c.what + (c.inPlace ? " in place" : "");
}

// ARGMAX, ARGMIN: a shape and the elements of its rows.
struct ArgCase {
  uint32_t rows, cols;
  std::vector<uint64_t> elements; // rows x cols storage patterns
  std::string what;
};

// Whether the storage pattern e of `type` is a NaN.
inline bool isNanElement(isa::DType type, uint64_t e) {
  switch (type) {
  case isa::DType::f32: return (e & 0x7fffffff) > 0x7f800000;
  case isa::DType::bf16: return (e & 0x7fff) > 0x7f80;
  case isa::DType::f16: return (e & 0x7fff) > 0x7c00;
  default: return false;
  }
}

// CUMSUM's shapes (rows ending inside a group, across a chunk's end, three
// chunks and a bit), each with rows of: the type's edge values (NaNs among
// them, at a different place in every row); the edge values but NaNs (the
// infinities, zeros of both signs, denormals and integer ends decide);
// random values; three neighbouring edge values, so that the extreme ties
// at several places (+0 and -0 in the first rows); random values with a NaN
// first, in the middle or last (another NaN after it); one value repeated.
inline std::vector<ArgCase> argCases(isa::DType type) {
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1},   {9, 1},   {5, 3}, {3, 7},
                                                  {6, 130}, {2, 421}, {40, 9}};
  const std::vector<uint64_t> edges = edgeElements(type);
  std::vector<uint64_t> ordered, nans;
  for (uint64_t e : edges)
    (isNanElement(type, e) ? nans : ordered).push_back(e);
  std::mt19937_64 rng(0xa7a9 + static_cast<uint64_t>(type));
  const char *kinds[] = {"edges", "ordered edges", "random", "ties", "nan", "all equal"};
  std::vector<ArgCase> cases;
  for (auto [rows, cols] : shapes)
    for (const char *kind : kinds) {
      const std::string k = kind;
      if (k == "nan" && nans.empty())
        continue;
      ArgCase c{rows, cols, {}, kind};
      for (uint64_t i = 0; i < rows; ++i) {
        const uint64_t nanAt = std::array<uint64_t, 3>{0, cols / 2, cols - 1}[i % 3];
        for (uint64_t j = 0; j < cols; ++j) {
          uint64_t e;
          if (k == "edges")
            e = edges[(i * 5 + j) % edges.size()];
          else if (k == "ordered edges")
            e = ordered[(i * 7 + j) % ordered.size()];
          else if (k == "ties")
            e = ordered[(i + rng() % 3) % ordered.size()];
          else if (k == "all equal")
            e = ordered[i % ordered.size()];
          else if (k == "nan" && j >= nanAt && (j - nanAt) % 5 == 0)
            e = nans[(i + (j - nanAt) / 5) % nans.size()];
          else
            e = randomElement(type, rng);
          c.elements.push_back(e);
        }
      }
      cases.push_back(std::move(c));
    }
  return cases;
}

// Calls run(type, case) for every test of Op (isa::inst::Argmax or Argmin).
// Returns the number of types.
template <class Op, class Run> int forEachArgTest(Run run) {
  return forEachAcceptedType(Op::kOpcode, [&](isa::DType type) {
    for (const ArgCase &c : argCases(type))
      run(type, c);
  });
}

// The Op of one test, its destination filled with a pattern first.
template <class Op, class Place> Op argOf(isa::DType type, const ArgCase &c, Place place) {
  Op op;
  op.dtype = type;
  op.rows = c.rows;
  op.cols = c.cols;
  op.src = place(packedWords(type, c.elements, 0x5a));
  op.dst = place(std::vector<uint32_t>(2 * c.rows, 0xa5a5a5a5u));
  return op;
}

// Calls run(case) for every COUNT, ANY and ALL test: ARGMAX's shapes and
// rows of b8 elements (bytes 0, 1, 2, 0x80, 0xff and random ones).
template <class Run> void forEachCountTest(Run run) {
  for (const ArgCase &c : argCases(isa::DType::b8))
    run(c);
}

// The COUNT, ANY or ALL of one test, its destination (an i64 or a b8 per
// row) filled with a pattern first.
template <class Op, class Place> Op maskReductionOf(const ArgCase &c, Place place) {
  constexpr uint64_t kResultBytes = std::is_same_v<Op, isa::inst::Count> ? 8 : 1;
  Op op;
  op.rows = c.rows;
  op.cols = c.cols;
  op.src = place(packedWords(isa::DType::b8, c.elements, 0x5a));
  op.dst = place(std::vector<uint32_t>((c.rows * kResultBytes + 3) / 4, 0xa5a5a5a5u));
  return op;
}

template <class Op> std::string maskReductionName(const Op &op, const ArgCase &c) {
  return std::string(isa::info(Op::kOpcode).mnemonic) + " " + std::to_string(op.rows) + "x" +
         std::to_string(op.cols) + " " + c.what;
}

template <class Op> std::string argName(const Op &op, const ArgCase &c) {
  return std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(op.dtype) + " " +
         std::to_string(op.rows) + "x" + std::to_string(op.cols) + " " + c.what;
}

} // namespace npu::test
