// gather and index_select: rows picked by an index tensor, one EMBEDDING
// packet per run of the indexed dim. EMBEDDING copies whole 32-bit words, so
// the elements picked must be word multiples (float32, int32, int64 rows;
// bf16, f16 and bool elements fall back unless a picked row is a word
// multiple). Its indices are checked by the device: an index outside the
// dim faults, and the fault is raised here as an error.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/add.h>
#include <ATen/ops/gather_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <torch/library.h>

namespace npu::bridge {

namespace {

// Runs of more packets than this fall back: each run is one packet.
constexpr int64_t kMaxRuns = 4096;

bool indexLowerable(const at::Tensor &self, const at::Tensor &index) {
  return isNpu(self) && isNpu(index) &&
         (index.scalar_type() == at::kLong || index.scalar_type() == at::kInt);
}

// The multi-index of the `position`th element of `sizes` in row-major order,
// dotted with `strides`.
int64_t offsetOf(int64_t position, c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  int64_t offset = 0;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    offset += position % sizes[d] * strides[d];
    position /= sizes[d];
  }
  return offset;
}

// out[p][j] = self[p][index[p][j]] along the last dim of both (after moving
// `dim` there), for every outer position p of index: one EMBEDDING per p with
// the row of self as a table of one-element rows.
void emitGatherRows(const at::Tensor &out, const at::Tensor &selfLast,
                    const at::Tensor &indexLast) {
  const at::Tensor self = selfLast.stride(-1) == 1 ? selfLast : contiguousOnDevice(selfLast);
  const at::Tensor index = indexLast.contiguous();
  const int64_t width = self.element_size() / 4;
  const int64_t count = index.size(-1), rows = self.size(-1);
  const c10::IntArrayRef outer = index.sizes().slice(0, index.dim() - 1);
  const c10::IntArrayRef selfStrides = self.strides().slice(0, self.dim() - 1);
  const int64_t runs = index.numel() / count;
  for (int64_t p = 0; p < runs; ++p) {
    const at::Tensor indices = index.view({runs, count})[p];
    emitEmbedding(addressOf(out) + p * count * out.element_size(),
                  addressOf(self) + offsetOf(p, outer, selfStrides) * self.element_size(), indices,
                  width, rows);
  }
}

bool gatherLowerable(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  if (!indexLowerable(self, index) || self.element_size() % 4 != 0 || index.dim() != self.dim() ||
      index.numel() == 0 || self.dim() == 0)
    return false;
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && index.size(k) > self.size(k))
      return false; // PyTorch's error, from the fallback
  return index.numel() / index.size(d) <= kMaxRuns;
}

at::Tensor gatherInto(OpCounter &counter, const at::Tensor &self, int64_t dim,
                      const at::Tensor &index) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " dim " + std::to_string(dim) + " by " + shapeString(index));
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor selfLast = self.movedim(d, -1), indexLast = index.movedim(d, -1);
  at::Tensor moved = emptyNpu(indexLast.sizes(), self.scalar_type());
  emitGatherRows(moved, selfLast, indexLast);
  return moved.movedim(-1, d);
}

at::Tensor gather(const at::Tensor &self, int64_t dim, const at::Tensor &index, bool sparseGrad) {
  static OpCounter counter("gather");
  if (!gatherLowerable(self, dim, index))
    return fallbackTo<NPU_ATEN_OP(gather)>(self, dim, index, sparseGrad);
  return contiguousOnDevice(gatherInto(counter, self, dim, index));
}

at::Tensor &gatherOut(const at::Tensor &self, int64_t dim, const at::Tensor &index, bool sparseGrad,
                      at::Tensor &out) {
  static OpCounter counter("gather.out");
  if (!gatherLowerable(self, dim, index) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(gather, out)>(self, dim, index, sparseGrad, out);
  at::native::resize_output(out, index.sizes());
  // The CPU kernel's checks, with its messages.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_partial_overlap(out, index);
  const at::Tensor result = gatherInto(counter, self, dim, index);
  copyResult(out, result);
  return out;
}

// index_select: self as [outer, n, inner] around `dim`; per outer slice one
// EMBEDDING of the rows of `inner` elements picked by index.
bool indexSelectLowerable(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  if (!indexLowerable(self, index) || index.dim() > 1 || index.numel() == 0 || self.dim() == 0)
    return false;
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  int64_t inner = 1, outer = 1;
  for (int64_t k = 0; k < self.dim(); ++k)
    (k < d ? outer : inner) *= k == d ? 1 : self.size(k);
  return self.numel() > 0 && inner * self.element_size() % 4 == 0 && outer <= kMaxRuns;
}

at::Tensor indexSelectCompute(OpCounter &counter, const at::Tensor &selfIn, int64_t dim,
                              const at::Tensor &indexIn) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(selfIn) + " dim " + std::to_string(dim) + " by " +
                   shapeString(indexIn));
  const at::Tensor self = contiguousOnDevice(selfIn);
  const at::Tensor index = indexIn.reshape({-1}).contiguous();
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  int64_t inner = 1, outer = 1;
  for (int64_t k = 0; k < self.dim(); ++k)
    (k < d ? outer : inner) *= k == d ? 1 : self.size(k);
  const int64_t n = self.size(d);
  shape[d] = index.numel();
  at::Tensor out = emptyNpu(shape, self.scalar_type());
  const int64_t rowBytes = inner * self.element_size();
  for (int64_t o = 0; o < outer; ++o)
    emitEmbedding(addressOf(out) + o * index.numel() * rowBytes, addressOf(self) + o * n * rowBytes,
                  index, rowBytes / 4, n);
  return out;
}

at::Tensor indexSelect(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  static OpCounter counter("index_select");
  if (!indexSelectLowerable(self, dim, index))
    return fallbackTo<NPU_ATEN_OP(index_select)>(self, dim, index);
  return indexSelectCompute(counter, self, dim, index);
}

at::Tensor &indexSelectOut(const at::Tensor &self, int64_t dim, const at::Tensor &index,
                           at::Tensor &out) {
  static OpCounter counter("index_select.out");
  if (!indexSelectLowerable(self, dim, index) || !isNpu(out) ||
      out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(index_select, out)>(self, dim, index, out);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[at::maybe_wrap_dim(dim, self.dim())] = index.numel();
  at::native::resize_output(out, shape);
  // The CPU kernel's checks, with its messages.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  const at::Tensor result = indexSelectCompute(counter, self, dim, index);
  copyResult(out, result);
  return out;
}

// Advanced indexing by one integer index tensor (self[:, idx], as generate
// picks positions): index_select along that dim, the dim replaced by the
// index's shape. Several index tensors and bool masks fall back, and so does
// an index type whose arithmetic the ISA lacks.
std::optional<int64_t> singleIndexDim(const at::Tensor &self,
                                      const c10::List<std::optional<at::Tensor>> &indices) {
  std::optional<int64_t> found;
  for (size_t d = 0; d < indices.size(); ++d) {
    const std::optional<at::Tensor> index = indices.get(d);
    if (!index || !index->defined())
      continue;
    if (found)
      return std::nullopt;
    found = int64_t(d);
  }
  if (!found)
    return std::nullopt;
  const at::Tensor index = *indices.get(*found);
  at::Tensor flat = index.reshape({-1});
  const c10::ScalarType type = index.scalar_type();
  if (index.dim() == 0 || !indexSelectLowerable(self, *found, flat) ||
      !accepts<isa::inst::Mul>(type) || !accepts<isa::inst::Max>(type) ||
      !accepts<isa::inst::Min>(type) || !accepts<isa::inst::Add>(type))
    return std::nullopt;
  return found;
}

// Indexing counts negative indices from the end, index_select does not:
// index + n * min(max(-index, 0), 1) (integer MUL, MAX, MIN, ADD packets).
// An index outside [-n, n) stays outside and faults.
at::Tensor fromTheEnd(const at::Tensor &index, int64_t n) {
  const c10::ScalarType type = index.scalar_type();
  const at::Tensor negated = at::mul(index, deviceScalar(-1, type));
  const at::Tensor negative =
      at::minimum(at::maximum(negated, deviceScalar(0, type)), deviceScalar(1, type));
  return at::add(index, negative, n);
}

// self's shape with dim d replaced by the index's shape.
std::vector<int64_t> indexedShape(const at::Tensor &self, int64_t d, const at::Tensor &index) {
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), index.sizes().begin(), index.sizes().end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return shape;
}

at::Tensor indexCompute(OpCounter &counter, const at::Tensor &self, int64_t d,
                        const at::Tensor &index) {
  const at::Tensor picked =
      indexSelectCompute(counter, self, d, fromTheEnd(index.reshape({-1}), self.size(d)));
  return picked.view(indexedShape(self, d, index));
}

at::Tensor indexTensor(const at::Tensor &self,
                       const c10::List<std::optional<at::Tensor>> &indices) {
  static OpCounter counter("index");
  const std::optional<int64_t> d = singleIndexDim(self, indices);
  if (!d)
    return fallbackTo<NPU_ATEN_OP2(index, Tensor)>(self, indices);
  return indexCompute(counter, self, *d, *indices.get(*d));
}

at::Tensor &indexTensorOut(const at::Tensor &self,
                           const c10::List<std::optional<at::Tensor>> &indices, at::Tensor &out) {
  static OpCounter counter("index.Tensor_out");
  const std::optional<int64_t> d = singleIndexDim(self, indices);
  if (!d || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(index, Tensor_out)>(self, indices, out);
  const at::Tensor index = *indices.get(*d);
  at::native::resize_output(out, indexedShape(self, *d, index));
  // The CPU kernel's checks, with its messages.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  const at::Tensor result = indexCompute(counter, self, *d, index);
  copyResult(out, result);
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index.Tensor", indexTensor);
  m.impl("index.Tensor_out", indexTensorOut);
  m.impl("gather", gather);
  m.impl("gather.out", gatherOut);
  m.impl("index_select", indexSelect);
  m.impl("index_select.out", indexSelectOut);
}

} // namespace npu::bridge
