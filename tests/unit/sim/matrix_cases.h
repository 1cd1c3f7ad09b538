// MATMUL's and BMM's directed cases on every pair of types they accept
// (dtype for A and B, otype for C), for the ISS (against the reference
// model) and the RTL (against the ISS) op tests: the edge values of the
// input type times exact factors (so that C is each edge value widened,
// negated, doubled: NaN, infinities, subnormals read as zeros, f16
// subnormals widened to normal binary32, overflow to inf and ties on the
// store), the same on an old C of otype's edge values with acc, and shapes
// over several blocks and panels with transposes, pitches, acc and BMM's
// broadcast and pitched batch strides, of ordinary values with a few edge
// values among them.
#pragma once

#include "type_pairs.h"

#include "npu/isa/isa.h"

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace npu::test {

// The storage of x in a matrix type (f32, bf16, f16), for values exact in
// all three (the host's conversions, independent of the models').
inline uint64_t matrixElement(isa::DType type, float x) {
  switch (type) {
  case isa::DType::bf16: return std::bit_cast<uint32_t>(x) >> 16;
  case isa::DType::f16: return std::bit_cast<uint16_t>(static_cast<_Float16>(x));
  default: return std::bit_cast<uint32_t>(x);
  }
}

// A stored matrix of rows x cols elements of `type`, rows `pitch` apart,
// each from value(r, c); the elements between rows are `gap`.
template <class Value>
std::vector<uint64_t> storedMatrix(uint32_t rows, uint32_t cols, uint32_t pitch, uint64_t gap,
                                   Value value) {
  std::vector<uint64_t> e(uint64_t(rows - 1) * pitch + cols, gap);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c)
      e[uint64_t(r) * pitch + c] = value(r, c);
  return e;
}

struct MatrixShape {
  uint32_t m, k, n;
  bool transA, transB, acc;
  uint32_t padA, padB, padC; // MATMUL: the pitches' excess over the stored row (0: dense)
  uint32_t batch;            // BMM when nonzero
  bool broadcastA, broadcastB;
};

// Shapes: one element; partial tiles; several 32 x 32 blocks and 16-deep
// panels (HW_MATRIX_TILE 8 x HW_MATRIX_BLOCK_TILES 4, KC 16) with
// transposes, pitches and acc; BMM with a broadcast operand.
inline const std::vector<MatrixShape> &matrixShapes() {
  static const std::vector<MatrixShape> shapes = {
      {1, 1, 1, false, false, false, 0, 0, 0, 0, false, false},
      {7, 5, 9, true, false, false, 0, 3, 0, 0, false, false},
      {33, 17, 40, false, true, true, 3, 1, 5, 0, false, false},
      {40, 33, 7, true, true, false, 0, 2, 1, 0, false, false},
      {9, 70, 33, false, false, true, 1, 0, 2, 0, false, false},
      {5, 7, 6, false, true, false, 0, 0, 0, 3, true, false},
      {6, 19, 35, true, false, true, 0, 0, 0, 2, false, true},
  };
  return shapes;
}

// Calls run(make, name) for every test, where make(place) builds its packet,
// its buffers placed by place(words) (a twin's values(), returning a
// 64-byte aligned address); returns their count.
template <class Run> int forEachMatrixTest(Run run) {
  const isa::InstrInfo &info = isa::info(isa::Opcode::MATMUL);
  const isa::OperandInfo &dtype = info.operands[info.operandIndex("dtype")];
  const isa::OperandInfo &otype = info.operands[info.operandIndex("otype")];
  const auto place = [](auto &placeWords, isa::DType type, const std::vector<uint64_t> &e) {
    return placeWords(packedWords(type, e, 0xa5));
  };
  int count = 0;
  for (isa::DType in : kAllTypes) {
    if (!dtype.accepts(static_cast<uint64_t>(in)))
      continue;
    for (isa::DType out : kAllTypes) {
      if (!otype.accepts(static_cast<uint64_t>(out)))
        continue;
      const std::string types = " dtype=" + typeName(in) + " otype=" + typeName(out);
      // Elements between rows and matrices, which no device may write.
      const auto gapOf = [](isa::DType type) {
        return typeBytes(type) == 2 ? uint64_t(0xa5a5) : uint64_t(0xa5a5a5a5);
      };
      const uint64_t gapIn = gapOf(in), gapOut = gapOf(out);
      // Edge values: A is a column of them, B the factors 1, -1, 2, 0.5 (K = 1),
      // so C[i][j] = edge_i * b_j, rounded once to otype; with acc, the old C
      // of otype's edge values is added first (fma(a, b, c)).
      const std::vector<uint64_t> edges = edgeElements(in), outEdges = edgeElements(out);
      for (bool acc : {false, true}) {
        const auto make = [&, acc](auto &placeWords) {
          isa::inst::Matmul op;
          op.dtype = in;
          op.otype = out;
          op.m = static_cast<uint32_t>(edges.size());
          op.k = 1;
          op.n = 4;
          op.acc = acc;
          op.a = place(placeWords, in, edges);
          std::vector<uint64_t> b;
          for (float f : {1.0f, -1.0f, 2.0f, 0.5f})
            b.push_back(matrixElement(in, f));
          op.b = place(placeWords, in, b);
          op.c = place(placeWords, out,
                       storedMatrix(op.m, op.n, op.n, gapOut, [&](uint32_t r, uint32_t c) {
                         return acc ? outEdges[(r + 3 * c) % outEdges.size()] : gapOut;
                       }));
          return isa::packetOf(op);
        };
        run(make, "matmul edges" + types + (acc ? " acc" : ""));
        ++count;
      }
      std::mt19937_64 rng(0x5eed + count);
      // Ordinary values in (-4, 4), exact in every type (8 significant bits),
      // an edge value one time in 25.
      const auto value = [&](isa::DType type) {
        const std::vector<uint64_t> e = edgeElements(type);
        if (rng() % 25 == 0)
          return e[rng() % e.size()];
        return matrixElement(type,
                             static_cast<float>(static_cast<int64_t>(rng() % 511) - 255) / 64.0f);
      };
      for (const MatrixShape &s : matrixShapes()) {
        const auto make = [&, s](auto &placeWords) {
          const uint32_t aRows = s.transA ? s.k : s.m, aCols = s.transA ? s.m : s.k;
          const uint32_t bRows = s.transB ? s.n : s.k, bCols = s.transB ? s.k : s.n;
          const auto random = [&](isa::DType type) {
            return [&, type](uint32_t, uint32_t) { return value(type); };
          };
          // The fields MATMUL and BMM share.
          const auto shaped = [&](auto op) {
            op.dtype = in;
            op.otype = out;
            op.m = s.m;
            op.k = s.k;
            op.n = s.n;
            op.transa = s.transA;
            op.transb = s.transB;
            op.acc = s.acc;
            return op;
          };
          if (s.batch == 0) {
            isa::inst::Matmul op = shaped(isa::inst::Matmul{});
            op.lda = s.padA ? aCols + s.padA : 0;
            op.ldb = s.padB ? bCols + s.padB : 0;
            op.ldc = s.padC ? s.n + s.padC : 0;
            op.a = place(placeWords, in,
                         storedMatrix(aRows, aCols, aCols + s.padA, gapIn, random(in)));
            op.b = place(placeWords, in,
                         storedMatrix(bRows, bCols, bCols + s.padB, gapIn, random(in)));
            op.c =
                place(placeWords, out, storedMatrix(s.m, s.n, s.n + s.padC, gapOut, random(out)));
            return isa::packetOf(op);
          }
          // BMM: matrices one element apart beyond their extent, or broadcast.
          isa::inst::Bmm op = shaped(isa::inst::Bmm{});
          op.batch = s.batch;
          op.stride_a = s.broadcastA ? 0 : aRows * aCols + 1;
          op.stride_b = s.broadcastB ? 0 : bRows * bCols + 1;
          op.stride_c = s.m * s.n + 1;
          const auto batchOf = [&](isa::DType type, uint32_t stride, uint32_t rows, uint32_t cols) {
            const uint32_t matrices = stride ? s.batch : 1;
            return storedMatrix(matrices, stride ? stride : rows * cols,
                                stride ? stride : rows * cols, gapOf(type), random(type));
          };
          op.a = place(placeWords, in, batchOf(in, op.stride_a, aRows, aCols));
          op.b = place(placeWords, in, batchOf(in, op.stride_b, bRows, bCols));
          op.c = place(placeWords, out, batchOf(out, op.stride_c, s.m, s.n));
          return isa::packetOf(op);
        };
        run(make, std::string(s.batch ? "bmm " : "matmul ") + std::to_string(s.m) + "x" +
                      std::to_string(s.k) + "x" + std::to_string(s.n) +
                      (s.batch ? " batch " + std::to_string(s.batch) : "") +
                      (s.transA ? " transa" : "") + (s.transB ? " transb" : "") +
                      (s.acc ? " acc" : "") + types);
        ++count;
      }
    }
  }
  return count;
}

} // namespace npu::test
