// Matrix products: mm, addmm, bmm, mv and dot (and so matmul and linear,
// which PyTorch decomposes into them). Operands are read in place when MATMUL's
// pitch and transpose flags describe their layout (a row-major matrix with
// any row pitch, or the transpose of one); other layouts are gathered on the
// device first. Nothing goes through the host.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/dot_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mv_ops.h>
#include <torch/library.h>

namespace npu::bridge {

namespace {

// How MATMUL reads a rows x cols matrix.
struct MatrixOperand {
  at::Tensor storage; // keeps a gathered copy alive
  uint64_t address;
  uint32_t pitch;
  bool transposed;
};

MatrixOperand matrixOperand(const at::Tensor &m) {
  const int64_t rows = m.size(0), cols = m.size(1);
  const int64_t s0 = m.stride(0), s1 = m.stride(1);
  // Row-major with a row pitch of at least one row.
  if (wordAligned(m) && (cols == 1 || s1 == 1) && (rows == 1 || s0 >= cols))
    return {m, addressOf(m), u32(rows == 1 ? cols : s0, "row pitch"), false};
  // The transpose of a row-major cols x rows matrix.
  if (wordAligned(m) && (rows == 1 || s0 == 1) && (cols == 1 || s1 >= rows))
    return {m, addressOf(m), u32(cols == 1 ? rows : s1, "row pitch"), true};
  at::Tensor dense = emptyNpuLike(m);
  emitGather(addressOf(dense), m);
  return {dense, addressOf(dense), u32(cols, "row pitch"), false};
}

// out (M x N, row-major with some row pitch, word-aligned, disjoint from
// the operands) = a @ b, accumulated in binary32 and rounded once into
// out's type.
// With accumulate, out += a @ b, out's old value added in binary32 too.
void emitMatmul(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b,
                bool accumulate = false) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    // An empty sum: zeros.
    for (int64_t row = 0; row < m && !accumulate; ++row)
      fillContiguous(addressOf(out) + out.element_size() * row * out.stride(0), n,
                     out.element_size(), 0);
    return;
  }
  const MatrixOperand lhs = matrixOperand(a), rhs = matrixOperand(b);
  isa::inst::Matmul mm;
  mm.c = addressOf(out);
  mm.a = lhs.address;
  mm.b = rhs.address;
  mm.m = u32(m, "rows");
  mm.k = u32(k, "reduction length");
  mm.n = u32(n, "columns");
  mm.lda = lhs.pitch;
  mm.ldb = rhs.pitch;
  mm.ldc = u32(m == 1 ? n : out.stride(0), "row pitch");
  mm.transa = lhs.transposed;
  mm.transb = rhs.transposed;
  mm.acc = accumulate;
  mm.dtype = *isaType(a.scalar_type());
  mm.otype = *isaType(out.scalar_type());
  emit(mm);
}

// Whether MATMUL can write straight into out.
bool writableInPlace(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b) {
  const bool rowMajor = (out.size(1) == 1 || out.stride(1) == 1) &&
                        (out.size(0) == 1 || out.stride(0) >= out.size(1));
  return rowMajor && wordAligned(out) && !mayOverlap(out, a) && !mayOverlap(out, b);
}

// Operands of one float type MATMUL and BMM take (f32, bf16, f16), the
// result of the same type: PyTorch's mm of bf16 sums in binary32 and
// rounds once, as MATMUL's otype does. Mixed types fall back (widened).
bool lowerable(const at::Tensor &a, const at::Tensor &b) {
  const c10::ScalarType type = a.scalar_type();
  return isNpu(a) && isNpu(b) && b.scalar_type() == type && accepts<isa::inst::Matmul>(type) &&
         accepts<isa::inst::Matmul>(type, "otype") && accepts<isa::inst::Bmm>(type) &&
         accepts<isa::inst::Bmm>(type, "otype");
}

bool writes(const at::Tensor &out, const at::Tensor &a) {
  return isNpu(out) && out.scalar_type() == a.scalar_type();
}

std::string productDescription(const at::Tensor &a, const at::Tensor &b) {
  return shapeString(a) + (a.is_contiguous() ? "" : "*") + " @ " + shapeString(b) +
         (b.is_contiguous() ? "" : "*");
}

// out = a @ b for any out layout.
void matmulStore(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b) {
  if (writableInPlace(out, a, b)) {
    emitMatmul(out, a, b);
    return;
  }
  at::Tensor dense = emptyNpu({a.size(0), b.size(1)}, out.scalar_type());
  emitMatmul(dense, a, b);
  storeInto(out, addressOf(dense));
}

void checkMm(const at::Tensor &a, const at::Tensor &b) {
  TORCH_CHECK(a.dim() == 2, "self must be a matrix");
  TORCH_CHECK(b.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
}

at::Tensor mm(const at::Tensor &a, const at::Tensor &b) {
  static OpCounter counter("mm");
  if (!lowerable(a, b))
    return fallbackTo<NPU_ATEN_OP(mm)>(a, b);
  checkMm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, b));
  at::Tensor out = emptyNpu({a.size(0), b.size(1)}, a.scalar_type());
  emitMatmul(out, a, b);
  return out;
}

at::Tensor &mmOut(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
  static OpCounter counter("mm.out");
  if (!lowerable(a, b) || !writes(out, a))
    return fallbackTo<NPU_ATEN_OP2(mm, out)>(a, b, out);
  checkMm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, b));
  at::native::resize_output(out, {a.size(0), b.size(1)});
  checkInternalOverlap(out); // as the CPU's mm: only out's own overlap
  matmulStore(out, a, b);
  return out;
}

// out = beta * bias + alpha * (a @ b): MATMUL, then scale and add with
// bias broadcast by the elementwise lowering (row vector, column, scalar).
// bf16/f16 (alpha = beta = 1): the bias copied into the result, then
// MATMUL accumulating into it, rounded once as the CPU's addmm rounds.
void addmmStore(const at::Tensor &out, const at::Tensor &bias, const at::Tensor &a,
                const at::Tensor &b, double beta, double alpha) {
  at::Tensor product = writableInPlace(out, a, b) && out.is_contiguous() && !mayOverlap(out, bias)
                           ? out
                           : emptyNpu({a.size(0), b.size(1)}, out.scalar_type());
  if (c10::isReducedFloatingType(out.scalar_type())) {
    copyInto(product, bias.expand(product.sizes()));
    emitMatmul(product, a, b, /*accumulate=*/true);
    if (!product.is_same(out))
      storeInto(out, addressOf(product));
    return;
  }
  emitMatmul(product, a, b);
  if (alpha != 1.0)
    emitScalar<isa::inst::Muls>(addressOf(product), addressOf(product), static_cast<float>(alpha),
                                product.numel());
  if (beta != 0.0)
    emitBinary<isa::inst::Add>(product, product, bias, static_cast<float>(beta));
  if (!product.is_same(out))
    storeInto(out, addressOf(product));
}

bool addmmLowerable(const at::Tensor &bias, const at::Tensor &a, const at::Tensor &b,
                    const at::Scalar &beta, const at::Scalar &alpha) {
  const c10::ScalarType type = a.scalar_type();
  return lowerable(a, b) && isNpu(bias) && bias.scalar_type() == type &&
         (type == at::kFloat || (beta.equal(1) && alpha.equal(1)));
}

at::Tensor addmm(const at::Tensor &bias, const at::Tensor &a, const at::Tensor &b,
                 const at::Scalar &beta, const at::Scalar &alpha) {
  static OpCounter counter("addmm");
  if (!addmmLowerable(bias, a, b, beta, alpha))
    return fallbackTo<NPU_ATEN_OP(addmm)>(bias, a, b, beta, alpha);
  checkMm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(bias) + " + " + productDescription(a, b));
  at::Tensor out = emptyNpu({a.size(0), b.size(1)}, a.scalar_type());
  addmmStore(out, bias, a, b, beta.toDouble(), alpha.toDouble());
  return out;
}

at::Tensor &addmmOut(const at::Tensor &bias, const at::Tensor &a, const at::Tensor &b,
                     const at::Scalar &beta, const at::Scalar &alpha, at::Tensor &out) {
  static OpCounter counter("addmm.out");
  if (!addmmLowerable(bias, a, b, beta, alpha) || !writes(out, a))
    return fallbackTo<NPU_ATEN_OP2(addmm, out)>(bias, a, b, beta, alpha, out);
  checkMm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(bias) + " + " + productDescription(a, b));
  at::native::resize_output(out, {a.size(0), b.size(1)});
  // As the CPU's addmm, which copies the bias into out first: out's own
  // overlap, and the bias's with it.
  checkPointwiseWrite(out, {bias});
  if (out.is_same(bias)) {
    // In place (addmm_): the product must not overwrite the bias first.
    const at::Tensor biasCopy = emptyNpuLike(bias);
    emitGather(addressOf(biasCopy), bias);
    addmmStore(out, biasCopy, a, b, beta.toDouble(), alpha.toDouble());
  } else {
    addmmStore(out, bias, a, b, beta.toDouble(), alpha.toDouble());
  }
  return out;
}

// Matrix-vector and vector-vector products are MATMULs with n = 1 (and
// m = 1): the vector is a one-column matrix whose row pitch is its stride.
at::Tensor mv(const at::Tensor &a, const at::Tensor &v) {
  static OpCounter counter("mv");
  if (!lowerable(a, v) || a.dim() != 2 || v.dim() != 1)
    return fallbackTo<NPU_ATEN_OP(mv)>(a, v);
  TORCH_CHECK(a.size(1) == v.size(0), "size mismatch, got input (", a.size(0), "), mat (",
              a.size(0), "x", a.size(1), "), vec (", v.size(0), ")");
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, v));
  at::Tensor out = emptyNpu({a.size(0)}, a.scalar_type());
  emitMatmul(out.unsqueeze(1), a, v.unsqueeze(1));
  return out;
}

at::Tensor dot(const at::Tensor &a, const at::Tensor &b) {
  static OpCounter counter("dot");
  if (!lowerable(a, b) || a.dim() != 1 || b.dim() != 1)
    return fallbackTo<NPU_ATEN_OP(dot)>(a, b);
  TORCH_CHECK(a.size(0) == b.size(0), "inconsistent tensor size, expected tensor [", a.size(0),
              "] and src [", b.size(0), "] to have the same number of elements, but got ",
              a.size(0), " and ", b.size(0), " elements respectively");
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, b));
  at::Tensor out = emptyNpu({}, a.scalar_type());
  emitMatmul(out.view({1, 1}), a.unsqueeze(0), b.unsqueeze(1));
  return out;
}

// How BMM reads a batch of matrices: each one dense (or the dense transpose)
// with a constant distance between consecutive ones (0 = broadcast).
struct BatchOperand {
  at::Tensor storage;
  uint64_t address;
  uint32_t batchStride;
  bool transposed;
};

BatchOperand batchOperand(const at::Tensor &t) {
  const int64_t batch = t.size(0), rows = t.size(1), cols = t.size(2);
  const int64_t sb = batch == 1 ? 0 : t.stride(0), s0 = t.stride(1), s1 = t.stride(2);
  if (wordAligned(t) && (cols == 1 || s1 == 1) && (rows == 1 || s0 == cols))
    return {t, addressOf(t), u32(sb, "batch stride"), false};
  if (wordAligned(t) && (rows == 1 || s0 == 1) && (cols == 1 || s1 == rows))
    return {t, addressOf(t), u32(sb, "batch stride"), true};
  at::Tensor dense = emptyNpuLike(t);
  emitGather(addressOf(dense), t);
  return {dense, addressOf(dense), u32(batch == 1 ? 0 : rows * cols, "batch stride"), false};
}

// out (contiguous B x M x N, disjoint from the operands) = a @ b per batch.
void emitBmm(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b) {
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (k == 0) {
    fillContiguous(addressOf(out), out.numel(), out.element_size(), 0); // an empty sum
    return;
  }
  const BatchOperand lhs = batchOperand(a), rhs = batchOperand(b);
  isa::inst::Bmm bmm;
  bmm.c = addressOf(out);
  bmm.a = lhs.address;
  bmm.b = rhs.address;
  bmm.m = u32(m, "rows");
  bmm.k = u32(k, "reduction length");
  bmm.n = u32(n, "columns");
  bmm.batch = u32(batch, "batch");
  bmm.stride_a = lhs.batchStride;
  bmm.stride_b = rhs.batchStride;
  bmm.stride_c = u32(m * n, "batch stride");
  bmm.transa = lhs.transposed;
  bmm.transb = rhs.transposed;
  bmm.dtype = *isaType(a.scalar_type());
  bmm.otype = *isaType(out.scalar_type());
  emit(bmm);
}

void checkBmm(const at::Tensor &a, const at::Tensor &b) {
  TORCH_CHECK(a.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1),
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ",
              a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
}

at::Tensor bmm(const at::Tensor &a, const at::Tensor &b) {
  static OpCounter counter("bmm");
  if (!lowerable(a, b))
    return fallbackTo<NPU_ATEN_OP(bmm)>(a, b);
  checkBmm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, b));
  at::Tensor out = emptyNpu({a.size(0), a.size(1), b.size(2)}, a.scalar_type());
  emitBmm(out, a, b);
  return out;
}

at::Tensor &bmmOut(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
  static OpCounter counter("bmm.out");
  if (!lowerable(a, b) || !writes(out, a))
    return fallbackTo<NPU_ATEN_OP2(bmm, out)>(a, b, out);
  checkBmm(a, b);
  OpScope scope(counter);
  if (logOps())
    scope.describe(productDescription(a, b));
  at::native::resize_output(out, {a.size(0), a.size(1), b.size(2)});
  if (out.is_contiguous() && wordAligned(out) && !mayOverlap(out, a) && !mayOverlap(out, b)) {
    emitBmm(out, a, b);
  } else {
    at::Tensor dense = emptyNpu(out.sizes(), out.scalar_type());
    emitBmm(dense, a, b);
    storeInto(out, addressOf(dense));
  }
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("mm.out", mmOut);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmmOut);
  m.impl("bmm", bmm);
  m.impl("bmm.out", bmmOut);
  m.impl("mv", mv);
  m.impl("dot", dot);
}

} // namespace npu::bridge
