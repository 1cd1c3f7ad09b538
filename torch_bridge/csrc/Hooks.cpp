// PrivateUse1 hooks: what PyTorch asks of a device backend outside op
// dispatch (availability, generators, storage resize, pointer ownership).
#include "Allocator.h"
#include "Device.h"
#include "Ops.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Storage.h>

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
