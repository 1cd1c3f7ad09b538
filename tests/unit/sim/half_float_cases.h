// The bf16 and f16 forms of the vector instructions that compute in binary32
// lanes (docs/types.md §2: elements widened exactly, results rounded once on
// store): every instruction of NPU_FOR_EACH_BINARY_OP, NPU_FOR_EACH_SCALAR_OP
// and NPU_FOR_EACH_UNARY_OP whose record accepts the type, on its edge values
// (type_pairs.h's: zeros, subnormals, infinities, NaNs, the largest finite
// values, which overflow on store) and ordinary ones over three chunks from
// inside a beat, against scalars that overflow, vanish or are NaN-making;
// the tensor forms on every pair of them under each broadcast; the row
// reductions over rows of 1 to 421 elements.
// The ISS op tests run them against the reference model, the RTL op tests
// against the ISS.
#pragma once

#include "integer_cases.h"
#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace npu::test {

inline constexpr isa::DType kHalfFloatTypes[] = {isa::DType::bf16, isa::DType::f16};

// The edge values of a 16-bit float type and ordinary values around them
// (whose results round on store: ties among them).
inline std::vector<uint64_t> halfFloatValues(isa::DType type) {
  std::vector<uint64_t> e = edgeElements(type);
  for (uint64_t v : type == isa::DType::bf16
                        ? std::vector<uint64_t>{0x3f81, 0x3fff, 0xbe4d, 0x4049, 0x3c23, 0xc2f7}
                        : std::vector<uint64_t>{0x3c01, 0x3fff, 0xb266, 0x4248, 0x2e66, 0xd7b0})
    e.push_back(v);
  return e;
}

// halfFloatValues repeated over three chunks of the vector engine.
inline std::vector<uint64_t> halfFloatSpread(isa::DType type) {
  const std::vector<uint64_t> e = halfFloatValues(type);
  std::vector<uint64_t> spread;
  for (size_t i = 0; i < 301; ++i)
    spread.push_back(e[i % e.size()]);
  return spread;
}

// Calls run(make, name) for every test, where make(place) builds its
// packet, its buffers placed by place(words) (a twin's values(), returning
// a 64-byte aligned address); returns their count.
template <class Run> int forEachHalfFloatTest(Run run) {
  int count = 0;
  const auto scalar = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const std::vector<uint64_t> a = halfFloatSpread(type);
      for (float s : {1.0f, -2.5f, 0.1f, 3.0e38f, std::bit_cast<float>(0x7f800000u),
                      std::bit_cast<float>(0x00000001u)}) {
        const auto make = [&](auto &place) {
          Op op;
          op.dtype = type;
          op.n = static_cast<uint32_t>(a.size());
          op.s = s;
          op.a = placeElements(place, type, a);
          op.dst = placeElements(place, type, std::vector<uint64_t>(a.size(), 0x7777));
          return isa::packetOf(op);
        };
        run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " s " +
                      std::to_string(s));
        ++count;
      }
    }
  };
  // The tensor forms: every pair of values once under each broadcast (the
  // values and 3.0: an odd count, so rows start in either half of a word,
  // and the col broadcast's b in either half too), over several chunks.
  const auto binary = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      std::vector<uint64_t> e = halfFloatValues(type);
      e.push_back(type == isa::DType::bf16 ? 0x4040 : 0x4200);
      const uint32_t k = static_cast<uint32_t>(e.size());
      std::vector<float> alphas = {1.0f};
      if constexpr (requires(Op op) { op.alpha; })
        alphas = {1.0f, -2.5f};
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
            const std::vector<uint64_t> a = placeEdgePairs(op, place, type, e, k - 2);
            op.dst = inPlace ? op.a
                             : placeElements(place, type, std::vector<uint64_t>(a.size(), 0x7777));
            return isa::packetOf(op);
          };
          run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) +
                        " bcast " + std::to_string(bcast) + " alpha " + std::to_string(alpha) +
                        (inPlace ? " in place" : ""));
          ++count;
        }
    }
  };
  // The reductions: rows of 1 to 421 elements, odd row counts (a 2-byte
  // result lands in either half of a word), over the values with their
  // specials and over the finite ones alone (sums that round, or overflow
  // f16 on store). dst is sized for a result per row or per column.
  const auto reduce = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const uint64_t special = type == isa::DType::bf16 ? 0x7f80 : 0x7c00;
      std::vector<uint64_t> finite;
      for (uint64_t v : halfFloatValues(type))
        if ((v & special) != special)
          finite.push_back(v);
      for (bool withSpecials : {true, false})
        for (const auto &[rows, cols] : std::vector<std::pair<uint32_t, uint32_t>>{
                 {1, 1}, {3, 1}, {5, 7}, {7, 129}, {3, 421}, {9, 34}}) {
          const std::vector<uint64_t> &e = withSpecials ? halfFloatValues(type) : finite;
          const auto make = [&](auto &place) {
            std::vector<uint64_t> src(uint64_t(rows) * cols);
            for (size_t i = 0; i < src.size(); ++i)
              src[i] = e[(i * 7 + i / cols) % e.size()];
            Op op;
            op.dtype = type;
            op.rows = rows;
            op.cols = cols;
            op.src = placeElements(place, type, src);
            op.dst =
                placeElements(place, type, std::vector<uint64_t>(std::max(rows, cols), 0x3c00));
            return isa::packetOf(op);
          };
          run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " " +
                        std::to_string(rows) + "x" + std::to_string(cols) +
                        (withSpecials ? " with specials" : " finite"));
          ++count;
        }
    }
  };
  const auto unary = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const std::vector<uint64_t> a = halfFloatSpread(type);
      const auto make = [&](auto &place) {
        Op op;
        op.dtype = type;
        op.n = static_cast<uint32_t>(a.size());
        // The f32 operands of POWS and CLAMP.
        if constexpr (requires { op.p; })
          op.p = 3.0f;
        if constexpr (requires { op.lo; })
          op.lo = -1.5f;
        if constexpr (requires { op.hi; })
          op.hi = 2.0f;
        op.src = placeElements(place, type, a);
        op.dst = placeElements(place, type, std::vector<uint64_t>(a.size(), 0x7777));
        return isa::packetOf(op);
      };
      run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type));
      ++count;
    }
  };
#define NPU_HALF_BINARY(NAME, Type, family) binary(std::type_identity<isa::inst::Type>{});
#define NPU_HALF_REDUCE(NAME, Type, family) reduce(std::type_identity<isa::inst::Type>{});
#define NPU_HALF_SCALAR(NAME, Type, family) scalar(std::type_identity<isa::inst::Type>{});
#define NPU_HALF_UNARY(NAME, Type, family) unary(std::type_identity<isa::inst::Type>{});
  NPU_FOR_EACH_BINARY_OP(NPU_HALF_BINARY)
  NPU_FOR_EACH_SCALAR_OP(NPU_HALF_SCALAR)
  NPU_FOR_EACH_UNARY_OP(NPU_HALF_UNARY)
  NPU_FOR_EACH_REDUCE_OP(NPU_HALF_REDUCE)
#undef NPU_HALF_BINARY
#undef NPU_HALF_REDUCE
#undef NPU_HALF_SCALAR
#undef NPU_HALF_UNARY
  return count;
}

} // namespace npu::test
