// DeviceGuardImpl for the NPU: one device. A stream is a runtime command
// queue (its id is the queue's; 0 the default): the thread's packets go to
// its current stream's queue, an event is the point after its stream's
// last packet, and querying or synchronising a stream waits for that
// stream only. The device runs all queues in submission order, so work on
// two streams is ordered as submitted — stronger than CUDA's order, never
// weaker — and waiting on an event is always met on the device. A timed
// event holds the device's cycle counter where it stands in the whole
// submission order.
#include "Device.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <utility>

namespace npu::bridge {

namespace {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

void checkDevice(c10::Device d) {
  TORCH_CHECK(d.type() == kType, "expected an npu device, got ", d);
  TORCH_CHECK(d.index() <= 0, "npu:", static_cast<int>(d.index()),
              " does not exist: there is one NPU (npu:0)");
}

c10::Device npu0() {
  return {kType, 0};
}

struct Event {
  uint64_t point = 0; // the runtime's event handle; 0 before the first record
  bool timed = false; // recorded with the device's cycle counter
};

void releasePoint(const Event &e) noexcept {
  if (!e.timed || !e.point)
    return;
  try {
    if (rt::Runtime *r = startedRuntime())
      r->releaseTimedEvent(e.point);
  } catch (...) {
    // A runtime replaced by a backend switch no longer knows the point.
  }
}

struct NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  NpuGuardImpl() = default;
  explicit NpuGuardImpl(c10::DeviceType t) {
    TORCH_CHECK(t == kType, "NpuGuardImpl for non-npu device type ", t);
  }
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device d) const override {
    checkDevice(d);
    return npu0();
  }
  c10::Device getDevice() const override { return npu0(); }
  void setDevice(c10::Device d) const override { checkDevice(d); }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const noexcept override {
    return c10::Stream(c10::Stream::UNSAFE, npu0(), currentStreamId());
  }
  c10::Stream getDefaultStream(c10::Device) const override {
    return c10::Stream(c10::Stream::DEFAULT, npu0());
  }
  c10::Stream getNewStream(c10::Device d, int) const override {
    checkDevice(d);
    const uint32_t queue = deviceCall([] { return runtime().createQueue(); });
    return c10::Stream(c10::Stream::UNSAFE, npu0(), queue);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return getNewStream(d, 0);
  }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    const c10::Stream previous = getStream(s.device());
    setCurrentStreamId(s.id());
    return previous;
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }

  void record(void **event, const c10::Stream &stream, const c10::DeviceIndex,
              const c10::EventFlag flag) const override {
    checkDevice(stream.device());
    flush();
    if (!*event)
      *event = new Event;
    Event &e = *static_cast<Event *>(*event);
    releasePoint(e);
    e.timed = flag == c10::EventFlag::BACKEND_DEFAULT;
    const uint32_t queue = queueOf(stream.id());
    e.point = deviceCall([&] {
      return e.timed ? runtime().recordTimedEvent() : runtime().recordEvent(queue);
    });
  }
  void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override {
    if (!event)
      return;
    releasePoint(*static_cast<Event *>(event));
    delete static_cast<Event *>(event);
  }
  // Met by the device's submission-order schedule; the runtime checks the
  // stream and the event.
  void block(void *event, const c10::Stream &stream) const override {
    const Event *e = static_cast<const Event *>(event);
    const uint32_t queue = queueOf(stream.id());
    if (e && e->point)
      deviceCall([&] { runtime().queueWaitEvent(queue, e->point); });
  }
  bool queryEvent(void *event) const override {
    const Event *e = static_cast<const Event *>(event);
    return !e || !e->point || deviceCall([&] { return runtime().eventDone(e->point); });
  }
  void synchronizeEvent(void *event) const override {
    const Event *e = static_cast<const Event *>(event);
    if (e && e->point)
      deviceCall([&] { runtime().waitEvent(e->point); });
  }
  // Milliseconds of device time from event1 to event2: device cycles at
  // the clock of isa/hardware.td (ClockMegahertz).
  double elapsedTime(void *event1, void *event2, const c10::DeviceIndex) const override {
    const Event *start = static_cast<const Event *>(event1);
    const Event *end = static_cast<const Event *>(event2);
    TORCH_CHECK(start && start->point && end && end->point,
                "elapsed_time: both events must have been recorded");
    TORCH_CHECK(start->timed && end->timed,
                "elapsed_time: both events must be created with enable_timing=True");
    const auto [first, last] = deviceCall([&] {
      return std::pair{runtime().eventCycles(start->point), runtime().eventCycles(end->point)};
    });
    const double cycles = static_cast<double>(last) - static_cast<double>(first);
    return cycles / (isa::hw::kClockMegahertz * 1000.0);
  }
  bool queryStream(const c10::Stream &stream) const override {
    flush();
    const uint32_t queue = queueOf(stream.id());
    return deviceCall([&] {
      rt::Runtime &r = runtime();
      return r.eventDone(r.recordEvent(queue));
    });
  }
  void synchronizeStream(const c10::Stream &stream) const override {
    flush();
    const uint32_t queue = queueOf(stream.id());
    deviceCall([&] { runtime().synchronizeQueue(queue); });
  }
  void synchronizeDevice(const c10::DeviceIndex) const override { synchronize(); }
  // Tensor.record_stream: a block freed while another stream still uses it
  // may be handed out at once, since the device runs every stream's
  // packets in submission order: the new owner's packets come after the
  // last use.
  void recordDataPtrOnStream(const c10::DataPtr &, const c10::Stream &) const override {}
};

} // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuardImpl);

} // namespace npu::bridge
