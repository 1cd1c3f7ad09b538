// gather, index_select and indexing by one integer tensor: one GATHER
// packet each (mode full for gather, shared for the others; indexing with
// wrap, Python's negative indices), for every ISA type and int32/int64
// indices. The device checks the indices: one outside the dim faults, and
// the fault is raised here as an error.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/gather_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/index_select_ops.h>
#include <torch/library.h>

namespace npu::bridge {

namespace {

bool indexLowerable(const at::Tensor &self, const at::Tensor &index) {
  return isNpu(self) && isNpu(index) && isaType(self.scalar_type()) &&
         (index.scalar_type() == at::kLong || index.scalar_type() == at::kInt);
}

// The product of sizes[first, last).
int64_t extent(c10::IntArrayRef sizes, int64_t first, int64_t last) {
  int64_t product = 1;
  for (int64_t k = first; k < last; ++k)
    product *= sizes[k];
  return product;
}

// gather along d: out = index's shape, out[..., j, ...] = self[..., index[..., j,
// ...], ...]. GATHER's full mode wants src of index's sizes but along d, so
// a self larger in another dim is narrowed to them (a copy).
bool gatherLowerable(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  if (!indexLowerable(self, index) || index.dim() != self.dim() || self.dim() == 0 ||
      self.numel() == 0)
    return false;
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && index.size(k) > self.size(k))
      return false; // PyTorch's error, from the fallback
  return true;
}

at::Tensor gatherInto(OpCounter &counter, const at::Tensor &self, int64_t dim,
                      const at::Tensor &indexIn) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " dim " + std::to_string(dim) + " by " +
                   shapeString(indexIn));
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor out = emptyNpu(indexIn.sizes(), self.scalar_type());
  if (out.numel() == 0)
    return out;
  at::Tensor src = self;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d)
      src = src.narrow(k, 0, indexIn.size(k));
  src = contiguousOnDevice(src);
  const at::Tensor index = contiguousOnDevice(indexIn);
  const c10::IntArrayRef sizes = index.sizes();
  emitIndexGather(out, src, index, extent(sizes, 0, d), self.size(d), sizes[d],
                  extent(sizes, d + 1, index.dim()), isa::GatherMode::full, false);
  return out;
}

at::Tensor gather(const at::Tensor &self, int64_t dim, const at::Tensor &index, bool sparseGrad) {
  static OpCounter counter("gather");
  if (!gatherLowerable(self, dim, index))
    return fallbackTo<NPU_ATEN_OP(gather)>(self, dim, index, sparseGrad);
  return gatherInto(counter, self, dim, index);
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

// index_select along d: self as [outer, n, inner], the index's elements
// shared by every outer slice and inner element; with wrap, Python's
// negative indices (indexing) are allowed.
bool indexSelectLowerable(const at::Tensor &self, const at::Tensor &index) {
  return indexLowerable(self, index) && index.dim() <= 1 && self.dim() > 0 && self.numel() > 0;
}

at::Tensor indexSelectCompute(OpCounter &counter, const at::Tensor &selfIn, int64_t dim,
                              const at::Tensor &indexIn, bool wrap) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(selfIn) + " dim " + std::to_string(dim) + " by " +
                   shapeString(indexIn));
  const int64_t d = at::maybe_wrap_dim(dim, selfIn.dim());
  std::vector<int64_t> shape(selfIn.sizes().begin(), selfIn.sizes().end());
  shape[d] = indexIn.numel();
  at::Tensor out = emptyNpu(shape, selfIn.scalar_type());
  if (out.numel() == 0)
    return out;
  const at::Tensor self = contiguousOnDevice(selfIn);
  const at::Tensor index = contiguousOnDevice(indexIn.reshape({-1}));
  emitIndexGather(out, self, index, extent(self.sizes(), 0, d), self.size(d), index.numel(),
                  extent(self.sizes(), d + 1, self.dim()), isa::GatherMode::shared, wrap);
  return out;
}

at::Tensor indexSelect(const at::Tensor &self, int64_t dim, const at::Tensor &index) {
  static OpCounter counter("index_select");
  if (!indexSelectLowerable(self, index))
    return fallbackTo<NPU_ATEN_OP(index_select)>(self, dim, index);
  return indexSelectCompute(counter, self, dim, index, false);
}

at::Tensor &indexSelectOut(const at::Tensor &self, int64_t dim, const at::Tensor &index,
                           at::Tensor &out) {
  static OpCounter counter("index_select.out");
  if (!indexSelectLowerable(self, index) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(index_select, out)>(self, dim, index, out);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[at::maybe_wrap_dim(dim, self.dim())] = index.numel();
  at::native::resize_output(out, shape);
  // The CPU kernel's checks, with its messages.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  const at::Tensor result = indexSelectCompute(counter, self, dim, index, false);
  copyResult(out, result);
  return out;
}

// Advanced indexing by one integer index tensor (self[:, idx], as generate
// picks positions): index_select along that dim with wrap (indexing counts
// negative indices from the end, index_select does not), the dim replaced by
// the index's shape. Several index tensors and bool masks fall back.
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
  if (index.dim() == 0 || !indexSelectLowerable(self, index.reshape({-1})))
    return std::nullopt;
  return found;
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
  const at::Tensor picked = indexSelectCompute(counter, self, d, index.reshape({-1}), true);
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
