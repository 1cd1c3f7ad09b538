// DeviceGuardImpl for the NPU: one device with one in-order stream, whose
// events are points in the runtime's packet stream.
#include "Device.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

namespace npu::bridge {

namespace {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

void checkDevice(c10::Device d) {
  TORCH_CHECK(d.type() == kType, "expected an npu device, got ", d);
  TORCH_CHECK(d.index() <= 0, "npu:", static_cast<int>(d.index()),
              " does not exist: there is one NPU (npu:0)");
}

struct NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  NpuGuardImpl() = default;
  explicit NpuGuardImpl(c10::DeviceType t) {
    TORCH_CHECK(t == kType, "NpuGuardImpl for non-npu device type ", t);
  }
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    checkDevice(d);
    return {kType, 0};
  }
  c10::Device getDevice() const override { return {kType, 0}; }
  void setDevice(c10::Device d) const override { checkDevice(d); }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kType, d.index() < 0 ? 0 : d.index()));
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return getStream(d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }

  // An event is the stream position when it was recorded (boxed in a heap
  // integer because the interface traffics in void*).
  void record(void **event, const c10::Stream &stream, const c10::DeviceIndex,
              const c10::EventFlag) const override {
    checkDevice(stream.device());
    flush();
    if (!*event)
      *event = new uint64_t(0);
    *static_cast<uint64_t *>(*event) = runtime().recordEvent();
  }
  void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<uint64_t *>(event);
  }
  // One in-order stream: everything recorded before is already ahead.
  void block(void *, const c10::Stream &) const override {}
  bool queryEvent(void *event) const override {
    return !event || runtime().eventDone(*static_cast<uint64_t *>(event));
  }
  void synchronizeEvent(void *event) const override {
    if (!event)
      return;
    deviceCall([&] { runtime().waitEvent(*static_cast<uint64_t *>(event)); });
  }
  bool queryStream(const c10::Stream &) const override {
    flush();
    rt::Runtime &r = runtime();
    return r.eventDone(r.recordEvent());
  }
  void synchronizeStream(const c10::Stream &) const override { synchronize(); }
  void synchronizeDevice(const c10::DeviceIndex) const override { synchronize(); }
  void recordDataPtrOnStream(const c10::DataPtr &, const c10::Stream &) const override {}
};

} // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuardImpl);

} // namespace npu::bridge
