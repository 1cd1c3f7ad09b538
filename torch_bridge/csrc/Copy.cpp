// Copies between the host and the NPU and within the NPU. Host transfers go
// through the runtime's synchronous copies; device-side copies are COPY and
// COPY_STRIDED packets, so a non-contiguous source never visits the host.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/Functions.h>
#include <torch/library.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <unordered_map>

namespace npu::bridge {

namespace {

void logCopy(const char *direction, uint64_t bytes, const char *what = nullptr) {
  if (debugLevel() >= 2)
    logLine("COPY", std::string(direction) + " " + std::to_string(bytes) + " bytes" +
                        (what ? std::string(" (") + what + ")" : ""));
}

// Dims of t ordered by decreasing stride: the permutation under which a
// non-overlapping dense tensor is contiguous.
std::vector<int64_t> memoryOrder(const at::Tensor &t) {
  std::vector<int64_t> order(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d)
    order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  return order;
}

} // namespace

at::Tensor download(const at::Tensor &src) {
  const auto cpu = src.options().device(c10::kCPU);
  if (src.is_non_overlapping_and_dense()) {
    at::Tensor host = at::empty_strided(src.sizes(), src.strides(), cpu);
    flush();
    deviceCall(
        [&] { runtime().memcpyDeviceToHost(host.data_ptr(), addressOf(src), host.nbytes()); });
    logCopy("D->H", host.nbytes());
    return host;
  }
  at::Tensor dense = emptyNpuLike(src);
  emitGather(addressOf(dense), src);
  at::Tensor host = at::empty(src.sizes(), cpu);
  flush();
  deviceCall(
      [&] { runtime().memcpyDeviceToHost(host.data_ptr(), addressOf(dense), host.nbytes()); });
  logCopy("D->H", host.nbytes(), "gathered on the device first");
  return host;
}

void upload(const at::Tensor &dst, const at::Tensor &host) {
  if (dst.is_non_overlapping_and_dense()) {
    // Lay the values out in dst's memory order and copy them in one piece.
    at::Tensor ordered = host.permute(memoryOrder(dst)).contiguous();
    flush();
    deviceCall([&] {
      runtime().memcpyHostToDevice(addressOf(dst), ordered.data_ptr(), ordered.nbytes());
    });
    logCopy("H->D", ordered.nbytes());
    return;
  }
  at::Tensor contiguous = host.contiguous();
  at::Tensor staged = emptyNpuLike(dst);
  flush();
  deviceCall([&] {
    runtime().memcpyHostToDevice(addressOf(staged), contiguous.data_ptr(), contiguous.nbytes());
  });
  logCopy("H->D", contiguous.nbytes(), "then stored into a strided view");
  storeInto(dst, addressOf(staged));
}

namespace {

// dst <- src, both npu, same dtype and shape.
void copyOnDevice(const at::Tensor &dst, const at::Tensor &src) {
  at::Tensor source = src;
  if (mayOverlap(dst, src)) {
    // COPY and COPY_STRIDED need disjoint ranges: go through a fresh buffer.
    source = emptyNpuLike(src);
    emitGather(addressOf(source), src);
  }
  if (dst.is_non_overlapping_and_dense()) {
    emitGather(addressOf(dst), source.permute(memoryOrder(dst)));
  } else {
    at::Tensor dense = contiguousOnDevice(source);
    storeInto(dst, addressOf(dense));
  }
  logCopy("D->D", dst.nbytes());
}

// CAST packets: n elements at src (type `from`) converted into dst (type
// `to`), both word-aligned and contiguous. Chunks of a multiple of four
// elements keep every chunk's addresses word-aligned whatever the types.
void emitCast(uint64_t dst, c10::ScalarType to, uint64_t src, c10::ScalarType from, int64_t n) {
  constexpr int64_t kChunk = int64_t(1) << 28;
  const size_t toSize = c10::elementSize(to), fromSize = c10::elementSize(from);
  for (int64_t first = 0; first < n; first += kChunk) {
    isa::inst::Cast inst;
    inst.dst = dst + first * toSize;
    inst.src = src + first * fromSize;
    inst.n = u32(std::min(kChunk, n - first), "element count");
    inst.dtype = *isaType(to);
    inst.stype = *isaType(from);
    emit(inst);
  }
}

// dst <- src converted to dst's dtype, both npu, same shape: CAST reads a
// word-aligned dense source (src itself, or gathered) and writes dst in
// place when dst is one too, else a buffer stored into dst.
void convertOnDevice(const at::Tensor &dst, const at::Tensor &src) {
  at::Tensor source = src;
  if (!src.is_contiguous() || !wordAligned(src)) {
    source = emptyNpuLike(src);
    emitGather(addressOf(source), src);
  }
  if (dst.is_contiguous() && wordAligned(dst) && !mayOverlap(dst, source)) {
    emitCast(addressOf(dst), dst.scalar_type(), addressOf(source), source.scalar_type(),
             source.numel());
  } else {
    at::Tensor converted = emptyNpu(source.sizes(), dst.scalar_type());
    emitCast(addressOf(converted), dst.scalar_type(), addressOf(source), source.scalar_type(),
             source.numel());
    copyOnDevice(dst, converted);
  }
  if (logOps())
    logLine("CAST", std::string(c10::toString(src.scalar_type())) + "->" +
                        c10::toString(dst.scalar_type()) + " " + shapeString(dst));
}

} // namespace

void copyInto(const at::Tensor &dst, const at::Tensor &src) {
  if (dst.numel() == 0)
    return;
  const at::Tensor source = src.sizes() == dst.sizes() ? src : src.expand(dst.sizes());
  if (!isNpu(source)) {
    upload(dst, source.scalar_type() == dst.scalar_type() ? source : source.to(dst.scalar_type()));
    return;
  }
  if (!isNpu(dst)) {
    dst.copy_(download(source));
    return;
  }
  if (source.scalar_type() == dst.scalar_type()) {
    copyOnDevice(dst, source);
  } else if (accepts<isa::inst::Cast>(source.scalar_type(), "stype") &&
             accepts<isa::inst::Cast>(dst.scalar_type(), "dtype")) {
    convertOnDevice(dst, source);
  } else {
    // No conversion instruction: convert on the host, and say so.
    const std::string what = std::string("dtype conversion ") +
                             c10::toString(source.scalar_type()) + "->" +
                             c10::toString(dst.scalar_type());
    TORCH_CHECK(!strictMode(), "NPU_STRICT: '", what, "' would run on the CPU");
    countFallback(what);
    if (logOps())
      logLine("CPU", what + " " + shapeString(dst));
    upload(dst, download(source).to(dst.scalar_type()));
  }
}

namespace {

OpCounter &copyCounter() {
  static OpCounter counter("_copy_from");
  return counter;
}

// Whether copy_ has nothing to do: the early exit of PyTorch's copy_ (which
// sends npu copies here before reaching it) for a view of the same data.
bool sameData(const at::Tensor &dst, const at::Tensor &src) {
  return dst.is_alias_of(src) && dst.storage_offset() == src.storage_offset() &&
         dst.strides() == src.strides() && dst.sizes() == src.sizes() &&
         dst.scalar_type() == src.scalar_type() && dst.is_conj() == src.is_conj() &&
         dst.is_neg() == src.is_neg();
}

// copy_ (dst.copy_(self)) whenever a side is on the npu.
at::Tensor copyFrom(const at::Tensor &self, const at::Tensor &dst, bool /*nonBlocking*/) {
  if (sameData(dst, self))
    return dst;
  checkPointwiseWrite(dst, {self});
  OpScope scope(copyCounter());
  if (logOps())
    scope.describe(shapeString(self) + " " + self.device().str() + " -> " + dst.device().str());
  copyInto(dst, self);
  return dst;
}

at::Tensor copyFromAndResize(const at::Tensor &self, const at::Tensor &dst) {
  static OpCounter counter("_copy_from_and_resize");
  OpScope scope(counter);
  if (dst.sizes() != self.sizes())
    dst.resize_(self.sizes());
  copyInto(dst, self);
  return dst;
}

// _to_cpu: how the CPU fallback moves an op's tensors to the host. Tensors
// that share an npu storage become views of one host copy of it, with the
// same offsets and strides, so that the CPU kernel sees the aliasing the op
// was called with: it refuses an expanded output or a partly overlapping
// input exactly as it does for CPU tensors, and computes what it computes
// for them. (Copied one by one, as PyTorch's default does, they would share
// nothing.)
std::vector<at::Tensor> toCpu(at::TensorList tensors) {
  std::vector<at::Tensor> result(tensors.size());
  std::unordered_map<const c10::StorageImpl *, std::vector<size_t>> byStorage;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor &t = tensors[i];
    if (!t.defined() || !isNpu(t))
      result[i] = t.defined() ? t.cpu() : t;
    else if (t.numel() == 0)
      result[i] = at::empty_strided(t.sizes(), t.strides(), t.options().device(c10::kCPU));
    else
      byStorage[t.storage().unsafeGetStorageImpl()].push_back(i);
  }
  // Views of any dtype start at a multiple of their item size: a copy from
  // a 16-byte boundary places each of them at a whole element offset.
  constexpr int64_t kAlignment = 16;
  for (const auto &[storage, members] : byStorage) {
    int64_t begin = std::numeric_limits<int64_t>::max(), end = 0;
    for (size_t i : members) {
      const at::Tensor &t = tensors[i];
      int64_t last = t.storage_offset();
      for (int64_t d = 0; d < t.dim(); ++d)
        last += (t.size(d) - 1) * t.stride(d);
      begin = std::min(begin, t.storage_offset() * int64_t(t.element_size()));
      end = std::max(end, (last + 1) * int64_t(t.element_size()));
    }
    begin -= begin % kAlignment;
    at::Tensor span = at::empty({end - begin}, at::TensorOptions().dtype(at::kByte));
    const uint64_t base = reinterpret_cast<uint64_t>(storage->data());
    flush();
    deviceCall([&] { runtime().memcpyDeviceToHost(span.data_ptr(), base + begin, end - begin); });
    logCopy("D->H", end - begin, "the span of a storage, for the CPU fallback");
    for (size_t i : members) {
      const at::Tensor &t = tensors[i];
      const int64_t itemsize = t.element_size();
      result[i] = at::empty({0}, t.options().device(c10::kCPU))
                      .set_(span.storage(), (t.storage_offset() * itemsize - begin) / itemsize,
                            t.sizes(), t.strides());
    }
  }
  return result;
}

} // namespace

void copyResult(const at::Tensor &dst, const at::Tensor &src) {
  OpScope scope(copyCounter());
  copyInto(dst, src);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copyFrom);
  m.impl("_copy_from_and_resize", copyFromAndResize);
  m.impl("_to_cpu", toCpu);
}

} // namespace npu::bridge
