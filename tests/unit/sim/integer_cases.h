// The integer forms of the binary elementwise instructions and their scalar
// forms (docs/types.md §3, §5): every instruction of NPU_FOR_EACH_BINARY_OP
// and NPU_FOR_EACH_SCALAR_OP whose record accepts i32 or i64, on every pair
// of the type's edge values (type_pairs.h's, plus words that carry or
// borrow across an i64's low word), under each broadcast and with alpha 1,
// a negative, a fraction and one past int32's range, and the unary ones
// (NEG). The ISS op tests run them against the reference model, the RTL op
// tests against the ISS. The compares (EQ ... GE and their scalar forms) on
// the same values, f32's too; SELECT, SELECTS and the bitwise instructions
// (isa/bits.td) on them and b8's.
#pragma once

#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace npu::test {

inline constexpr isa::DType kIntegerTypes[] = {isa::DType::i32, isa::DType::i64};

// The edge values of an integer type, and for i64 low words that carry or
// borrow into the high word.
inline std::vector<uint64_t> integerEdges(isa::DType type) {
  std::vector<uint64_t> edges = edgeElements(type);
  // Shift amounts at the ends of a word's and an int64's range.
  if (type == isa::DType::i32 || type == isa::DType::i64)
    for (uint64_t v : {31, 32, 33, 63, 64})
      edges.push_back(v);
  if (type == isa::DType::i64)
    for (uint64_t v : {uint64_t(0x00000000ffffffff), uint64_t(0x0000000100000000),
                       uint64_t(0xffffffff00000000), uint64_t(0x12345678deadbeef)})
      edges.push_back(v);
  return edges;
}

// The words of elements of `type` placed `skew` bytes into a fresh buffer
// (place(words) returns a 64-byte aligned address): chunks and beats then
// start inside an i64.
template <class Place>
uint64_t placeElements(Place &place, isa::DType type, const std::vector<uint64_t> &elements,
                       unsigned skew = 4) {
  return place(skewedWords(type, elements, skew, 0x5a)) + skew;
}

// Places the operands of a rows x cols = k x k binary packet over the edge
// values e (k of them) for op.bcast: a holds every pair (a, b) once with
// b's broadcast form (b[0] = e[scalar] for the scalar broadcast); sets
// op.a and op.b and returns a's elements.
template <class Op, class Place>
std::vector<uint64_t> placeEdgePairs(Op &op, Place &place, isa::DType type,
                                     const std::vector<uint64_t> &e, size_t scalar) {
  const uint32_t k = static_cast<uint32_t>(e.size());
  std::vector<uint64_t> a(uint64_t(k) * k), b;
  for (uint32_t i = 0; i < k; ++i)
    for (uint32_t j = 0; j < k; ++j)
      a[i * k + j] = e[op.bcast == isa::Broadcast::row ? i : j];
  switch (op.bcast) {
  case isa::Broadcast::none:
    for (uint32_t i = 0; i < k; ++i)
      for (uint32_t j = 0; j < k; ++j)
        b.push_back(e[i]);
    break;
  case isa::Broadcast::row:
  case isa::Broadcast::col: b = e; break;
  case isa::Broadcast::scalar: b = {e[scalar]}; break;
  }
  op.a = placeElements(place, type, a);
  op.b = placeElements(place, type, b);
  return a;
}

// A b8 mask of `count` bytes: false, and true as 1 and as other nonzero
// bytes, in an order that does not repeat with a row of the edge pairs.
inline std::vector<uint64_t> maskBytes(size_t count) {
  const uint8_t pattern[] = {0, 1, 0xff, 0, 0x80, 2, 0, 0, 1, 0x10, 0};
  std::vector<uint64_t> mask(count);
  for (size_t i = 0; i < count; ++i)
    mask[i] = pattern[i % sizeof(pattern)];
  return mask;
}

// The row shapes of the row instructions' tests and the shape sweeps: one
// element; rows of odd length (so that rows after the first start inside a
// word, a b8 row at each of its bytes, and chunks inside a beat:
// placeElements' skew); rows of one to four chunks.
struct RowShape {
  uint32_t rows, cols;
};
inline constexpr RowShape kRowShapes[] = {{1, 1}, {3, 7}, {4, 33}, {2, 130}, {3, 421}};

// Calls run(make, name) for each test of the rows x cols instruction Op
// (a, b, bcast; SELECT's mask and mbcast) on `type` over kRowShapes under
// each broadcast of b (and of the mask): a and b run through the values e,
// b's index advancing one further every e.size() elements, so that every
// pair meets in a long enough operand; dst, of dstType, starts as 0x77
// bytes. Returns the count.
template <class Op, class Run>
int shapeSweepTests(Run &run, isa::DType type, const std::vector<uint64_t> &e, isa::DType dstType) {
  constexpr bool hasMask = requires(Op op) { op.mbcast; };
  const uint64_t k = e.size();
  int count = 0;
  for (const RowShape &shape : kRowShapes)
    for (unsigned bcast = 0; bcast < 4; ++bcast)
      for (unsigned mbcast = 0; mbcast < (hasMask ? 2u : 1u); ++mbcast) {
        const auto make = [&](auto &place) {
          const uint64_t n = uint64_t(shape.rows) * shape.cols;
          const uint64_t bn = bcast == 0   ? n
                              : bcast == 1 ? shape.cols
                              : bcast == 2 ? shape.rows
                                           : 1;
          std::vector<uint64_t> a(n), b(bn);
          for (uint64_t i = 0; i < n; ++i)
            a[i] = e[i % k];
          for (uint64_t i = 0; i < bn; ++i)
            b[i] = e[(i + i / k + 1) % k];
          Op op;
          op.dtype = type;
          op.bcast = static_cast<isa::Broadcast>(bcast);
          op.rows = shape.rows;
          op.cols = shape.cols;
          op.a = placeElements(place, type, a);
          op.b = placeElements(place, type, b);
          if constexpr (hasMask) {
            op.mbcast = static_cast<isa::Broadcast>(mbcast);
            op.mask = placeElements(place, isa::DType::b8, maskBytes(mbcast == 0 ? n : shape.cols));
          }
          op.dst = placeElements(place, dstType, std::vector<uint64_t>(n, 0x7777777777777777));
          return isa::packetOf(op);
        };
        run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " " +
                      std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + " bcast " +
                      std::to_string(bcast) + (hasMask ? " mbcast " + std::to_string(mbcast) : ""));
        ++count;
      }
  return count;
}

// The integer types and b8, the types of the integer and bitwise tests.
inline constexpr isa::DType kBitTypes[] = {isa::DType::i32, isa::DType::i64, isa::DType::b8};

// A scalar form's 32-bit immediate s: a binary32 operand holds its bits.
template <class Op> void setImmediate(Op &op, uint32_t s) {
  if constexpr (std::is_same_v<decltype(op.s), float>)
    op.s = std::bit_cast<float>(s);
  else
    op.s = s;
}

// Calls run(make, name) for each test of the rows x cols instruction Op
// (a, b, bcast; alpha if it has one) on `type`: every pair of the values e
// meeting once (b's rows `shift` columns on from a's) under each broadcast
// and each of `alphas` (1 alone without an alpha), dst filled with `fill`,
// and in place for bcast none with alpha 1; returns their count.
template <class Op, class Run>
int binaryPairTests(Run &run, isa::DType type, const std::vector<uint64_t> &e,
                    std::vector<float> alphas, uint32_t shift, uint64_t fill) {
  if constexpr (!requires(Op op) { op.alpha; })
    alphas = {1.0f};
  const uint32_t k = static_cast<uint32_t>(e.size());
  int count = 0;
  for (unsigned bcast = 0; bcast < 4; ++bcast)
    for (float alpha : alphas) {
      const bool inPlace = bcast == 0 && alpha == 1.0f;
      const auto make = [&](auto &place) {
        Op op;
        op.dtype = type;
        op.bcast = static_cast<isa::Broadcast>(bcast);
        op.rows = k;
        op.cols = k;
        if constexpr (requires { op.alpha; })
          op.alpha = alpha;
        const std::vector<uint64_t> a = placeEdgePairs(op, place, type, e, shift);
        op.dst = inPlace ? op.a : placeElements(place, type, std::vector<uint64_t>(a.size(), fill));
        return isa::packetOf(op);
      };
      run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " bcast " +
                    std::to_string(bcast) + " alpha " + std::to_string(alpha) +
                    (inPlace ? " in place" : ""));
      ++count;
    }
  return count;
}

// binaryPairTests of Op on every type of kBitTypes it accepts, over the
// type's integer edge values.
template <class Op, class Run> int integerBinaryTests(Run &run) {
  int count = 0;
  for (isa::DType type : kBitTypes)
    if (accepts(Op::kOpcode, type))
      count +=
          binaryPairTests<Op>(run, type, integerEdges(type), {1.0f, -3.0f, 2.5f, 3.0e9f}, 2, 0);
  return count;
}

// The edge values of `type` repeated over three chunks of the engine.
inline std::vector<uint64_t> spreadEdges(isa::DType type, size_t count = 301) {
  const std::vector<uint64_t> e = integerEdges(type);
  std::vector<uint64_t> a;
  for (size_t i = 0; i < count; ++i)
    a.push_back(e[i % e.size()]);
  return a;
}

// Calls run(make, name) for each test of the scalar form Op (a, s, n) on
// every type of kBitTypes it accepts: the edge values over three chunks,
// from inside a beat, against a few immediates; returns their count.
template <class Op, class Run> int integerScalarTests(Run &run) {
  int count = 0;
  for (isa::DType type : kBitTypes) {
    if (!accepts(Op::kOpcode, type))
      continue;
    const std::vector<uint64_t> a = spreadEdges(type);
    for (uint32_t s : {0u, 1u, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0x12345u, 31u, 32u, 63u}) {
      const auto make = [&](auto &place) {
        Op op;
        op.dtype = type;
        op.n = static_cast<uint32_t>(a.size());
        setImmediate(op, s);
        op.a = placeElements(place, type, a);
        op.dst = placeElements(place, type, std::vector<uint64_t>(a.size(), 0));
        return isa::packetOf(op);
      };
      run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " s " +
                    std::to_string(int32_t(s)));
      ++count;
    }
  }
  return count;
}

// Calls run(make, name) for each test of the one-operand instruction Op
// (src, n) on every type of kBitTypes it accepts: the edge values over
// three chunks, from inside a beat; returns their count.
template <class Op, class Run> int integerUnaryTests(Run &run) {
  int count = 0;
  for (isa::DType type : kBitTypes) {
    if (!accepts(Op::kOpcode, type))
      continue;
    const std::vector<uint64_t> a = spreadEdges(type);
    const auto make = [&](auto &place) {
      Op op;
      op.dtype = type;
      op.n = static_cast<uint32_t>(a.size());
      op.src = placeElements(place, type, a);
      op.dst = placeElements(place, type, std::vector<uint64_t>(a.size(), 0));
      return isa::packetOf(op);
    };
    run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type));
    ++count;
  }
  return count;
}

// Calls run(make, name) for every integer test, where make(place) builds
// its packet, its buffers placed by place(words) (a twin's values(),
// returning a 64-byte aligned address); returns their count.
template <class Run> int forEachIntegerElementwiseTest(Run run) {
  int count = 0;
#define NPU_INTEGER_BINARY(NAME, Type, family) count += integerBinaryTests<isa::inst::Type>(run);
#define NPU_INTEGER_SCALAR(NAME, Type, family) count += integerScalarTests<isa::inst::Type>(run);
#define NPU_INTEGER_UNARY(NAME, Type, family) count += integerUnaryTests<isa::inst::Type>(run);
  NPU_FOR_EACH_BINARY_OP(NPU_INTEGER_BINARY)
  NPU_FOR_EACH_SCALAR_OP(NPU_INTEGER_SCALAR)
  NPU_FOR_EACH_UNARY_OP(NPU_INTEGER_UNARY)
#undef NPU_INTEGER_BINARY
#undef NPU_INTEGER_SCALAR
#undef NPU_INTEGER_UNARY
  return count;
}

// Calls run(make, name) for every compare test: each instruction of
// NPU_FOR_EACH_COMPARE_OP on every pair of edge values of each type it
// accepts (floats: zeros, subnormals, infinities, NaNs; b8: 0 and several
// true bytes) under each broadcast, on b8 also over kRowShapes (results at
// every place in a word), and each of NPU_FOR_EACH_COMPARE_SCALAR_OP on the
// edge values over three chunks from inside a beat against a few
// immediates; returns their count.
template <class Run> int forEachCompareTest(Run run) {
  int count = 0;
  const auto tensor = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kAllTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const std::vector<uint64_t> e = integerEdges(type);
      if (type == isa::DType::b8)
        count += shapeSweepTests<Op>(run, type, e, isa::DType::b8);
      const uint32_t k = static_cast<uint32_t>(e.size());
      for (unsigned bcast = 0; bcast < 4; ++bcast) {
        const auto make = [&](auto &place) {
          Op op;
          op.dtype = type;
          op.bcast = static_cast<isa::Broadcast>(bcast);
          op.rows = k;
          op.cols = k;
          const std::vector<uint64_t> a = placeEdgePairs(op, place, type, e, 3);
          op.dst = placeElements(place, isa::DType::b8, std::vector<uint64_t>(a.size(), 0x77));
          return isa::packetOf(op);
        };
        run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " bcast " +
                      std::to_string(bcast));
        ++count;
      }
    }
  };
  const auto scalar = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kAllTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const std::vector<uint64_t> a = spreadEdges(type);
      // Zeros of both signs, a subnormal, 1.0, a NaN; as int32s 0, -2^31,
      // 1, 0x3f800000, -1.
      for (uint32_t s : {0u, 0x80000000u, 1u, 0x3f800000u, 0xffffffffu}) {
        const auto make = [&](auto &place) {
          Op op;
          op.dtype = type;
          op.n = static_cast<uint32_t>(a.size());
          op.s = std::bit_cast<float>(s);
          op.a = placeElements(place, type, a);
          op.dst = placeElements(place, isa::DType::b8, std::vector<uint64_t>(a.size(), 0x77));
          return isa::packetOf(op);
        };
        run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " s bits " +
                      std::to_string(s));
        ++count;
      }
    }
  };
#define NPU_COMPARE_TENSOR(NAME, Type, family) tensor(std::type_identity<isa::inst::Type>{});
#define NPU_COMPARE_SCALAR(NAME, Type, family) scalar(std::type_identity<isa::inst::Type>{});
  NPU_FOR_EACH_COMPARE_OP(NPU_COMPARE_TENSOR)
  NPU_FOR_EACH_COMPARE_SCALAR_OP(NPU_COMPARE_SCALAR)
#undef NPU_COMPARE_TENSOR
#undef NPU_COMPARE_SCALAR
  return count;
}

// Calls run(make, name) for every bitwise test: each instruction of
// NPU_FOR_EACH_BITWISE_OP on every pair of edge values of each type it
// accepts under each broadcast (shift amounts in and out of range among
// them), on b8 also over kRowShapes (results at every place in a word),
// each of NPU_FOR_EACH_BITWISE_SCALAR_OP against a few immediates, and NOT
// on the edge values over three chunks; returns their count.
template <class Run> int forEachBitwiseTest(Run run) {
  int count = 0;
  const auto binary = [&]<class Op>(std::type_identity<Op>) {
    count += integerBinaryTests<Op>(run);
    if (accepts(Op::kOpcode, isa::DType::b8))
      count +=
          shapeSweepTests<Op>(run, isa::DType::b8, integerEdges(isa::DType::b8), isa::DType::b8);
  };
#define NPU_BITWISE_BINARY(NAME, Type, family) binary(std::type_identity<isa::inst::Type>{});
#define NPU_BITWISE_SCALAR(NAME, Type, family) count += integerScalarTests<isa::inst::Type>(run);
#define NPU_BITWISE_NOT(NAME, Type, family) count += integerUnaryTests<isa::inst::Type>(run);
  NPU_FOR_EACH_BITWISE_OP(NPU_BITWISE_BINARY)
  NPU_FOR_EACH_BITWISE_SCALAR_OP(NPU_BITWISE_SCALAR)
  NPU_FOR_EACH_BITWISE_NOT_OP(NPU_BITWISE_NOT)
#undef NPU_BITWISE_BINARY
#undef NPU_BITWISE_SCALAR
#undef NPU_BITWISE_NOT
  return count;
}

// Calls run(make, name) for every select test: SELECT on every pair of
// edge values of each type it accepts under each broadcast of b and of the
// mask, and over kRowShapes (b8 results at every place in a word), and
// SELECTS on the edge values of each type over three chunks
// (rows of 101 from inside a beat) under each mask broadcast against a few
// immediates; returns their count.
template <class Run> int forEachSelectTest(Run run) {
  int count = 0;
  for (isa::DType type : kAllTypes) {
    if (!accepts(isa::inst::Select::kOpcode, type))
      continue;
    const std::vector<uint64_t> e = integerEdges(type);
    const uint32_t k = static_cast<uint32_t>(e.size());
    for (unsigned bcast = 0; bcast < 4; ++bcast)
      for (unsigned mbcast = 0; mbcast < 2; ++mbcast) {
        const auto make = [&](auto &place) {
          isa::inst::Select op;
          op.dtype = type;
          op.bcast = static_cast<isa::Broadcast>(bcast);
          op.mbcast = static_cast<isa::Broadcast>(mbcast);
          op.rows = k;
          op.cols = k;
          const std::vector<uint64_t> a = placeEdgePairs(op, place, type, e, 4);
          op.mask = placeElements(place, isa::DType::b8, maskBytes(mbcast == 0 ? k * k : k));
          op.dst = placeElements(place, type, std::vector<uint64_t>(a.size(), 0x77));
          return isa::packetOf(op);
        };
        run(make, "select " + std::string(typeName(type)) + " bcast " + std::to_string(bcast) +
                      " mbcast " + std::to_string(mbcast));
        ++count;
      }
    count += shapeSweepTests<isa::inst::Select>(run, type, e, type);
  }
  for (isa::DType type : kAllTypes) {
    if (!accepts(isa::inst::Selects::kOpcode, type))
      continue;
    const uint32_t cols = 101, rows = 3;
    const std::vector<uint64_t> a = spreadEdges(type, rows * cols);
    for (unsigned mbcast = 0; mbcast < 2; ++mbcast)
      // Zeros of both signs, a subnormal, 1.0, -1 (a NaN pattern), a value
      // that rounds to f16's largest, a signalling NaN.
      for (uint32_t s : {0u, 0x80000000u, 1u, 0x3f800000u, 0xffffffffu, 0x477fefffu, 0x7f800001u}) {
        const auto make = [&](auto &place) {
          isa::inst::Selects op;
          op.dtype = type;
          op.mbcast = static_cast<isa::Broadcast>(mbcast);
          op.rows = rows;
          op.cols = cols;
          op.s = s;
          op.a = placeElements(place, type, a);
          op.mask =
              placeElements(place, isa::DType::b8, maskBytes(mbcast == 0 ? rows * cols : cols));
          op.dst = placeElements(place, type, std::vector<uint64_t>(rows * cols, 0x77));
          return isa::packetOf(op);
        };
        run(make, "selects " + std::string(typeName(type)) + " mbcast " + std::to_string(mbcast) +
                      " s bits " + std::to_string(s));
        ++count;
      }
  }
  return count;
}

} // namespace npu::test
