// MATMUL and BMM on the matrix engine: the register-blocked kernel keeps the
// sequential-k accumulation order of docs/arith.md exactly.
#include "../arith_util.h"
#include "../context.h"
#include "../../kernels/gemm.h"

namespace npu::sim {

namespace {

struct MatrixLayout {
  kernels::GemmShape shape;
  uint64_t aBytes, bBytes, cBytes; // extent of one matrix each
};

// Resolves dense pitches. The check stage verified the pitches and the
// extents (the memory operands in isa/matrix.td), so nothing overflows.
MatrixLayout layoutOf(uint64_t m, uint64_t k, uint64_t n, uint64_t lda, uint64_t ldb, uint64_t ldc,
                      bool transA, bool transB, bool acc) {
  const uint64_t aRows = transA ? k : m, aCols = transA ? m : k;
  const uint64_t bRows = transB ? n : k, bCols = transB ? k : n;
  lda = lda ? lda : aCols;
  ldb = ldb ? ldb : bCols;
  ldc = ldc ? ldc : n;
  MatrixLayout l;
  l.shape = {m, k, n, lda, ldb, ldc, transA, transB, acc};
  l.aBytes = ((aRows - 1) * lda + aCols) * 4;
  l.bBytes = ((bRows - 1) * ldb + bCols) * 4;
  l.cBytes = ((m - 1) * ldc + n) * 4;
  return l;
}

// The shape and operands the cycle model walks (it counts the panels' and
// the C blocks' bytes itself).
Work matrixWork(uint64_t m, uint64_t k, uint64_t n, uint64_t batch,
                const Work::MatrixOperands &operands) {
  Work w;
  w.matrix = operands;
  w.m = m;
  w.k = k;
  w.n = n;
  w.batch = batch;
  w.elements = satMul(satMul(satMul(m, n), batch), k);
  return w;
}

// Matrix `index` of a batch `stride` elements apart: the rest of the span
// from its first element (empty past the end, which the kernel rejects).
template <class T> std::span<T> batchElement(std::span<T> batch, uint64_t index, uint64_t stride) {
  const uint64_t first = index * stride;
  return first <= batch.size() ? batch.subspan(first) : std::span<T>{};
}

} // namespace

Work work(const isa::inst::Matmul &op) {
  const MatrixLayout l = layoutOf(op.m, op.k, op.n, op.lda, op.ldb, op.ldc, op.transa, op.transb, op.acc);
  return matrixWork(op.m, op.k, op.n, 1,
                    {op.transa, op.transb, op.acc, op.a, op.b, op.c, l.shape.lda, l.shape.ldb,
                     l.shape.ldc});
}

void execute(ExecContext &ctx, const isa::inst::Matmul &op) {
  const MatrixLayout l =
      layoutOf(op.m, op.k, op.n, op.lda, op.ldb, op.ldc, op.transa, op.transb, op.acc);
  const std::span<const float> a = ctx.read<float>(op.a, l.aBytes / 4);
  const std::span<const float> b = ctx.read<float>(op.b, l.bBytes / 4);
  const std::span<float> c =
      op.acc ? ctx.update<float>(op.c, l.cBytes / 4) : ctx.write<float>(op.c, l.cBytes / 4);
  kernels::gemm(l.shape, a, b, c);
}

Work work(const isa::inst::Bmm &op) {
  const MatrixLayout l = layoutOf(op.m, op.k, op.n, 0, 0, 0, op.transa, op.transb, op.acc);
  return matrixWork(op.m, op.k, op.n, op.batch,
                    {op.transa, op.transb, op.acc, op.a, op.b, op.c, l.shape.lda, l.shape.ldb,
                     l.shape.ldc, op.stride_a, op.stride_b, op.stride_c});
}

void execute(ExecContext &ctx, const isa::inst::Bmm &op) {
  const MatrixLayout l = layoutOf(op.m, op.k, op.n, 0, 0, 0, op.transa, op.transb, op.acc);
  const auto extent = [&](uint64_t stride, uint64_t one) {
    return (op.batch - 1) * stride * 4 + one;
  };
  const uint64_t aExtent = extent(op.stride_a, l.aBytes);
  const uint64_t bExtent = extent(op.stride_b, l.bBytes);
  const uint64_t cExtent = extent(op.stride_c, l.cBytes);
  const std::span<const float> a = ctx.read<float>(op.a, aExtent / 4);
  const std::span<const float> b = ctx.read<float>(op.b, bExtent / 4);
  const std::span<float> c =
      op.acc ? ctx.update<float>(op.c, cExtent / 4) : ctx.write<float>(op.c, cExtent / 4);
  for (uint64_t p = 0; p < op.batch; ++p)
    kernels::gemm(l.shape, batchElement(a, p, op.stride_a), batchElement(b, p, op.stride_b),
                  batchElement(c, p, op.stride_c));
}

} // namespace npu::sim
