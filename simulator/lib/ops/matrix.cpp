// MATMUL and BMM on the matrix engine: the register-blocked kernel keeps the
// sequential-k accumulation order of docs/arith.md exactly.
//
// bf16 and f16 operands widen exactly to binary32 (docs/types.md §2) into
// copies that the f32 kernel then multiplies, so a reduced-precision product
// is the f32 product of the widened inputs, bit for bit; a bf16 or f16 C is
// widened the same way (with acc) and every result rounded once, RNE, as it
// is stored back.
#include "../../kernels/gemm.h"
#include "../arith_util.h"
#include "../context.h"
#include "../typed_streams.h"
#include "npu/arith/convert.h"

#include <bit>
#include <vector>

namespace npu::sim {

namespace {

struct MatrixLayout {
  kernels::GemmShape shape;
  uint64_t aElements, bElements, cElements; // extent of one matrix each
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
  l.aElements = (aRows - 1) * lda + aCols;
  l.bElements = (bRows - 1) * ldb + bCols;
  l.cElements = (m - 1) * ldc + n;
  return l;
}

unsigned log2Bytes(isa::DType type) {
  return static_cast<unsigned>(std::countr_zero(storageBytes(type)));
}

// The shape and operands the cycle model walks (it counts the panels' and
// the C blocks' bytes itself).
Work matrixWork(uint64_t m, uint64_t k, uint64_t n, uint64_t batch, Work::MatrixOperands operands,
                isa::DType dtype, isa::DType otype) {
  operands.abLog2 = log2Bytes(dtype);
  operands.cLog2 = log2Bytes(otype);
  Work w;
  w.matrix = operands;
  w.m = m;
  w.k = k;
  w.n = n;
  w.batch = batch;
  w.elements = satMul(satMul(satMul(m, n), batch), k);
  return w;
}

float widened(isa::DType type, uint16_t stored) {
  return std::bit_cast<float>(type == isa::DType::bf16 ? arith::widenBf16(stored)
                                                       : arith::widenF16(stored));
}

// `count` elements of A or B (of type f32, bf16 or f16, the types the
// record accepts) as binary32: f32 in place, the others widened into `copy`.
std::span<const float> floatOperand(ExecContext &ctx, uint64_t address, uint64_t count,
                                    isa::DType type, std::vector<float> &copy) {
  if (type == isa::DType::f32)
    return ctx.read<float>(address, count);
  const std::span<const uint16_t> stored = ctx.read<uint16_t>(address, count);
  copy.resize(count);
  for (uint64_t i = 0; i < count; ++i)
    copy[i] = widened(type, stored[i]);
  return copy;
}

// C as binary32 for the kernel: an f32 C in place; a bf16 or f16 C as a
// copy (its old values widened with acc), whose elements of the product
// store() rounds into memory.
class FloatResult {
public:
  FloatResult(ExecContext &ctx, uint64_t address, uint64_t count, isa::DType type, bool acc)
      : type_(type) {
    if (type == isa::DType::f32) {
      floats_ = acc ? ctx.update<float>(address, count) : ctx.write<float>(address, count);
      return;
    }
    stored_ = acc ? ctx.update<uint16_t>(address, count) : ctx.write<uint16_t>(address, count);
    copy_.resize(count);
    if (acc)
      for (uint64_t i = 0; i < count; ++i)
        copy_[i] = widened(type, stored_[i]);
    floats_ = copy_;
  }
  std::span<float> floats() const { return floats_; }
  // Rounds the m x n matrix at element `first` (rows ldc apart) to the stored type.
  void store(uint64_t first, uint64_t m, uint64_t n, uint64_t ldc) {
    if (type_ == isa::DType::f32)
      return;
    for (uint64_t i = 0; i < m; ++i)
      for (uint64_t j = first + i * ldc, end = j + n; j < end; ++j) {
        const uint32_t bits = std::bit_cast<uint32_t>(copy_[j]);
        stored_[j] = type_ == isa::DType::bf16 ? arith::narrowBf16(bits) : arith::narrowF16(bits);
      }
  }

private:
  isa::DType type_;
  std::span<float> floats_;
  std::span<uint16_t> stored_;
  std::vector<float> copy_;
};

// Matrix `index` of a batch `stride` elements apart: the rest of the span
// from its first element (empty past the end, which the kernel rejects).
template <class T> std::span<T> batchElement(std::span<T> batch, uint64_t index, uint64_t stride) {
  const uint64_t first = index * stride;
  return first <= batch.size() ? batch.subspan(first) : std::span<T>{};
}

} // namespace

Work work(const isa::inst::Matmul &op) {
  const MatrixLayout l =
      layoutOf(op.m, op.k, op.n, op.lda, op.ldb, op.ldc, op.transa, op.transb, op.acc);
  return matrixWork(
      op.m, op.k, op.n, 1,
      {op.transa, op.transb, op.acc, op.a, op.b, op.c, l.shape.lda, l.shape.ldb, l.shape.ldc},
      op.dtype, op.otype);
}

void execute(ExecContext &ctx, const isa::inst::Matmul &op) {
  const MatrixLayout l =
      layoutOf(op.m, op.k, op.n, op.lda, op.ldb, op.ldc, op.transa, op.transb, op.acc);
  std::vector<float> aCopy, bCopy;
  const std::span<const float> a = floatOperand(ctx, op.a, l.aElements, op.dtype, aCopy);
  const std::span<const float> b = floatOperand(ctx, op.b, l.bElements, op.dtype, bCopy);
  FloatResult c(ctx, op.c, l.cElements, op.otype, op.acc);
  kernels::gemm(l.shape, a, b, c.floats());
  c.store(0, op.m, op.n, l.shape.ldc);
}

Work work(const isa::inst::Bmm &op) {
  const MatrixLayout l = layoutOf(op.m, op.k, op.n, 0, 0, 0, op.transa, op.transb, op.acc);
  return matrixWork(op.m, op.k, op.n, op.batch,
                    {op.transa, op.transb, op.acc, op.a, op.b, op.c, l.shape.lda, l.shape.ldb,
                     l.shape.ldc, op.stride_a, op.stride_b, op.stride_c},
                    op.dtype, op.otype);
}

void execute(ExecContext &ctx, const isa::inst::Bmm &op) {
  const MatrixLayout l = layoutOf(op.m, op.k, op.n, 0, 0, 0, op.transa, op.transb, op.acc);
  const auto extent = [&](uint64_t stride, uint64_t one) { return (op.batch - 1) * stride + one; };
  std::vector<float> aCopy, bCopy;
  const std::span<const float> a =
      floatOperand(ctx, op.a, extent(op.stride_a, l.aElements), op.dtype, aCopy);
  const std::span<const float> b =
      floatOperand(ctx, op.b, extent(op.stride_b, l.bElements), op.dtype, bCopy);
  FloatResult c(ctx, op.c, extent(op.stride_c, l.cElements), op.otype, op.acc);
  for (uint64_t p = 0; p < op.batch; ++p) {
    kernels::gemm(l.shape, batchElement(a, p, op.stride_a), batchElement(b, p, op.stride_b),
                  batchElement(c.floats(), p, op.stride_c));
    c.store(p * op.stride_c, op.m, op.n, l.shape.ldc);
  }
}

} // namespace npu::sim
