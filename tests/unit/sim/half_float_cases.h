// The bf16 and f16 forms of the vector instructions that compute in binary32
// lanes (docs/types.md §2: elements widened exactly, results rounded once on
// store): every instruction of NPU_FOR_EACH_BINARY_OP, NPU_FOR_EACH_SCALAR_OP,
// NPU_FOR_EACH_UNARY_OP and NPU_FOR_EACH_POINTWISE_BWD whose record accepts
// the type, on its edge values
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
      count += binaryPairTests<Op>(run, type, e, {1.0f, -2.5f}, static_cast<uint32_t>(e.size()) - 2,
                                   0x7777);
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
            // COL_SUM's dst is a binary32 accumulator of a column each (it
            // adds to 1.0); a row reduction's one element of dtype a row.
            if constexpr (std::is_same_v<Op, isa::inst::ColSum>)
              op.dst =
                  placeElements(place, isa::DType::f32, std::vector<uint64_t>(cols, 0x3f800000));
            else
              op.dst = placeElements(place, type, std::vector<uint64_t>(rows, 0x3c00));
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
  // x the spread, dy the spread from another element on: every pair of
  // edge values in turn.
  const auto backward = [&]<class Op>(std::type_identity<Op>) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      const std::vector<uint64_t> x = halfFloatSpread(type);
      std::vector<uint64_t> dy(x.begin() + 7, x.end());
      dy.insert(dy.end(), x.begin(), x.begin() + 7);
      const auto make = [&](auto &place) {
        Op op;
        op.dtype = type;
        op.n = static_cast<uint32_t>(x.size());
        // CLAMP_BWD's bounds.
        if constexpr (requires { op.lo; })
          op.lo = -1.5f;
        if constexpr (requires { op.hi; })
          op.hi = 2.0f;
        op.x = placeElements(place, type, x);
        op.dy = placeElements(place, type, dy);
        op.dx = placeElements(place, type, std::vector<uint64_t>(x.size(), 0x7777));
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
#define NPU_HALF_BACKWARD(NAME, Type, family) backward(std::type_identity<isa::inst::Type>{});
  NPU_FOR_EACH_BINARY_OP(NPU_HALF_BINARY)
  NPU_FOR_EACH_SCALAR_OP(NPU_HALF_SCALAR)
  NPU_FOR_EACH_UNARY_OP(NPU_HALF_UNARY)
  NPU_FOR_EACH_REDUCE_OP(NPU_HALF_REDUCE)
  NPU_FOR_EACH_POINTWISE_BWD(NPU_HALF_BACKWARD)
#undef NPU_HALF_BINARY
#undef NPU_HALF_REDUCE
#undef NPU_HALF_SCALAR
#undef NPU_HALF_UNARY
#undef NPU_HALF_BACKWARD
  return count;
}

// rows x cols elements of a 16-bit float type: every third row (from the
// first) the edge values from an offset `salt` on, so that each row tests
// another mix, the other rows ordinary values of either sign between 1/8
// and 8, whose sums, maxima and exponentials stay finite.
inline std::vector<uint64_t> halfFloatRows(isa::DType type, RowShape shape, unsigned salt) {
  const std::vector<uint64_t> edges = edgeElements(type);
  std::vector<uint64_t> e;
  for (uint32_t i = 0; i < shape.rows; ++i)
    for (uint32_t j = 0; j < shape.cols; ++j) {
      const uint64_t k = uint64_t(i) * shape.cols + j + salt;
      if (i % 3 == 0 && shape.cols > 1) {
        e.push_back(edges[k % edges.size()]);
        continue;
      }
      const uint64_t sign = (k * 7 % 5 < 2) ? 0x8000 : 0;
      e.push_back(sign |
                  (type == isa::DType::bf16 ? 0x3e00 + k * 13 % 0x300 : 0x3000 + k * 37 % 0xc00));
    }
  return e;
}

// Per-row binary32 statistics (RMSNORM_BWD's rstd, LAYERNORM_BWD's (mean,
// rstd) pairs): ordinary values, with a zero, an infinity and a NaN among
// them.
inline std::vector<uint32_t> rowStatistics(uint64_t count) {
  static const uint32_t values[] = {0x3f800000, 0x3fa00000, 0x3e800000, 0xbf400000,
                                    0x40400000, 0x00000000, 0x7f800000, 0x7fc00000};
  std::vector<uint32_t> w(count);
  for (uint64_t i = 0; i < count; ++i)
    w[i] = values[i % std::size(values)];
  return w;
}

// How many tests forEachHalfFloatRowTest makes: per type and shape, the
// variants of SOFTMAX (4), RMSNORM (4), LAYERNORM (4), SOFTMAX_BWD (2),
// RMSNORM_BWD (4), LAYERNORM_BWD (4), and one of each reduction (4).
inline constexpr int kHalfFloatRowTests =
    2 * static_cast<int>(std::size(kRowShapes)) * (4 + 4 + 4 + 2 + 4 + 4 + 4);

// Calls run(make, name) for every test of the row instructions on bf16 and
// f16 (SOFTMAX with and without its causal mask and scale, log-softmax,
// RMSNORM and LAYERNORM with weight, bias and statistics on and off,
// SOFTMAX_BWD with and without log, RMSNORM_BWD and LAYERNORM_BWD with and
// without weight and dweight, ROW_SUM ROW_MAX ROW_MEAN COL_SUM) whose
// record accepts the type, over
// kRowShapes; make(place) builds the packet as forEachHalfFloatTest's.
// Returns their count.
template <class Run> int forEachHalfFloatRowTest(Run run) {
  int count = 0;
  // set(op, variant, rowsOf(salt), colsOf(salt), words(w)) fills in the
  // operands of variant `variant` (of `variants`).
  const auto each = [&]<class Op>(std::type_identity<Op>, int variants, auto set) {
    for (isa::DType type : kHalfFloatTypes) {
      if (!accepts(Op::kOpcode, type))
        continue;
      for (const RowShape &shape : kRowShapes)
        for (int v = 0; v < variants; ++v) {
          const auto make = [&](auto &place) {
            Op op;
            op.dtype = type;
            op.rows = shape.rows;
            op.cols = shape.cols;
            const auto rowsOf = [&](unsigned salt) {
              return placeElements(place, type, halfFloatRows(type, shape, salt));
            };
            const auto colsOf = [&](unsigned salt) {
              return placeElements(place, type, halfFloatRows(type, {1, shape.cols}, salt + 1));
            };
            const auto words = [&](const std::vector<uint32_t> &w) { return place(w); };
            set(op, v, rowsOf, colsOf, words);
            return isa::packetOf(op);
          };
          run(make, std::string(isa::info(Op::kOpcode).mnemonic) + " " + typeName(type) + " " +
                        std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                        " variant " + std::to_string(v));
          ++count;
        }
    }
  };
  const auto garbage = [](uint64_t words) { return std::vector<uint32_t>(words, 0x77777777u); };
  each(std::type_identity<isa::inst::Softmax>{}, 4,
       [&](auto &op, int v, auto rowsOf, auto, auto words) {
         op.causal = v >= 2;
         op.log = v % 2 == 1;
         op.scale = v == 0 ? 1.0f : v == 1 ? 0.3f : v == 2 ? 1.0f : 2.5f;
         op.offset = v == 3 ? -1 : 0;
         op.src = rowsOf(0);
         op.dst = words(garbage(uint64_t(op.rows) * op.cols));
       });
  each(std::type_identity<isa::inst::Rmsnorm>{}, 4,
       [&](auto &op, int v, auto rowsOf, auto colsOf, auto words) {
         op.use_weight = v % 2 == 1;
         op.write_rstd = v >= 2;
         op.eps = 1e-6f;
         op.src = rowsOf(0);
         op.weight = colsOf(3);
         op.rstd = words(garbage(op.rows));
         op.dst = words(garbage(uint64_t(op.rows) * op.cols));
       });
  each(std::type_identity<isa::inst::Layernorm>{}, 4,
       [&](auto &op, int v, auto rowsOf, auto colsOf, auto words) {
         op.use_weight = v % 2 == 1;
         op.use_bias = v >= 2;
         op.write_stats = v == 1 || v == 3;
         op.eps = 1e-5f;
         op.src = rowsOf(0);
         op.weight = colsOf(3);
         op.bias = colsOf(5);
         op.stats = words(garbage(2 * uint64_t(op.rows)));
         op.dst = words(garbage(uint64_t(op.rows) * op.cols));
       });
  each(std::type_identity<isa::inst::SoftmaxBwd>{}, 2,
       [&](auto &op, int v, auto rowsOf, auto, auto words) {
         op.log = v == 1;
         op.y = rowsOf(0);
         op.dy = rowsOf(11);
         op.dx = words(garbage(uint64_t(op.rows) * op.cols));
       });
  // dweight (binary32) starts as garbage: the accumulator reads +0 on the
  // first row.
  const auto normBackward = [&](auto &op, int v, auto rowsOf, auto colsOf, auto words) {
    op.use_weight = v % 2 == 1;
    op.write_dweight = v >= 2;
    op.x = rowsOf(0);
    op.dy = rowsOf(11);
    op.weight = colsOf(3);
    op.dweight = words(garbage(op.cols));
    op.dx = words(garbage(uint64_t(op.rows) * op.cols));
  };
  each(std::type_identity<isa::inst::RmsnormBwd>{}, 4,
       [&](auto &op, int v, auto rowsOf, auto colsOf, auto words) {
         op.rstd = words(rowStatistics(op.rows));
         normBackward(op, v, rowsOf, colsOf, words);
       });
  each(std::type_identity<isa::inst::LayernormBwd>{}, 4,
       [&](auto &op, int v, auto rowsOf, auto colsOf, auto words) {
         op.stats = words(rowStatistics(2 * uint64_t(op.rows)));
         normBackward(op, v, rowsOf, colsOf, words);
       });
  // dst (binary32) starts as garbage: COL_SUM's accumulator reads +0 on
  // the first row.
  const auto reduction = [&]<class Op>(std::type_identity<Op> op) {
    each(op, 1, [&](auto &o, int, auto rowsOf, auto, auto words) {
      o.src = rowsOf(0);
      o.dst = words(garbage(std::max(o.rows, o.cols)));
    });
  };
#define NPU_HALF_REDUCTION(NAME, Type, family) reduction(std::type_identity<isa::inst::Type>{});
  NPU_FOR_EACH_REDUCE_OP(NPU_HALF_REDUCTION)
#undef NPU_HALF_REDUCTION
  return count;
}

} // namespace npu::test
