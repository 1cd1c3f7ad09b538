// The runtime's contract: allocation, copies, submission, faults and reset,
// through the C++ API and the C header.
#include "npu/rt/backend.h"
#include "npu/rt/runtime.h"
#include "npu_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cstring>
#include <numeric>
#include <random>

namespace {

using namespace npu;
using ::testing::HasSubstr;

rt::ErrorCode codeOf(auto f) {
  try {
    f();
  } catch (const rt::Error &e) {
    return e.code();
  }
  return rt::ErrorCode::Success;
}

TEST(RuntimeTest, AllocationsAreAlignedNonNullAndCoalesce) {
  rt::Runtime runtime;
  const rt::MemoryStats before = runtime.memoryStats();
  std::vector<uint64_t> blocks;
  for (uint64_t size : {1u, 63u, 64u, 65u, 4096u, 100000u})
    blocks.push_back(runtime.malloc(size));
  for (uint64_t b : blocks) {
    EXPECT_NE(b, 0u);
    EXPECT_EQ(b % 64, 0u);
  }
  EXPECT_EQ(runtime.memoryStats().liveAllocations, blocks.size());
  for (size_t i = 0; i < blocks.size(); i += 2)
    runtime.free(blocks[i]);
  for (size_t i = 1; i < blocks.size(); i += 2)
    runtime.free(blocks[i]);
  const rt::MemoryStats after = runtime.memoryStats();
  EXPECT_EQ(after.allocatedBytes, before.allocatedBytes);
  EXPECT_EQ(after.largestFreeBlock, before.largestFreeBlock) << "free blocks coalesce";
  EXPECT_GE(after.peakAllocatedBytes, 100000u);
  runtime.resetPeakMemoryStats();
  EXPECT_EQ(runtime.memoryStats().peakAllocatedBytes, 0u);
}

TEST(RuntimeTest, CopiesRoundTripInEveryDirectionAtBoundarySizes) {
  rt::Runtime runtime;
  std::mt19937 rng(3);
  for (uint64_t size : {0u, 1u, 3u, 63u, 64u, 65u, 4095u, 4096u, 4097u, 1u << 20}) {
    std::vector<uint8_t> in(size), out(size, 0xee), back(size, 0xdd);
    for (uint8_t &b : in)
      b = static_cast<uint8_t>(rng());
    const uint64_t a = runtime.malloc(size), b = runtime.malloc(size);
    runtime.memcpyHostToDevice(a, in.data(), size);
    runtime.memcpyDeviceToDevice(b, a, size);
    runtime.memcpyDeviceToHost(out.data(), b, size);
    EXPECT_EQ(out, in) << size;
    runtime.memset(a, 0x5a, size);
    runtime.memcpyDeviceToHost(back.data(), a, size);
    EXPECT_EQ(back, std::vector<uint8_t>(size, 0x5a));
    runtime.free(a);
    runtime.free(b);
  }
}

TEST(RuntimeTest, BadPointersAndOverrunsAreErrors) {
  rt::Runtime runtime;
  const uint64_t a = runtime.malloc(100);
  uint8_t buffer[256] = {};
  try {
    runtime.memcpyHostToDevice(a, buffer, 200);
    FAIL() << "copy past the allocation was accepted";
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), rt::ErrorCode::InvalidValue);
    EXPECT_THAT(e.what(), HasSubstr("runs past its allocation"));
  }
  EXPECT_EQ(codeOf([&] { runtime.memcpyDeviceToHost(buffer, a + 64, 100); }),
            rt::ErrorCode::InvalidValue);
  EXPECT_EQ(codeOf([&] { runtime.memcpyHostToDevice(0x7000'0000, buffer, 4); }),
            rt::ErrorCode::InvalidDevicePointer);
  EXPECT_EQ(codeOf([&] { runtime.free(a + 64); }), rt::ErrorCode::InvalidDevicePointer);
  runtime.free(a);
  EXPECT_EQ(codeOf([&] { runtime.free(a); }), rt::ErrorCode::InvalidDevicePointer) << "double free";
  EXPECT_EQ(codeOf([&] { runtime.free(0x1234'5678); }), rt::ErrorCode::InvalidDevicePointer);
  EXPECT_EQ(runtime.memoryStats().liveAllocations, 0u);
}

TEST(RuntimeTest, OutOfMemoryIsReportedAndTheDeviceStaysUsable) {
  rt::Runtime runtime;
  const uint64_t huge = uint64_t(1) << 40;
  try {
    runtime.malloc(huge);
    FAIL();
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), rt::ErrorCode::OutOfMemory);
    EXPECT_THAT(e.what(), HasSubstr("cannot allocate"));
  }
  std::vector<uint64_t> blocks;
  for (;;) {
    try {
      blocks.push_back(runtime.malloc(64u << 20));
    } catch (const rt::Error &e) {
      EXPECT_EQ(e.code(), rt::ErrorCode::OutOfMemory);
      break;
    }
  }
  EXPECT_GE(blocks.size(), 6u);
  runtime.free(blocks.back());
  blocks.pop_back();
  const uint64_t again = runtime.malloc(1 << 20);
  uint32_t value = 42, out = 0;
  runtime.memcpyHostToDevice(again, &value, 4);
  runtime.memcpyDeviceToHost(&out, again, 4);
  EXPECT_EQ(out, 42u);
}

TEST(RuntimeTest, PacketsExecuteInOrderAndEventsTrackThem) {
  rt::Runtime runtime;
  const uint64_t n = 1000;
  const uint64_t a = runtime.malloc(n * 4), b = runtime.malloc(n * 4), c = runtime.malloc(n * 4);
  std::vector<float> x(n), y(n);
  std::iota(x.begin(), x.end(), 1.0f);
  std::iota(y.begin(), y.end(), 100.0f);
  runtime.memcpyHostToDevice(a, x.data(), n * 4);
  runtime.memcpyHostToDevice(b, y.data(), n * 4);
  isa::inst::Add add;
  add.dst = c;
  add.a = a;
  add.b = b;
  add.rows = 1;
  add.cols = n;
  isa::inst::Muls twice;
  twice.dst = c;
  twice.a = c;
  twice.s = 2.0f;
  twice.n = n;
  const isa::Packet packets[] = {isa::packetOf(add), isa::packetOf(twice)};
  runtime.submit(packets);
  const uint64_t event = runtime.recordEvent();
  runtime.waitEvent(event);
  EXPECT_TRUE(runtime.eventDone(event));
  for (uint64_t never : {uint64_t{0}, event + 1}) {
    EXPECT_THROW(runtime.waitEvent(never), rt::Error) << never;
    EXPECT_THROW(runtime.eventDone(never), rt::Error) << never;
  }
  std::vector<float> out(n);
  runtime.memcpyDeviceToHost(out.data(), c, n * 4);
  for (uint64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 2 * (x[i] + y[i])) << i;
  EXPECT_GT(runtime.deviceCycles(), 0u);
}

// Command queues: each one's events are the point after its own last
// packet, whatever other queues submitted since; the device runs all of
// them in submission order, so a packet after a wait sees what the awaited
// queue wrote before the event.
TEST(RuntimeTest, QueueEventsStandAfterTheirOwnPackets) {
  rt::Runtime runtime;
  const uint64_t n = 4096;
  const uint64_t a = runtime.malloc(n * 4), b = runtime.malloc(n * 4);
  const uint32_t producer = runtime.createQueue(), consumer = runtime.createQueue();
  EXPECT_NE(producer, 0u);
  EXPECT_NE(producer, consumer);
  // A fresh queue has nothing of its own: its event is done at once.
  EXPECT_TRUE(runtime.eventDone(runtime.recordEvent(consumer)));

  isa::inst::Fill fill;
  fill.dst = a;
  fill.value = std::bit_cast<uint32_t>(3.0f);
  fill.count = n;
  const isa::Packet fillPacket = isa::packetOf(fill);
  runtime.submit(producer, std::span(&fillPacket, 1));
  const uint64_t produced = runtime.recordEvent(producer);

  // Much more work on the default queue, submitted after the producer's.
  isa::inst::Fill busy;
  busy.dst = b;
  busy.value = 0;
  busy.count = n;
  runtime.submit(std::vector<isa::Packet>(50, isa::packetOf(busy)));
  EXPECT_EQ(runtime.recordEvent(producer), produced) << "a queue's point ignores other queues";
  EXPECT_LT(produced, runtime.recordEvent());

  runtime.queueWaitEvent(consumer, produced);
  isa::inst::Muls twice;
  twice.dst = b;
  twice.a = a;
  twice.s = 2.0f;
  twice.n = n;
  const isa::Packet twicePacket = isa::packetOf(twice);
  runtime.submit(consumer, std::span(&twicePacket, 1));
  runtime.synchronizeQueue(consumer);
  EXPECT_TRUE(runtime.eventDone(produced));
  std::vector<float> out(n);
  runtime.memcpyDeviceToHost(out.data(), b, n * 4);
  EXPECT_EQ(out.front(), 6.0f);
  EXPECT_EQ(out.back(), 6.0f);

  // Unknown queues and handles are errors that name what is wrong.
  for (uint32_t unknown : {consumer + 1, uint32_t{UINT32_MAX}}) {
    EXPECT_EQ(codeOf([&] { runtime.recordEvent(unknown); }), rt::ErrorCode::InvalidValue);
    EXPECT_EQ(codeOf([&] { runtime.submit(unknown, std::span(&twicePacket, 1)); }),
              rt::ErrorCode::InvalidValue);
  }
  try {
    runtime.synchronizeQueue(consumer + 1);
    FAIL() << "an unknown queue synchronised";
  } catch (const rt::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("does not exist"));
  }
  EXPECT_EQ(codeOf([&] { runtime.queueWaitEvent(consumer, runtime.recordEvent() + 1); }),
            rt::ErrorCode::InvalidValue);
  EXPECT_EQ(codeOf([&] { runtime.destroyQueue(0); }), rt::ErrorCode::InvalidValue);
  runtime.destroyQueue(producer);
  EXPECT_EQ(codeOf([&] { runtime.recordEvent(producer); }), rt::ErrorCode::InvalidValue);
  EXPECT_TRUE(runtime.eventDone(produced)) << "its events outlive the queue";
  EXPECT_NE(runtime.createQueue(), producer) << "ids are not reused";
}

// A timed event holds the cycle counter after exactly the packets before
// it: the worker ends a ring batch there, so packets submitted after the
// event (already queued when it runs) do not count.
TEST(RuntimeTest, TimedEventsHoldTheCycleCounterWhereTheyStand) {
  const auto fills = [](uint64_t dst, size_t count) {
    isa::inst::Fill fill;
    fill.dst = dst;
    fill.value = 7;
    fill.count = 4096;
    return std::vector<isa::Packet>(count, isa::packetOf(fill));
  };
  uint64_t firstOnly = 0;
  {
    rt::Runtime alone;
    alone.submit(fills(alone.malloc(16384), 40));
    firstOnly = alone.deviceCycles();
  }
  rt::Runtime runtime;
  const uint64_t dst = runtime.malloc(16384);
  const uint64_t start = runtime.recordTimedEvent();
  runtime.submit(fills(dst, 40));
  const uint64_t middle = runtime.recordTimedEvent();
  const uint64_t sameMiddle = runtime.recordTimedEvent();
  runtime.submit(fills(dst, 25));
  const uint64_t end = runtime.recordTimedEvent();
  EXPECT_EQ(runtime.eventCycles(middle) - runtime.eventCycles(start), firstOnly);
  EXPECT_GT(runtime.eventCycles(end), runtime.eventCycles(middle));
  EXPECT_EQ(runtime.eventCycles(end), runtime.deviceCycles());

  runtime.releaseTimedEvent(middle);
  EXPECT_EQ(runtime.eventCycles(sameMiddle) - runtime.eventCycles(start), firstOnly);
  runtime.releaseTimedEvent(sameMiddle);
  EXPECT_EQ(codeOf([&] { runtime.eventCycles(middle); }), rt::ErrorCode::InvalidValue);
  runtime.submit(fills(dst, 1));
  const uint64_t untimed = runtime.recordEvent();
  try {
    runtime.eventCycles(untimed);
    FAIL() << "an untimed event has a device time";
  } catch (const rt::Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("recordTimedEvent"));
  }
  runtime.reset();
  EXPECT_EQ(codeOf([&] { runtime.eventCycles(end); }), rt::ErrorCode::InvalidValue);
}

TEST(RuntimeTest, FaultNamesThePacketAndResetRecovers) {
  rt::Runtime runtime;
  const uint64_t a = runtime.malloc(64);
  isa::inst::Fill fill;
  fill.dst = a;
  fill.value = 7;
  fill.count = 16;
  isa::inst::Copy bad;
  bad.dst = a;
  bad.src = 0x7fff'0000'0000; // unmapped
  bad.bytes = 16;
  const isa::Packet packets[] = {isa::packetOf(fill), isa::packetOf(fill), isa::packetOf(bad),
                                 isa::packetOf(fill)};
  runtime.submit(packets);
  try {
    runtime.synchronize();
    FAIL() << "the fault was not reported";
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), rt::ErrorCode::DeviceFault);
    EXPECT_THAT(e.what(), HasSubstr("stream packet 2"));
    EXPECT_THAT(e.what(), HasSubstr("copy"));
  }
  std::optional<rt::FaultInfo> fault = runtime.lastFault();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->streamIndex, 2u);
  EXPECT_EQ(fault->fault.code, mem::FaultCode::Unmapped);
  EXPECT_EQ(fault->fault.address, 0x7fff'0000'0000u);
  EXPECT_EQ(codeOf([&] { runtime.submit(packets); }), rt::ErrorCode::DeviceFault)
      << "a faulted stream refuses work until reset";
  runtime.reset();
  EXPECT_FALSE(runtime.lastFault());
  const isa::Packet good[] = {isa::packetOf(fill)};
  runtime.submit(good);
  runtime.synchronize();
  uint32_t out = 0;
  runtime.memcpyDeviceToHost(&out, a, 4);
  EXPECT_EQ(out, 7u);
  runtime.submit(packets); // the same stream faults again at its third packet
  EXPECT_EQ(codeOf([&] { runtime.synchronize(); }), rt::ErrorCode::DeviceFault);
  // 4 packets before the reset, 1 after it, then the bad copy is third.
  EXPECT_EQ(runtime.lastFault()->streamIndex, 4u + 1u + 2u);
}

// The ISS backend, except that running packets fails in the backend itself
// while `failing` is set (as the RTL backend does with an AxiProtocolError
// when the RTL breaks its bus protocol).
class FailingBackend : public rt::Backend {
public:
  static inline std::atomic<bool> failing{false};
  explicit FailingBackend(const rt::BackendOptions &options)
      : iss_(rt::createBackend("iss", options)) {}
  std::string_view name() const override { return "failing-test"; }
  void readMemory(uint64_t a, void *d, uint64_t n) override { iss_->readMemory(a, d, n); }
  void writeMemory(uint64_t a, const void *s, uint64_t n) override { iss_->writeMemory(a, s, n); }
  void fillMemory(uint64_t a, uint8_t v, uint64_t n) override { iss_->fillMemory(a, v, n); }
  std::vector<mem::PhysicalMemory::RegionStats> memoryStats() const override {
    return iss_->memoryStats();
  }
  void resetMemoryCounters() override { iss_->resetMemoryCounters(); }
  uint32_t readCsr(uint32_t offset) override { return iss_->readCsr(offset); }
  void writeCsr(uint32_t offset, uint32_t value) override { iss_->writeCsr(offset, value); }
  void waitIdle() override {
    if (failing)
      throw std::logic_error("simulated backend failure");
    iss_->waitIdle();
  }
  void setRecording(bool enabled) override { iss_->setRecording(enabled); }
  sim::Stats stats() const override { return iss_->stats(); }
  std::vector<sim::PacketRecord> takeRecords() override { return iss_->takeRecords(); }
  mem::Fault deviceFault() override { return iss_->deviceFault(); }

private:
  std::unique_ptr<rt::Backend> iss_;
};

// An exception of the backend that is no device fault must reach the host
// (it used to leave the runtime's worker thread and terminate the process),
// stop the stream until a reset, and leave no fault behind.
TEST(RuntimeTest, BackendFailureReachesTheHostAndResetRecovers) {
  rt::registerBackend("failing-test", [](const rt::BackendOptions &o) {
    return std::make_unique<FailingBackend>(o);
  });
  rt::RuntimeOptions options;
  options.backend = "failing-test";
  rt::Runtime runtime(options);
  const uint64_t a = runtime.malloc(64);
  isa::inst::Fill fill;
  fill.dst = a;
  fill.value = 9;
  fill.count = 16;
  const isa::Packet packets[] = {isa::packetOf(fill)};
  const auto failure = [&](auto call) -> std::string {
    try {
      call();
    } catch (const std::logic_error &e) {
      return e.what();
    }
    return "no failure";
  };
  FailingBackend::failing = true;
  runtime.submit(packets);
  EXPECT_EQ(failure([&] { runtime.synchronize(); }), "simulated backend failure");
  EXPECT_FALSE(runtime.lastFault());
  FailingBackend::failing = false;
  EXPECT_EQ(failure([&] { runtime.submit(packets); }), "simulated backend failure")
      << "a failed stream refuses work until reset";
  runtime.reset();
  runtime.submit(packets);
  runtime.synchronize();
  uint32_t out = 0;
  runtime.memcpyDeviceToHost(&out, a, 4);
  EXPECT_EQ(out, 9u);
}

TEST(RuntimeTest, UnknownBackendListsTheAvailableOnes) {
  rt::RuntimeOptions options;
  options.backend = "quantum";
  try {
    rt::Runtime runtime(options);
    FAIL();
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), rt::ErrorCode::UnknownBackend);
    EXPECT_THAT(e.what(), HasSubstr("unknown backend 'quantum' (available: "));
    EXPECT_THAT(e.what(), HasSubstr("iss"));
  }
}

TEST(RuntimeCApiTest, FullCycleAndErrors) {
  ASSERT_EQ(npuMalloc(nullptr, 4), npuErrorInvalidValue);
  npuDevicePtr p = 0;
  ASSERT_EQ(npuMalloc(&p, 4), npuErrorNotInitialized);
  ASSERT_EQ(npuInit("iss"), npuSuccess) << npuGetLastErrorMessage();
  EXPECT_STREQ(npuGetBackendName(), "iss");
  EXPECT_EQ(npuInit("iss"), npuErrorInvalidValue);
  ASSERT_EQ(npuMalloc(&p, 256), npuSuccess);
  std::vector<float> in(64, 1.5f), out(64);
  ASSERT_EQ(npuMemcpyHtoD(p, in.data(), 256), npuSuccess);
  isa::inst::Adds adds;
  adds.dst = p;
  adds.a = p;
  adds.s = 0.25f;
  adds.n = 64;
  isa::Packet packet = isa::packetOf(adds);
  ASSERT_EQ(npuSubmit(packet.data(), 1), npuSuccess);
  npuEvent_t event;
  ASSERT_EQ(npuEventRecord(&event), npuSuccess);
  ASSERT_EQ(npuEventSynchronize(event), npuSuccess);
  int done = 0;
  ASSERT_EQ(npuEventQuery(event, &done), npuSuccess);
  EXPECT_EQ(done, 1);
  // A handle npuEventRecord never returned is an error, not a wait forever.
  for (npuEvent_t never : {npuEvent_t{0}, event + 1, ~npuEvent_t{0}}) {
    EXPECT_EQ(npuEventSynchronize(never), npuErrorInvalidValue) << never;
    EXPECT_THAT(npuGetLastErrorMessage(), HasSubstr("was never recorded"));
    EXPECT_EQ(npuEventQuery(never, &done), npuErrorInvalidValue) << never;
  }
  npuQueue_t queue = 0;
  ASSERT_EQ(npuQueueCreate(nullptr), npuErrorInvalidValue);
  ASSERT_EQ(npuQueueCreate(&queue), npuSuccess);
  ASSERT_EQ(npuQueueWaitEvent(queue, event), npuSuccess);
  ASSERT_EQ(npuSubmitOnQueue(queue, packet.data(), 1), npuSuccess);
  npuEvent_t queued = 0;
  ASSERT_EQ(npuEventRecordOnQueue(&queued, queue), npuSuccess);
  ASSERT_EQ(npuQueueSynchronize(queue), npuSuccess);
  ASSERT_EQ(npuEventQuery(queued, &done), npuSuccess);
  EXPECT_EQ(done, 1);
  ASSERT_EQ(npuQueueDestroy(queue), npuSuccess);
  EXPECT_EQ(npuSubmitOnQueue(queue, packet.data(), 1), npuErrorInvalidValue);
  EXPECT_THAT(npuGetLastErrorMessage(), HasSubstr("does not exist"));
  ASSERT_EQ(npuMemcpyDtoH(out.data(), p, 256), npuSuccess);
  EXPECT_EQ(out[63], 2.0f);
  EXPECT_EQ(npuMemcpyDtoH(out.data(), p, 512), npuErrorInvalidValue);
  EXPECT_THAT(npuGetLastErrorMessage(), HasSubstr("runs past its allocation"));
  npuFaultInfo fault;
  EXPECT_EQ(npuGetLastFault(&fault), npuErrorInvalidValue);
  npuMemoryStats stats;
  ASSERT_EQ(npuGetMemoryStats(&stats), npuSuccess);
  EXPECT_EQ(stats.liveAllocations, 1u);
  ASSERT_EQ(npuFree(p), npuSuccess);
  EXPECT_EQ(npuFree(p), npuErrorInvalidDevicePointer);
  EXPECT_STREQ(npuGetErrorString(npuErrorOutOfMemory), "out of device memory");
  ASSERT_EQ(npuShutdown(), npuSuccess);
  EXPECT_EQ(npuShutdown(), npuErrorNotInitialized);
}

} // namespace
