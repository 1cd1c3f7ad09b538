// PrivateUse1 hooks: what PyTorch asks of a device backend outside op
// dispatch (availability, generators, storage resize, pointer ownership).
#include "Allocator.h"
#include "Device.h"
#include "Ops.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Storage.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace npu::bridge {

NpuGeneratorImpl::NpuGeneratorImpl(c10::DeviceIndex) {
  device_ = c10::Device(c10::DeviceType::PrivateUse1, 0);
  key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

const at::Generator &defaultGenerator() {
  static const at::Generator generator = [] {
    at::Generator g = at::make_generator<NpuGeneratorImpl>(0);
    g.set_current_seed(c10::detail::getNonDeterministicRandom());
    return g;
  }();
  return generator;
}

namespace {

// Host memory for pin_memory() and DataLoader(pin_memory=True): page-aligned
// blocks the allocator remembers, so that is_pinned() can tell them. The
// runtime copies from any host memory alike (the device is simulated in
// this process), so pinning buys no speed and the pages are not locked
// (mlock would only take memory from the host).
class PinnedAllocator final : public c10::Allocator {
public:
  c10::DataPtr allocate(size_t bytes) override {
    constexpr size_t kPage = 4096;
    void *block = bytes ? std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage) : nullptr;
    TORCH_CHECK_WITH(OutOfMemoryError, !bytes || block, "cannot allocate ", bytes,
                     " bytes of pinned host memory");
    if (block) {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks_.emplace(reinterpret_cast<uintptr_t>(block), bytes);
    }
    return {block, block, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void *dest, const void *src, size_t count) const override {
    std::memcpy(dest, src, count);
  }
  bool contains(const void *pointer) const {
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.upper_bound(address);
    if (it == blocks_.begin())
      return false;
    --it;
    return address < it->first + std::max<size_t>(it->second, 1);
  }

private:
  static void release(void *block);
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> blocks_; // address -> bytes
};

PinnedAllocator &pinnedAllocator() {
  static PinnedAllocator *instance = new PinnedAllocator; // outlives every tensor
  return *instance;
}

void PinnedAllocator::release(void *block) {
  if (!block)
    return;
  {
    PinnedAllocator &self = pinnedAllocator();
    std::lock_guard<std::mutex> lock(self.mutex_);
    self.blocks_.erase(reinterpret_cast<uintptr_t>(block));
  }
  std::free(block);
}

struct NpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  void setCurrentDevice(c10::DeviceIndex device) const override {
    TORCH_CHECK(device == 0, "npu:", static_cast<int>(device),
                " does not exist: there is one NPU (npu:0)");
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    setCurrentDevice(device);
    return 0;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex) const override { return 0; }
  const at::Generator &getDefaultGenerator(c10::DeviceIndex) const override {
    return defaultGenerator();
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return at::make_generator<NpuGeneratorImpl>(index);
  }
  at::Device getDeviceFromPtr(void *) const override { return {c10::DeviceType::PrivateUse1, 0}; }
  bool isPinnedPtr(const void *data) const override { return pinnedAllocator().contains(data); }
  c10::Allocator *getPinnedMemoryAllocator() const override { return &pinnedAllocator(); }
  void resizePrivateUse1Bytes(const c10::Storage &storage, size_t bytes) const override {
    resizeStorageBytes(storage.unsafeGetStorageImpl(), bytes);
  }
};

const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new NpuHooks);
  return true;
}();

} // namespace

} // namespace npu::bridge
