#include "Layout.h"

#include "Allocator.h"
#include "Device.h"

#include <ATen/EmptyTensor.h>
#include <ATen/Functions.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Copy.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace npu::bridge {

namespace {

// More dense pieces than this and a store into a view goes through the host.
constexpr int64_t kMaxStorePieces = 4096;
// More pieces than this and a store into a slice of a dense box goes
// through the box (three gathers) rather than a packet per piece.
constexpr int64_t kMinBoxPieces = 4;
// COPY moves at most this many bytes per packet (its byte count is a u32).
constexpr uint64_t kCopyChunk = uint64_t(1) << 31;

isa::ElemSize elemSize(size_t itemsize) {
  switch (itemsize) {
  case 1: return isa::ElemSize::byte;
  case 2: return isa::ElemSize::half;
  case 4: return isa::ElemSize::word;
  case 8: return isa::ElemSize::quad;
  }
  TORCH_CHECK(false, "NPU: no strided copy for ", itemsize, "-byte elements");
}

int32_t i32(int64_t value, const char *what) {
  TORCH_CHECK(value >= std::numeric_limits<int32_t>::min() &&
                  value <= std::numeric_limits<int32_t>::max(),
              "NPU: ", what, " ", value, " does not fit a packet's 32-bit field");
  return static_cast<int32_t>(value);
}

void emitCopy(uint64_t dst, uint64_t src, uint64_t bytes) {
  for (uint64_t done = 0; done < bytes; done += kCopyChunk) {
    isa::inst::Copy copy;
    copy.dst = dst + done;
    copy.src = src + done;
    copy.bytes = static_cast<uint32_t>(std::min(kCopyChunk, bytes - done));
    emit(copy);
  }
}

// Host fallback of storeInto for views with many pieces: read dst's span,
// update it on the host, write it back (runtime copies only).
void storeThroughHost(const at::Tensor &dst, uint64_t src) {
  const int64_t itemsize = dst.element_size();
  int64_t extent = 1; // elements from element 0 to the last one, inclusive
  for (int64_t d = 0; d < dst.dim(); ++d)
    extent += (dst.size(d) - 1) * dst.stride(d);
  const auto cpu = at::TensorOptions().dtype(dst.scalar_type());
  at::Tensor span = at::empty({extent}, cpu);
  at::Tensor values = at::empty(dst.sizes(), cpu);
  flush();
  deviceCall([&] {
    runtime().memcpyDeviceToHost(span.data_ptr(), addressOf(dst), extent * itemsize);
    runtime().memcpyDeviceToHost(values.data_ptr(), src, values.nbytes());
  });
  // dst may have internal overlap (an expanded out that the op's CPU kernel
  // writes unchecked): the last write wins, as with the packets.
  at::native::copy_ignoring_overlaps(span.as_strided(dst.sizes(), dst.strides()), values);
  deviceCall(
      [&] { runtime().memcpyHostToDevice(addressOf(dst), span.data_ptr(), extent * itemsize); });
  if (debugLevel() >= 2)
    logLine("COPY", "D->H->D " + std::to_string(extent * itemsize) +
                        " bytes: store into a view of " + std::to_string(dst.numel()) +
                        " elements with gaps");
}

// Stores into a view with gaps that is a slice along one dim of a dense box
// of memory inside its storage (the common case: a half of the last dim),
// without a packet per piece: the box is gathered into a staging buffer
// with the sliced dim leading, where the view's elements form one block;
// the source overwrites that block and the box is written back, gaps with
// the values they had. Returns false (nothing emitted) for other views.
// `order` lists dst's dims of size > 1 by decreasing stride.
bool storeThroughBox(const at::Tensor &dst, uint64_t src, c10::ArrayRef<int64_t> order) {
  if (order.empty() || dst.stride(order.back()) != 1)
    return false;
  std::vector<int64_t> boxSizes(dst.sizes().begin(), dst.sizes().end());
  int64_t sliced = -1;
  for (size_t i = 1; i < order.size(); ++i) {
    const int64_t d = order[i], outer = dst.stride(order[i - 1]);
    if (outer % dst.stride(d) != 0)
      return false;
    boxSizes[d] = outer / dst.stride(d);
    if (boxSizes[d] != dst.size(d)) {
      if (sliced >= 0 || boxSizes[d] < dst.size(d))
        return false;
      sliced = d;
    }
  }
  if (sliced < 0)
    return false;
  // The view starts `first` positions into the box along the sliced dim:
  // where a tensor dense from the start of the storage would have it (any
  // position inside the storage is correct; this one is in bounds for the
  // usual slices of a whole tensor).
  const int64_t slicedStride = dst.stride(sliced);
  const int64_t first = std::min((dst.storage_offset() / slicedStride) % boxSizes[sliced],
                                 boxSizes[sliced] - dst.size(sliced));
  const int64_t boxOffset = dst.storage_offset() - first * slicedStride;
  const int64_t itemsize = dst.element_size();
  const int64_t boxNumel = c10::multiply_integers(boxSizes);
  const uint64_t boxBegin = addressOf(dst) - uint64_t(first * slicedStride * itemsize);
  const uint64_t boxBytes = uint64_t(boxNumel) * itemsize;
  const uint64_t srcBytes = uint64_t(dst.numel()) * itemsize;
  if (boxOffset < 0 ||
      (boxOffset + boxNumel) * itemsize > static_cast<int64_t>(dst.storage().nbytes()) ||
      (src < boxBegin + boxBytes && boxBegin < src + srcBytes))
    return false;
  const at::Tensor box = dst.as_strided(boxSizes, dst.strides(), boxOffset);
  // The source holds dst's elements in row-major order; read it with the
  // sliced dim leading, as the staging buffer is laid out.
  c10::SmallVector<int64_t, 6> logical(dst.dim());
  for (int64_t d = dst.dim() - 1, stride = 1; d >= 0; --d) {
    logical[d] = stride;
    stride *= dst.size(d);
  }
  c10::SmallVector<int64_t, 6> blockSizes{dst.size(sliced)}, blockStrides{logical[sliced]};
  for (int64_t d = 0; d < dst.dim(); ++d) {
    if (d != sliced) {
      blockSizes.push_back(dst.size(d));
      blockStrides.push_back(logical[d]);
    }
  }
  const at::Tensor staging = emptyNpu(box.movedim(sliced, 0).sizes(), dst.scalar_type());
  emitGather(addressOf(staging), box.movedim(sliced, 0));
  const int64_t rowElements = boxNumel / boxSizes[sliced]; // one position of the sliced dim
  emitGather(addressOf(staging) + uint64_t(first * rowElements * itemsize), src, blockSizes,
             blockStrides, itemsize);
  // Back into the box in its memory order (in which it is contiguous).
  std::vector<int64_t> memoryOrder(dst.dim());
  std::iota(memoryOrder.begin(), memoryOrder.end(), 0);
  std::stable_sort(memoryOrder.begin(), memoryOrder.end(),
                   [&](int64_t a, int64_t b) { return box.stride(a) > box.stride(b); });
  emitGather(boxBegin, staging.movedim(0, sliced).permute(memoryOrder));
  if (debugLevel() >= 3)
    logLine("VIEW", "store into " + shapeString(dst) + " through its box " + shapeString(box));
  return true;
}

} // namespace

at::Tensor emptyNpu(c10::IntArrayRef sizes, c10::ScalarType dtype) {
  return at::detail::empty_generic(
      sizes, &allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype, std::nullopt);
}

uint32_t u32(int64_t value, const char *what) {
  TORCH_CHECK(value >= 0 && value <= std::numeric_limits<uint32_t>::max(), "NPU: ", what, " ",
              value, " does not fit a packet's 32-bit field");
  return static_cast<uint32_t>(value);
}

Dims collapse(c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  Dims dims;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1)
      continue;
    if (!dims.empty() && dims.back().stride == strides[d] * sizes[d]) {
      dims.back().size *= sizes[d];
      dims.back().stride = strides[d];
    } else {
      dims.push_back({sizes[d], strides[d]});
    }
  }
  return dims;
}

void emitGather(uint64_t dst, uint64_t src, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                size_t itemsize) {
  const int64_t numel = c10::multiply_integers(sizes);
  if (numel == 0)
    return;
  const Dims dims = collapse(sizes, strides);
  if (dims.empty()) {
    emitCopy(dst, src, itemsize);
    return;
  }
  if (dims.size() == 1 && dims[0].stride == 1) {
    emitCopy(dst, src, numel * itemsize);
    return;
  }
  // The innermost four dims go into one packet; outer ones are iterated.
  const size_t outer = dims.size() > 4 ? dims.size() - 4 : 0;
  isa::inst::CopyStrided copy;
  copy.esize = elemSize(itemsize);
  uint32_t *packetSizes[4] = {&copy.size0, &copy.size1, &copy.size2, &copy.size3};
  int32_t *packetStrides[4] = {&copy.stride0, &copy.stride1, &copy.stride2, &copy.stride3};
  const size_t inner = dims.size() - outer;
  int64_t innerNumel = 1;
  for (size_t slot = 0; slot < 4; ++slot) {
    const size_t pad = 4 - inner;
    if (slot < pad) {
      *packetSizes[slot] = 1;
      *packetStrides[slot] = 0;
    } else {
      const Dim &d = dims[outer + slot - pad];
      *packetSizes[slot] = u32(d.size, "strided copy extent");
      *packetStrides[slot] = i32(d.stride, "strided copy stride");
      innerNumel *= d.size;
    }
  }
  c10::SmallVector<int64_t, 4> index(outer, 0);
  for (int64_t piece = 0; piece < numel / innerNumel; ++piece) {
    int64_t offset = 0;
    for (size_t d = 0; d < outer; ++d)
      offset += index[d] * dims[d].stride;
    copy.dst = dst + uint64_t(piece * innerNumel) * itemsize;
    copy.src = src + uint64_t(offset * int64_t(itemsize));
    emit(copy);
    for (size_t d = outer; d-- > 0;) {
      if (++index[d] < dims[d].size)
        break;
      index[d] = 0;
    }
  }
}

void storeInto(const at::Tensor &dst, uint64_t src) {
  const int64_t numel = dst.numel();
  if (numel == 0)
    return;
  const size_t itemsize = dst.element_size();
  // Logical (row-major) strides of the source buffer.
  const int64_t rank = dst.dim();
  c10::SmallVector<int64_t, 6> logical(rank);
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    logical[d] = s;
    s *= dst.size(d);
  }
  // Visit dst's dims in memory order (largest stride first): the source,
  // read with the same permutation, is a gather into dst's memory.
  c10::SmallVector<int64_t, 6> order;
  for (int64_t d = 0; d < rank; ++d)
    if (dst.size(d) != 1)
      order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return dst.stride(a) > dst.stride(b); });
  // The innermost dims that tile memory densely form one piece.
  size_t denseFrom = order.size();
  for (int64_t expected = 1; denseFrom > 0; --denseFrom) {
    const int64_t d = order[denseFrom - 1];
    if (dst.stride(d) != expected)
      break;
    expected *= dst.size(d);
  }
  c10::SmallVector<int64_t, 6> pieceSizes, pieceStrides;
  int64_t pieces = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i < denseFrom) {
      pieces *= dst.size(order[i]);
    } else {
      pieceSizes.push_back(dst.size(order[i]));
      pieceStrides.push_back(logical[order[i]]);
    }
  }
  if (pieces > kMinBoxPieces && storeThroughBox(dst, src, order))
    return;
  if (pieces > kMaxStorePieces) {
    storeThroughHost(dst, src);
    return;
  }
  c10::SmallVector<int64_t, 6> index(denseFrom, 0);
  const uint64_t base = addressOf(dst);
  for (int64_t piece = 0; piece < pieces; ++piece) {
    int64_t dstOffset = 0, srcOffset = 0;
    for (size_t i = 0; i < denseFrom; ++i) {
      dstOffset += index[i] * dst.stride(order[i]);
      srcOffset += index[i] * logical[order[i]];
    }
    emitGather(base + dstOffset * itemsize, src + srcOffset * itemsize, pieceSizes, pieceStrides,
               itemsize);
    for (size_t i = denseFrom; i-- > 0;) {
      if (++index[i] < dst.size(order[i]))
        break;
      index[i] = 0;
    }
  }
}

at::Tensor contiguousOnDevice(const at::Tensor &t) {
  if (t.is_contiguous() && wordAligned(t))
    return t;
  at::Tensor out = emptyNpuLike(t);
  emitGather(addressOf(out), t);
  if (debugLevel() >= 3)
    logLine("VIEW", "gather " + shapeString(t) + " into a contiguous buffer");
  return out;
}

at::Tensor materialize(const at::Tensor &t, c10::IntArrayRef shape) {
  at::Tensor full = emptyNpu(shape, t.scalar_type());
  emitGather(addressOf(full), t.expand(shape));
  return full;
}

at::Tensor denseOperand(const at::Tensor &tensor, const at::Tensor &dst) {
  if (tensor.sizes() == dst.sizes() && tensor.is_contiguous() && wordAligned(tensor) &&
      (!mayOverlap(tensor, dst) || addressOf(tensor) == addressOf(dst)))
    return tensor;
  return materialize(tensor, dst.sizes());
}

bool mayOverlap(const at::Tensor &a, const at::Tensor &b) {
  if (a.numel() == 0 || b.numel() == 0)
    return false;
  if (!a.storage().is_alias_of(b.storage()))
    return false;
  auto range = [](const at::Tensor &t) {
    int64_t last = 0;
    for (int64_t d = 0; d < t.dim(); ++d)
      last += (t.size(d) - 1) * t.stride(d);
    const uint64_t begin = addressOf(t);
    return std::pair(begin, begin + uint64_t(last + 1) * t.element_size());
  };
  const auto [a0, a1] = range(a);
  const auto [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

void checkPointwiseWrite(const at::Tensor &out, c10::ArrayRef<at::Tensor> inputs) {
  at::assert_no_internal_overlap(out);
  for (const at::Tensor &input : inputs)
    if (!input.is_same(out))
      at::assert_no_partial_overlap(out, input);
}

void checkInternalOverlap(const at::Tensor &out) {
  at::assert_no_internal_overlap(out);
}

void emitFillWords(uint64_t dst, uint32_t pattern, uint64_t words) {
  constexpr uint64_t kMaxWords = std::numeric_limits<uint32_t>::max();
  for (uint64_t done = 0; done < words; done += kMaxWords) {
    isa::inst::Fill fill;
    fill.dst = dst + done * 4;
    fill.value = pattern;
    fill.count = static_cast<uint32_t>(std::min(kMaxWords, words - done));
    emit(fill);
  }
}

std::string shapeString(const at::Tensor &t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d)
    s += (d ? "x" : "") + std::to_string(t.size(d));
  return s + "]";
}

} // namespace npu::bridge
