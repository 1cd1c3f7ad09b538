// Device plumbing: allocation, views, resize/set_, scalars, fills and random
// fills. Views only change metadata; fills are FILL / COPY_STRIDED packets.
#include "Allocator.h"
#include "Device.h"
#include "GraphCapture.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/EmptyTensor.h>
#include <ATen/Functions.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <bit>
#include <cstring>

namespace npu::bridge {

namespace {

constexpr c10::DispatchKeySet kNpuKeys{c10::DispatchKey::PrivateUse1};

void checkOptions(std::optional<c10::Device> device, std::optional<c10::Layout> layout,
                  std::optional<bool> pinMemory) {
  const c10::Device d = c10::device_or_default(device);
  TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "expected an npu device, got ", d);
  TORCH_CHECK(d.index() <= 0, "npu:", static_cast<int>(d.index()),
              " does not exist: there is one NPU (npu:0)");
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "the NPU holds strided tensors only");
  TORCH_CHECK(!c10::pinned_memory_or_default(pinMemory), "pinned memory is a CPU notion");
}

void logView(const char *op, const at::Tensor &result) {
  if (debugLevel() >= 3)
    logLine("VIEW", std::string(op) + " -> " + shapeString(result));
}

at::Tensor emptyMemoryFormat(c10::SymIntArrayRef size, std::optional<c10::ScalarType> dtype,
                             std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                             std::optional<bool> pinMemory,
                             std::optional<c10::MemoryFormat> memoryFormat) {
  checkOptions(device, layout, pinMemory);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), &allocator(), kNpuKeys,
                                   c10::dtype_or_default(dtype), memoryFormat);
}

at::Tensor emptyStrided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                        std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                        std::optional<c10::Device> device, std::optional<bool> pinMemory) {
  checkOptions(device, layout, pinMemory);
  return at::detail::empty_strided_generic(C10_AS_INTARRAYREF_SLOW(size),
                                           C10_AS_INTARRAYREF_SLOW(stride), &allocator(), kNpuKeys,
                                           c10::dtype_or_default(dtype));
}

at::Tensor asStrided(const at::Tensor &self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                     std::optional<c10::SymInt> storageOffset) {
  at::Tensor result = at::native::as_strided_tensorimpl(
      self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride),
      storageOffset ? std::optional<int64_t>(storageOffset->expect_int()) : std::nullopt);
  logView("as_strided", result);
  return result;
}

at::Tensor view(const at::Tensor &self, c10::SymIntArrayRef size) {
  at::Tensor result = at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
  logView("view", result);
  return result;
}

at::Tensor reshapeAlias(const at::Tensor &self, c10::SymIntArrayRef size,
                        c10::SymIntArrayRef stride) {
  at::Tensor result = at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size),
                                                 C10_AS_INTARRAYREF_SLOW(stride));
  logView("_reshape_alias", result);
  return result;
}

// Makes the storage of `self` hold at least what its sizes, strides and
// offset reach.
void ensureStorageFits(const at::Tensor &self) {
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  if (impl->numel() == 0)
    return;
  const size_t needed = at::detail::computeStorageNbytes(
      impl->sizes(), impl->strides(), impl->dtype().itemsize(), impl->storage_offset());
  c10::StorageImpl *storage = impl->storage().unsafeGetStorageImpl();
  if (needed > storage->nbytes())
    resizeStorageBytes(storage, needed);
}

const at::Tensor &resize(const at::Tensor &self, c10::SymIntArrayRef size,
                         std::optional<c10::MemoryFormat> memoryFormat) {
  static OpCounter counter("resize_");
  OpScope scope(counter);
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  const c10::IntArrayRef sizes = C10_AS_INTARRAYREF_SLOW(size);
  if (impl->sizes() == sizes && !memoryFormat)
    return self;
  impl->set_sizes_contiguous(sizes);
  if (memoryFormat && *memoryFormat != c10::MemoryFormat::Preserve)
    impl->empty_tensor_restride(*memoryFormat);
  ensureStorageFits(self);
  return self;
}

at::Tensor &setStorageOffset(at::Tensor &self, c10::Storage source, c10::SymInt storageOffset,
                             c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  TORCH_CHECK(source.device().type() == c10::DeviceType::PrivateUse1,
              "set_: expected an npu storage, got one on ", source.device());
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source))
    impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(storageOffset.expect_int());
  const c10::IntArrayRef sizes = C10_AS_INTARRAYREF_SLOW(size);
  if (stride.empty())
    impl->set_sizes_contiguous(sizes);
  else
    impl->set_sizes_and_strides(sizes, C10_AS_INTARRAYREF_SLOW(stride));
  ensureStorageFits(self);
  return self;
}

at::Tensor &setTensor(at::Tensor &self, const at::Tensor &source) {
  if (self.is_same(source))
    return self;
  return setStorageOffset(self, source.storage(), source.sym_storage_offset(), source.sym_sizes(),
                          source.sym_strides());
}

at::Tensor &setStorage(at::Tensor &self, c10::Storage source) {
  const int64_t numel = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return setStorageOffset(self, std::move(source), 0, c10::SymIntArrayRef({c10::SymInt(numel)}),
                          {});
}

at::Tensor &setEmpty(at::Tensor &self) {
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, allocator().allocate(0), &allocator(),
                     /*resizable=*/true);
  return setStorageOffset(self, std::move(empty), 0, c10::SymIntArrayRef({c10::SymInt(0)}), {});
}

at::Scalar localScalarDense(const at::Tensor &self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
  flush();
  deviceCall(
      [&] { runtime().memcpyDeviceToHost(host.data_ptr(), addressOf(self), self.element_size()); });
  if (debugLevel() >= 2)
    logLine("COPY", "D->H " + std::to_string(self.element_size()) + " bytes (item)");
  return host.item();
}

} // namespace

uint64_t scalarBits(const at::Scalar &value, c10::ScalarType dtype) {
  at::Tensor host = at::scalar_tensor(value, at::TensorOptions().dtype(dtype));
  uint64_t bits = 0;
  std::memcpy(&bits, host.data_ptr(), host.element_size());
  return bits;
}

void fillContiguous(uint64_t dst, int64_t numel, size_t itemsize, uint64_t bits) {
  const uint64_t bytes = uint64_t(numel) * itemsize;
  uint64_t pattern = bits; // the value repeated over 64 bits
  for (size_t width = itemsize * 8; width < 64; width *= 2)
    pattern |= pattern << width;
  const bool words = dst % 4 == 0 && bytes % 4 == 0 && (pattern >> 32) == (pattern & 0xffffffffu);
  if (words) {
    emitFillWords(dst, uint32_t(pattern), bytes / 4);
    return;
  }
  at::Tensor staged = emptyNpu({2}, at::kInt); // 8 bytes, word-aligned
  emitFillWords(addressOf(staged), uint32_t(pattern), 1);
  emitFillWords(addressOf(staged) + 4, uint32_t(pattern >> 32), 1);
  const int64_t zero = 0;
  emitGather(dst, addressOf(staged), {numel}, c10::IntArrayRef(&zero, 1), itemsize);
}

at::Tensor deviceScalar(const at::Scalar &value, c10::ScalarType dtype) {
  at::Tensor t = emptyNpu({}, dtype);
  fillContiguous(addressOf(t), 1, t.element_size(), scalarBits(value, dtype));
  return t;
}

namespace {

// fill_(Scalar) and zero_ write any self, an expanded one too, as on the
// CPU (every element gets the same value); fill_(Tensor) and the random
// fills refuse a self with internal overlap, as the CPU's do.
at::Tensor &fillScalar(at::Tensor &self, const at::Scalar &value) {
  static OpCounter counter("fill_");
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " = " + c10::str(value));
  if (self.numel() == 0)
    return self;
  const uint64_t bits = scalarBits(value, self.scalar_type());
  if (self.is_contiguous()) {
    fillContiguous(addressOf(self), self.numel(), self.element_size(), bits);
  } else {
    at::Tensor dense = emptyNpuLike(self);
    fillContiguous(addressOf(dense), dense.numel(), dense.element_size(), bits);
    storeInto(self, addressOf(dense));
  }
  return self;
}

at::Tensor &fillTensor(at::Tensor &self, const at::Tensor &value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  checkInternalOverlap(self);
  // As PyTorch's fill_, a value on another device than self is read (item).
  if (!isNpu(self))
    return self.fill_(value.item());
  if (value.device().is_cpu())
    return fillScalar(self, value.item());
  static OpCounter counter("fill_");
  OpScope scope(counter);
  at::Tensor source =
      value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
  at::Tensor dense = self.is_contiguous() ? self : emptyNpuLike(self);
  const int64_t zero = 0;
  emitGather(addressOf(dense), addressOf(source), {dense.numel()}, c10::IntArrayRef(&zero, 1),
             dense.element_size());
  if (!dense.is_same(self))
    storeInto(self, addressOf(dense));
  return self;
}

at::Tensor &zero(at::Tensor &self) {
  return fillScalar(self, 0);
}

// Runs draw(generator) on the host with the npu generator's state (a CPU
// generator of the same engine), which then advances as the CPU's would.
template <class Draw> void drawOnHost(std::optional<at::Generator> generator, Draw draw) {
  NpuGeneratorImpl *npuGen =
      at::get_generator_or_default<NpuGeneratorImpl>(generator, defaultGenerator());
  std::lock_guard<std::mutex> lock(npuGen->mutex_);
  at::Generator cpuGen = at::make_generator<at::CPUGeneratorImpl>();
  auto *cpu = at::check_generator<at::CPUGeneratorImpl>(cpuGen);
  cpu->set_engine(npuGen->engine());
  cpu->set_next_float_normal_sample(npuGen->next_float_normal_sample());
  cpu->set_next_double_normal_sample(npuGen->next_double_normal_sample());
  draw(cpuGen);
  npuGen->set_engine(cpu->engine());
  npuGen->set_next_float_normal_sample(cpu->next_float_normal_sample());
  npuGen->set_next_double_normal_sample(cpu->next_double_normal_sample());
}

// Draws on the host with the npu generator's state, then uploads.
template <class Draw>
at::Tensor &randomFill(at::Tensor &self, std::optional<at::Generator> generator, Draw draw) {
  checkInternalOverlap(self);
  at::Tensor host = at::empty(self.sizes(), self.options().device(c10::kCPU));
  drawOnHost(std::move(generator), [&](at::Generator &gen) { draw(host, gen); });
  copyInto(self, host);
  return self;
}

// The key of one device draw: the npu generator's next 64 bits, so that a
// seed (manual_seed, set_rng_state) reproduces every draw after it; each
// draw is a Philox stream of its own from counter 0.
uint64_t philoxKey(std::optional<at::Generator> generator) {
  NpuGeneratorImpl *gen =
      at::get_generator_or_default<NpuGeneratorImpl>(generator, defaultGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return gen->random64();
}

// A new contiguous float32 tensor of `sizes` drawn by RAND (uniform in
// [0, 1), 24 bits) or RANDN (standard normal).
template <class Inst>
at::Tensor deviceDraw(c10::IntArrayRef sizes, std::optional<at::Generator> generator) {
  at::Tensor draw = emptyNpu(sizes, at::kFloat);
  if (draw.numel() == 0)
    return draw;
  const uint64_t key = philoxKey(std::move(generator));
  Inst inst;
  inst.dst = addressOf(draw);
  inst.n = u32(draw.numel(), "element count");
  inst.seed_lo = static_cast<uint32_t>(key);
  inst.seed_hi = static_cast<uint32_t>(key >> 32);
  inst.offset = 0;
  inst.dtype = isa::DType::f32;
  emit(inst);
  return draw;
}

bool drawsOnDevice(const at::Tensor &self) {
  return !hostRandom() && isNpu(self) && c10::isFloatingType(self.scalar_type()) &&
         isaType(self.scalar_type());
}

// self = draw * scale + shift on the device, rounded into self's type.
template <class Inst>
at::Tensor &deviceRandomFill(OpCounter &counter, at::Tensor &self, double scale, double shift,
                             std::optional<at::Generator> generator) {
  checkInternalOverlap(self);
  OpScope scope(counter);
  at::Tensor draw = deviceDraw<Inst>(self.sizes(), std::move(generator));
  const int64_t n = draw.numel();
  if (scale != 1.0)
    emitScalar<isa::inst::Muls>(addressOf(draw), addressOf(draw), static_cast<float>(scale), n);
  if (shift != 0.0)
    emitScalar<isa::inst::Adds>(addressOf(draw), addressOf(draw), static_cast<float>(shift), n);
  copyInto(self, draw);
  return self;
}

at::Tensor &normal(at::Tensor &self, double mean, double std,
                   std::optional<at::Generator> generator) {
  static OpCounter counter("normal_");
  if (drawsOnDevice(self) && std >= 0)
    return deviceRandomFill<isa::inst::Randn>(counter, self, std, mean, std::move(generator));
  return randomFill(self, std::move(generator),
                    [&](at::Tensor &host, at::Generator &gen) { host.normal_(mean, std, gen); });
}

at::Tensor &uniform(at::Tensor &self, double from, double to,
                    std::optional<at::Generator> generator) {
  static OpCounter counter("uniform_");
  if (drawsOnDevice(self) && from <= to)
    return deviceRandomFill<isa::inst::Rand>(counter, self, to - from, from, std::move(generator));
  return randomFill(self, std::move(generator),
                    [&](at::Tensor &host, at::Generator &gen) { host.uniform_(from, to, gen); });
}

// A float npu tensor that MUL and MULS take (bf16 and f16: the product with
// the 0/1 mask is exact, the scaling rounds once, as on the CPU).
bool dropoutLowerable(const at::Tensor &t) {
  return ofAcceptedFloatType<isa::inst::Mul>(t) && ofAcceptedFloatType<isa::inst::Muls>(t);
}

// native_dropout (what F.dropout runs in training on a device): the keep
// mask u >= p of RAND's uniforms u (probability 1 - p, u a multiple of
// 2^-24), or with NPU_RNG=host drawn on the host with the npu generator as
// the CPU kernel draws it (bernoulli_ of 1 - p on a float tensor, so the
// same seed gives the same mask as on the CPU); then input * mask *
// (1 / (1 - p)) on the device (MUL, MULS) as the CPU computes it.
std::tuple<at::Tensor, at::Tensor> nativeDropout(const at::Tensor &input, double p,
                                                 std::optional<bool> train) {
  if (!dropoutLowerable(input) || input.numel() == 0 || !(p >= 0 && p <= 1))
    return fallbackTo<NPU_ATEN_OP(native_dropout)>(input, p, train);
  const bool training = train.value_or(true);
  if (!training) {
    at::Tensor kept = at::empty(input.sizes(), input.options().dtype(at::kBool));
    kept.fill_(true);
    return {input.clone(), kept};
  }
  at::Tensor keptMask, mask;
  if (hostRandom()) {
    at::Tensor hostMask = at::empty(input.sizes(), input.options().device(c10::kCPU));
    drawOnHost(std::nullopt, [&](at::Generator &gen) { hostMask.bernoulli_(1.0 - p, gen); });
    keptMask = at::empty(input.sizes(), input.options().dtype(at::kBool));
    copyInto(keptMask, hostMask.to(at::kBool));
    mask = at::empty(input.sizes(), input.options());
    copyInto(mask, hostMask);
  } else {
    keptMask = at::ge(deviceDraw<isa::inst::Rand>(input.sizes(), std::nullopt), p);
    mask = keptMask.to(input.scalar_type());
  }
  const double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  return {at::mul(input, mask).mul_(scale), keptMask};
}

// grad * mask * scale, as the CPU computes it (the bool mask converted to
// grad's type on the device).
at::Tensor nativeDropoutBackward(const at::Tensor &gradOutput, const at::Tensor &mask,
                                 double scale) {
  if (!dropoutLowerable(gradOutput) || !isNpu(mask) || mask.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP(native_dropout_backward)>(gradOutput, mask, scale);
  return at::mul(gradOutput, mask.to(gradOutput.scalar_type())).mul_(scale);
}

// Whether `from`'s TensorImpl may be shallow-copied into `self`'s, which
// decides `param.data = moved` in Module._apply (Module.to, .npu(), .cpu()):
// when it may, the Parameter object stays and only its data moves, as for
// CPU<->CUDA; otherwise PyTorch makes new Parameters, so tied weights come
// apart and an optimizer built before the move updates dead copies. c10's
// own rule knows only its built-in dense backends; a dense npu tensor is a
// plain strided TensorImpl like them.
bool hasCompatibleShallowCopyType(const at::Tensor &self, const at::Tensor &from) {
  c10::TensorImpl *impl = self.unsafeGetTensorImpl();
  if (impl->has_compatible_shallow_copy_type(from.key_set()))
    return true;
  auto dense = [](const at::Tensor &t) {
    // c10's rule against a dense CPU key set holds for its dense backends.
    return t.key_set().has(c10::DispatchKey::PrivateUse1) ||
           t.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(
               c10::DispatchKeySet(c10::DispatchKey::CPU));
  };
  return dense(self) && dense(from);
}

// Tensor.record_stream(s): the caching allocator needs no per-stream
// bookkeeping (Guard.cpp): a block freed while stream s still uses it is
// reused by packets submitted, so run, after s's.
void recordStream(at::Tensor &self, c10::Stream stream) {
  TORCH_CHECK(isNpu(self), "record_stream: expected an npu tensor, got one on ", self.device());
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: expected an npu stream, got one on ", stream.device());
}

} // namespace

void resizeStorageBytes(c10::StorageImpl *storage, size_t bytes) {
  TORCH_CHECK(storage->resizable(), "Trying to resize storage that is not resizable");
  c10::DataPtr fresh = allocator().allocate(bytes);
  const size_t keep = std::min(storage->nbytes(), bytes);
  if (keep > 0) {
    const int64_t one = 1;
    emitGather(reinterpret_cast<uint64_t>(fresh.get()), reinterpret_cast<uint64_t>(storage->data()),
               {int64_t(keep)}, c10::IntArrayRef(&one, 1), 1);
  }
  // The old block is handed back only after the copy reading it is queued.
  flushDeviceWork();
  storage->set_data_ptr_noswap(std::move(fresh));
  storage->set_nbytes(bytes);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", emptyMemoryFormat);
  m.impl("empty_strided", emptyStrided);
  m.impl("as_strided", asStrided);
  m.impl("view", view);
  m.impl("_reshape_alias", reshapeAlias);
  m.impl("resize_", resize);
  m.impl("set_.source_Storage_storage_offset", setStorageOffset);
  m.impl("set_.source_Tensor", setTensor);
  m.impl("set_.source_Storage", setStorage);
  m.impl("set_", setEmpty);
  m.impl("_local_scalar_dense", localScalarDense);
  m.impl("fill_.Scalar", fillScalar);
  m.impl("fill_.Tensor", fillTensor);
  m.impl("zero_", zero);
  m.impl("normal_", normal);
  m.impl("uniform_", uniform);
  m.impl("native_dropout", nativeDropout);
  m.impl("record_stream", recordStream);
  m.impl("native_dropout_backward", nativeDropoutBackward);
  m.impl("_has_compatible_shallow_copy_type", hasCompatibleShallowCopyType);
}

} // namespace npu::bridge
