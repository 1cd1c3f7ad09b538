// Tensor layouts on the device: addresses, contiguity, and the packets that
// move a strided view into or out of a contiguous buffer (COPY_STRIDED does
// the gathers; stores into views with gaps use one packet per dense piece).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <string>

namespace npu::bridge {

// Device address of element 0 (never dereferenced on the host).
inline uint64_t addressOf(const at::Tensor &t) {
  return reinterpret_cast<uint64_t>(t.unsafeGetTensorImpl()->data());
}

inline bool isNpu(const at::Tensor &t) {
  return t.device().type() == c10::DeviceType::PrivateUse1;
}

// A contiguous npu tensor, allocated without a trip through the dispatcher.
at::Tensor emptyNpu(c10::IntArrayRef sizes, c10::ScalarType dtype);
inline at::Tensor emptyNpuLike(const at::Tensor &t) {
  return emptyNpu(t.sizes(), t.scalar_type());
}

// Checked narrowing for packet fields.
uint32_t u32(int64_t value, const char *what);

struct Dim {
  int64_t size;
  int64_t stride;
};
using Dims = c10::SmallVector<Dim, 6>;

// The dims of (sizes, strides) without size-1 dims, with neighbours that are
// contiguous to each other merged; the same elements in the same order.
Dims collapse(c10::IntArrayRef sizes, c10::IntArrayRef strides);

// Appends packets that write the elements of the strided view (src, sizes,
// strides, itemsize) in row-major order to the contiguous buffer at dst.
// The view and [dst, dst + numel * itemsize) must not overlap.
void emitGather(uint64_t dst, uint64_t src, c10::IntArrayRef sizes, c10::IntArrayRef strides,
                size_t itemsize);
inline void emitGather(uint64_t dst, const at::Tensor &src) {
  emitGather(dst, addressOf(src), src.sizes(), src.strides(), src.element_size());
}

// Stores the row-major contiguous buffer at src into the view dst (which has
// no internal overlap and does not overlap the buffer): packets when dst is
// dense or splits into a bounded number of dense pieces, otherwise a
// read-modify-write of dst's span through the host.
void storeInto(const at::Tensor &dst, uint64_t src);

// Writes a result into out (any layout): emitInto(dst) fills a contiguous
// dst of out's shape, which is out itself when out is contiguous, otherwise
// a temporary stored into out afterwards.
template <class Emit> void storeResult(const at::Tensor &out, Emit &&emitInto) {
  if (out.is_contiguous()) {
    emitInto(out);
    return;
  }
  const at::Tensor dst = emptyNpuLike(out);
  emitInto(dst);
  storeInto(out, addressOf(dst));
}

// Packets address whole words: a view of a type narrower than a word may
// start inside one.
inline bool wordAligned(const at::Tensor &t) {
  return addressOf(t) % 4 == 0;
}

// emitInto(target) for a contiguous dst: dst itself when it is word-aligned,
// else a temporary gathered into dst afterwards.
template <class Emit> void emitAligned(const at::Tensor &dst, Emit &&emitInto) {
  if (wordAligned(dst)) {
    emitInto(dst);
    return;
  }
  const at::Tensor aligned = emptyNpuLike(dst);
  emitInto(aligned);
  emitGather(addressOf(dst), aligned);
}

// t when it is contiguous and word-aligned (what an instruction's operand
// must be: a bf16, f16 or bool view may start mid-word), otherwise a
// contiguous copy gathered on the device.
at::Tensor contiguousOnDevice(const at::Tensor &t);

// Whether the memory of a and b may intersect.
bool mayOverlap(const at::Tensor &a, const at::Tensor &b);

// What the kernel of an op refuses to write, as PyTorch's CPU kernel of the
// op does and with its messages (ATen/MemoryOverlap.h). Out and in-place
// kernels call one of these before writing an existing tensor `out`.
//
// TensorIterator's check, behind the pointwise ops and copy_: `out` may not
// have elements that share memory (an expanded view), and an input either
// is `out` or does not overlap it partially (a shifted or transposed view).
void checkPointwiseWrite(const at::Tensor &out, c10::ArrayRef<at::Tensor> inputs);
// `out` may not have elements that share memory; inputs may overlap it (out=
// forms that PyTorch computes into a new tensor and copies into out, and
// kernels such as mm that only check their output).
void checkInternalOverlap(const at::Tensor &out);

// A full-size contiguous copy of t expanded (broadcast) to `shape`.
at::Tensor materialize(const at::Tensor &t, c10::IntArrayRef shape);
// `tensor` as a contiguous, word-aligned buffer of dst's shape that a packet
// writing dst may read in place (dst identical to it, or disjoint): tensor
// itself when it is one, else a materialised copy.
at::Tensor denseOperand(const at::Tensor &tensor, const at::Tensor &dst);

// Appends a FILL of `words` 32-bit words (in chunks the packet can hold).
void emitFillWords(uint64_t dst, uint32_t pattern, uint64_t words);

// "[2x3x4]" for logs.
std::string shapeString(const at::Tensor &t);

} // namespace npu::bridge
