#include "npu/rt/runtime.h"

#include "backends.h"
#include "capture.h"
#include "npu/asm/disassembler.h"
#include "npu/mem/allocator.h"
#include "npu/mem/hex.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace npu::rt {

const char *errorCodeName(ErrorCode code) {
  switch (code) {
  case ErrorCode::Success: return "success";
  case ErrorCode::InvalidValue: return "invalid value";
  case ErrorCode::OutOfMemory: return "out of device memory";
  case ErrorCode::NotInitialized: return "runtime not initialised";
  case ErrorCode::InvalidDevicePointer: return "invalid device pointer";
  case ErrorCode::DeviceFault: return "device fault";
  case ErrorCode::UnknownBackend: return "unknown backend";
  case ErrorCode::Io: return "I/O error";
  }
  return "unknown error";
}

std::string FaultInfo::describe() const {
  return "device fault at stream packet " + std::to_string(streamIndex) + " (" + disassembly +
         "): " + fault.describe();
}

namespace {

using mem::fmt::hex;

// The device heap: allocations come from these regions, in this order
// ('device' is the large heap a client such as the PyTorch bridge adds to
// the map). The first 4 KiB of the weights region stay unused so that no
// allocation is at address 0, which clients (PyTorch) treat as null.
constexpr const char *kHeapRegions[] = {"activations", "weights", "device"};
constexpr uint64_t kNullGuard = 4096;

// How long the worker polls for the next submission before it sleeps. A
// host issuing small ops submits every few microseconds; waking a sleeping
// worker costs the submitting thread a futex call and both a context
// switch, more than the op itself. Not on a single-core host, where polling
// would only take the submitter's time.
constexpr std::chrono::microseconds kWorkerPoll{50};

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

} // namespace

struct Runtime::Impl {
  std::unique_ptr<Backend> backend;
  std::vector<std::unique_ptr<mem::DeviceAllocator>> heaps;

  // Serialises all use of the backend (the worker's ring batches and the
  // host's copies).
  std::mutex deviceMutex;
  uint64_t ringBase = 0;
  uint32_t ringEntries = 0;
  uint32_t ringTail = 0;
  uint64_t streamIndexAtReset = 0; // stream index of the device's packet 0
  uint64_t droppedSinceReset = 0;  // stream packets never run because a HALT preceded them

  // Submission state, guarded by queueMutex.
  mutable std::mutex queueMutex;
  std::condition_variable workAvailable;
  std::condition_variable progress;
  std::deque<isa::Packet> queue;
  uint64_t submitted = 0; // packets accepted since creation
  uint64_t completed = 0; // packets executed or dropped after a fault
  bool workerBusy = false;
  bool workerSleeping = false; // waiting on workAvailable: a submission must notify it
  // `submitted`, readable without the lock: the worker polls it before sleeping.
  std::atomic<uint64_t> submittedPolled{0};
  const bool pollForWork = std::thread::hardware_concurrency() > 1;
  // Timed events by the packet count before them: the cycle counter there
  // once read, and how many live handles name the point. timedPending:
  // the points still ahead of the worker, ascending.
  struct TimedPoint {
    uint64_t cycles = 0;
    bool read = false;
    uint32_t handles = 0;
  };
  std::map<uint64_t, TimedPoint> timed;
  // Command queues: each one's packet count (of the whole stream) after its
  // last packet. Queue 0 is the default.
  std::map<uint32_t, uint64_t> queueEnds{{0, 0}};
  uint32_t lastQueue = 0;
  std::deque<uint64_t> timedPending;
  std::optional<FaultInfo> fault;
  // A failure of the backend itself, not of the stream (a simulated device
  // that breaks its bus protocol, ...): it stops the stream like a fault and
  // is rethrown to the host until a reset.
  std::exception_ptr backendFailure;
  bool stopping = false;
  std::thread worker;

  std::unique_ptr<TraceRecorder> capture; // guarded by captureMutex
  mutable std::mutex captureMutex;

  void programRing() {
    using namespace isa::csr;
    backend->writeCsr(CONTROL, CONTROL_RESET);
    backend->writeCsr(RING_BASE_LO, static_cast<uint32_t>(ringBase));
    backend->writeCsr(RING_BASE_HI, static_cast<uint32_t>(ringBase >> 32));
    backend->writeCsr(RING_ENTRIES, ringEntries);
    ringTail = 0;
  }

  // Executes a batch through the ring; returns the fault if one occurred.
  std::optional<FaultInfo> runBatch(const std::vector<isa::Packet> &batch, uint64_t batchStart) {
    using namespace isa::csr;
    std::lock_guard<std::mutex> lock(deviceMutex);
    const uint32_t tailAtStart = ringTail;
    for (size_t done = 0; done < batch.size();) {
      const uint32_t slot = ringTail & (ringEntries - 1);
      const size_t n = std::min<size_t>(batch.size() - done, ringEntries - slot);
      try {
        backend->writeMemory(ringBase + uint64_t(slot) * isa::kPacketBytes, batch[done].data(),
                             n * isa::kPacketBytes);
      } catch (const mem::DeviceFault &e) {
        // The ring itself is unreachable: a fault of the batch, not of a packet.
        return FaultInfo{e.fault(), batchStart, "(ring write)"};
      }
      ringTail += static_cast<uint32_t>(n);
      done += n;
      backend->writeCsr(RING_TAIL, ringTail);
      backend->waitIdle();
      const uint32_t status = backend->readCsr(STATUS);
      if (status & STATUS_FAULT)
        return readFault();
      if (status & STATUS_HALTED) {
        // HALT stops the stream: drop what followed it and resume.
        ringTail = backend->readCsr(RING_HEAD);
        backend->writeCsr(RING_TAIL, ringTail);
        backend->writeCsr(CONTROL, CONTROL_RESUME);
        droppedSinceReset += batch.size() - (ringTail - tailAtStart);
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  FaultInfo readFault() {
    FaultInfo info;
    info.fault = backend->deviceFault();
    const uint64_t devicePacket = static_cast<uint64_t>(info.fault.packetIndex);
    info.streamIndex = streamIndexAtReset + droppedSinceReset + devicePacket;
    isa::Packet packet;
    backend->readMemory(ringBase + (devicePacket & (ringEntries - 1)) * isa::kPacketBytes,
                        packet.data(), packet.size());
    info.disassembly = as::formatPacket(packet);
    return info;
  }

  void workerLoop() {
    std::vector<isa::Packet> batch;
    uint64_t batchStart = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(queueMutex);
        const auto workReady = [&] { return stopping || (!queue.empty() && !stopped()); };
        if (!workReady()) {
          if (pollForWork) {
            const uint64_t seen = submitted;
            lock.unlock();
            pollForSubmission(seen);
            lock.lock();
          }
          workerSleeping = true;
          workAvailable.wait(lock, workReady);
          workerSleeping = false;
        }
        if (stopping)
          return;
        size_t n = std::min<size_t>(queue.size(), ringEntries);
        // A batch ends at the next timed event, whose cycle count is read there.
        if (!timedPending.empty() && timedPending.front() > completed)
          n = std::min<size_t>(n, timedPending.front() - completed);
        batchStart = completed;
        batch.assign(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
        queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
        workerBusy = true;
      }
      std::optional<FaultInfo> batchFault;
      std::exception_ptr batchFailure;
      try {
        batchFault = runBatch(batch, batchStart);
      } catch (const std::exception &) {
        // A failure of the backend itself (a model's own memory refusing an
        // access it made, a broken bus protocol); leaving this thread would
        // terminate the process.
        batchFailure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(queueMutex);
      workerBusy = false;
      if (batchFault || batchFailure) {
        fault = batchFault;
        // Moved, not copied: this thread keeps no reference, so the host
        // thread that rethrows it is the one that frees it (libstdc++'s
        // reference count is invisible to ThreadSanitizer).
        backendFailure = std::move(batchFailure);
        completed = submitted; // everything queued is dropped
        queue.clear();
        timedPending.clear();
      } else {
        completed += batch.size();
        while (!timedPending.empty() && timedPending.front() <= completed) {
          if (auto it = timed.find(timedPending.front()); it != timed.end())
            it->second = {readCycles(), true, it->second.handles};
          timedPending.pop_front();
        }
      }
      progress.notify_all();
    }
  }

  // Returns when a submission after `seen` packets arrives or kWorkerPoll
  // has passed; the caller then checks under the lock.
  void pollForSubmission(uint64_t seen) const {
    const auto deadline = std::chrono::steady_clock::now() + kWorkerPoll;
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (submittedPolled.load(std::memory_order_relaxed) != seen)
          return;
        cpuRelax();
      }
      if (std::chrono::steady_clock::now() >= deadline)
        return;
      // Where the submitting thread waits for this core (more runnable
      // threads than cores), a pure spin would keep it off for the whole
      // poll: each op then costs the poll instead of a wake-up.
      std::this_thread::yield();
    }
  }

  // The packet count an event handle stands for; InvalidValue for a handle
  // recordEvent() never returned. Call with queueMutex held.
  uint64_t packetsBefore(uint64_t event) const {
    if (event == 0 || event - 1 > submitted)
      throw Error(ErrorCode::InvalidValue,
                  "event " + std::to_string(event) +
                      " was never recorded (events are handles returned by recordEvent; " +
                      std::to_string(submitted) + " packets submitted so far)");
    return event - 1;
  }

  void waitFor(uint64_t event) {
    std::unique_lock<std::mutex> lock(queueMutex);
    const uint64_t packets = packetsBefore(event);
    progress.wait(lock, [&] { return completed >= packets || stopped(); });
    throwIfStopped();
  }

  // Waits until the queue is empty or the stream faulted, without throwing:
  // for inspection that must work after a fault too.
  void drain() {
    std::unique_lock<std::mutex> lock(queueMutex);
    progress.wait(lock, [&] { return completed >= submitted || stopped(); });
    progress.wait(lock, [&] { return !workerBusy; });
  }

  // The device's cycle counter. Call with queueMutex held (the lock order
  // is queueMutex, then deviceMutex).
  uint64_t readCycles() {
    std::lock_guard<std::mutex> lock(deviceMutex);
    const uint64_t low = backend->readCsr(isa::csr::CYCLE_LO);
    return low | uint64_t(backend->readCsr(isa::csr::CYCLE_HI)) << 32;
  }

  // Call with queueMutex held.
  uint64_t &queueEnd(uint32_t queue) {
    const auto it = queueEnds.find(queue);
    if (it == queueEnds.end())
      throw Error(ErrorCode::InvalidValue,
                  "command queue " + std::to_string(queue) +
                      " does not exist (queues are 0 and the ids createQueue returned, until "
                      "destroyQueue)");
    return it->second;
  }

  // Call with queueMutex held.
  bool stopped() const { return fault || backendFailure; }
  void throwIfStopped() const {
    if (backendFailure)
      std::rethrow_exception(backendFailure);
    if (fault)
      throw Error(ErrorCode::DeviceFault, fault->describe());
  }

  // The live allocation holding [address, address+bytes), or an error.
  void requireAllocated(uint64_t address, uint64_t bytes, const char *what) {
    for (const auto &heap : heaps) {
      if (auto block = heap->findAllocation(address)) {
        if (bytes > block->address + block->size - address)
          throw Error(ErrorCode::InvalidValue,
                      std::string(what) + " of " + std::to_string(bytes) + " bytes at " +
                          hex(address) + " runs past its allocation [" + hex(block->address) +
                          ", +" + std::to_string(block->size) + ")");
        return;
      }
    }
    throw Error(ErrorCode::InvalidDevicePointer,
                std::string(what) + ": " + hex(address) + " is not inside a live allocation");
  }

  template <class F> auto withCapture(F f) {
    std::lock_guard<std::mutex> lock(captureMutex);
    if (capture)
      f(*capture);
  }
};

Runtime::Runtime(const RuntimeOptions &options) : impl_(std::make_unique<Impl>()) {
  std::string backendName = options.backend;
  if (backendName.empty()) {
    const char *env = std::getenv("NPU_BACKEND");
    backendName = env && *env ? env : "iss";
  }
  try {
    impl_->backend = createBackend(backendName, options.backendOptions);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::UnknownBackend, e.what());
  }
  const mem::AddressMap &map = options.backendOptions.addressMap;
  for (const char *name : kHeapRegions) {
    const mem::Region *region = map.byName(name);
    if (!region || region->kind != mem::Region::Kind::Memory)
      continue;
    const uint64_t guard = region->base == 0 ? kNullGuard : 0;
    impl_->heaps.push_back(
        std::make_unique<mem::DeviceAllocator>(region->base + guard, region->size - guard, 64));
  }
  if (impl_->heaps.empty())
    throw Error(ErrorCode::InvalidValue,
                "the address map has no heap region ('activations', 'weights' or 'device')");
  const mem::Region *ring = map.byName("ring");
  if (!ring || ring->size < 64 * 16)
    throw Error(ErrorCode::InvalidValue, "the address map needs a 'ring' region of >= 1 KiB");
  impl_->ringBase = ring->base;
  impl_->ringEntries = static_cast<uint32_t>(
      std::min<uint64_t>(isa::hw::kRingEntries, std::bit_floor(ring->size / isa::kPacketBytes)));
  impl_->programRing();
  impl_->worker = std::thread([this] { impl_->workerLoop(); });

  std::string tracePath = options.tracePath;
  if (tracePath.empty())
    if (const char *env = std::getenv("NPU_TRACE"); env && *env)
      tracePath = env;
  if (!tracePath.empty())
    beginCapture(tracePath);
}

Runtime::~Runtime() {
  try {
    if (capturing())
      endCapture();
  } catch (const std::exception &) {
    // A destructor cannot report; endCapture() called explicitly does.
  }
  {
    std::lock_guard<std::mutex> lock(impl_->queueMutex);
    impl_->stopping = true;
  }
  impl_->workAvailable.notify_all();
  impl_->worker.join();
}

std::string Runtime::backendName() const {
  return std::string(impl_->backend->name());
}

uint64_t Runtime::malloc(uint64_t bytes) {
  for (const auto &heap : impl_->heaps)
    if (auto address = heap->allocate(bytes))
      return *address;
  const MemoryStats stats = memoryStats();
  throw Error(ErrorCode::OutOfMemory,
              "out of device memory: cannot allocate " + std::to_string(bytes) + " bytes (" +
                  std::to_string(stats.allocatedBytes) + " of " +
                  std::to_string(stats.reservedBytes) + " allocated, largest free block " +
                  std::to_string(stats.largestFreeBlock) + ")");
}

void Runtime::free(uint64_t address) {
  synchronize();
  for (const auto &heap : impl_->heaps)
    if (heap->free(address) == mem::DeviceAllocator::FreeResult::Ok)
      return;
  throw Error(ErrorCode::InvalidDevicePointer,
              "free of " + hex(address) + ": not the start of a live allocation (double free?)");
}

void Runtime::memcpyHostToDevice(uint64_t dst, const void *src, uint64_t bytes) {
  impl_->requireAllocated(dst, bytes, "host-to-device copy");
  synchronize();
  {
    std::lock_guard<std::mutex> lock(impl_->deviceMutex);
    impl_->backend->writeMemory(dst, src, bytes);
  }
  impl_->withCapture([&](TraceRecorder &r) { r.hostWrite(dst, src, bytes); });
}

void Runtime::memcpyDeviceToHost(void *dst, uint64_t src, uint64_t bytes) {
  impl_->requireAllocated(src, bytes, "device-to-host copy");
  synchronize();
  {
    std::lock_guard<std::mutex> lock(impl_->deviceMutex);
    impl_->backend->readMemory(src, dst, bytes);
  }
  impl_->withCapture([&](TraceRecorder &r) { r.hostRead(src, bytes); });
}

void Runtime::memcpyDeviceToDevice(uint64_t dst, uint64_t src, uint64_t bytes) {
  impl_->requireAllocated(dst, bytes, "device-to-device copy destination");
  impl_->requireAllocated(src, bytes, "device-to-device copy source");
  submit(copyPackets(dst, src, bytes));
}

void Runtime::memset(uint64_t dst, uint8_t value, uint64_t bytes) {
  impl_->requireAllocated(dst, bytes, "memset");
  synchronize();
  {
    std::lock_guard<std::mutex> lock(impl_->deviceMutex);
    impl_->backend->fillMemory(dst, value, bytes);
  }
  impl_->withCapture([&](TraceRecorder &r) { r.hostFill(dst, value, bytes); });
}

void Runtime::submit(std::span<const isa::Packet> packets) {
  submit(0, packets);
}

void Runtime::submit(uint32_t queue, std::span<const isa::Packet> packets) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(impl_->queueMutex);
    uint64_t &end = impl_->queueEnd(queue);
    if (packets.empty())
      return;
    impl_->throwIfStopped();
    impl_->queue.insert(impl_->queue.end(), packets.begin(), packets.end());
    impl_->submitted += packets.size();
    impl_->submittedPolled.store(impl_->submitted, std::memory_order_relaxed);
    end = impl_->submitted;
    // Capture under the queue lock so the trace has the execution order.
    impl_->withCapture([&](TraceRecorder &r) { r.packets(packets); });
    wake = impl_->workerSleeping;
  }
  if (wake)
    impl_->workAvailable.notify_one();
}

// An event is the number of packets submitted before it plus one, so that 0
// (a zero-initialised handle) and values past the stream are never valid.
uint64_t Runtime::recordEvent() {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  return impl_->submitted + 1;
}

bool Runtime::eventDone(uint64_t event) {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  return impl_->completed >= impl_->packetsBefore(event);
}

void Runtime::waitEvent(uint64_t event) {
  impl_->waitFor(event);
}

uint64_t Runtime::recordTimedEvent() {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  impl_->throwIfStopped();
  const uint64_t packets = impl_->submitted;
  Impl::TimedPoint &point = impl_->timed[packets];
  ++point.handles;
  if (point.handles == 1) {
    // Nothing ahead of it: the device is idle at its time now.
    if (impl_->completed == packets && !impl_->workerBusy)
      point = {impl_->readCycles(), true, 1};
    else
      impl_->timedPending.push_back(packets);
  }
  return packets + 1;
}

uint64_t Runtime::eventCycles(uint64_t timedEvent) {
  impl_->waitFor(timedEvent);
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  const auto it = impl_->timed.find(impl_->packetsBefore(timedEvent));
  if (it == impl_->timed.end() || !it->second.read)
    throw Error(ErrorCode::InvalidValue,
                "event " + std::to_string(timedEvent) +
                    " has no device time: it was not recorded with recordTimedEvent, or was "
                    "released, or a reset() since has cleared it");
  return it->second.cycles;
}

void Runtime::releaseTimedEvent(uint64_t timedEvent) {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  const auto it = impl_->timed.find(impl_->packetsBefore(timedEvent));
  if (it != impl_->timed.end() && --it->second.handles == 0)
    impl_->timed.erase(it);
}

void Runtime::synchronize() {
  waitEvent(recordEvent());
}

uint32_t Runtime::createQueue() {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  if (impl_->lastQueue == UINT32_MAX)
    throw Error(ErrorCode::InvalidValue, "no command queue ids are left (2^32 - 1 created)");
  const uint32_t queue = ++impl_->lastQueue;
  impl_->queueEnds.emplace(queue, 0); // nothing of its own yet: its events are done
  return queue;
}

void Runtime::destroyQueue(uint32_t queue) {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  if (queue == 0)
    throw Error(ErrorCode::InvalidValue, "command queue 0 (the default) cannot be destroyed");
  impl_->queueEnd(queue);
  impl_->queueEnds.erase(queue);
}

uint64_t Runtime::recordEvent(uint32_t queue) {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  return impl_->queueEnd(queue) + 1;
}

void Runtime::queueWaitEvent(uint32_t queue, uint64_t event) {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  impl_->queueEnd(queue);
  impl_->packetsBefore(event);
}

void Runtime::synchronizeQueue(uint32_t queue) {
  waitEvent(recordEvent(queue));
}

std::optional<FaultInfo> Runtime::lastFault() const {
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  return impl_->fault;
}

void Runtime::reset() {
  std::unique_lock<std::mutex> lock(impl_->queueMutex);
  impl_->progress.wait(lock, [&] { return !impl_->workerBusy; });
  impl_->queue.clear();
  impl_->completed = impl_->submitted;
  {
    std::lock_guard<std::mutex> device(impl_->deviceMutex);
    impl_->programRing();
    impl_->streamIndexAtReset = impl_->submitted;
    impl_->droppedSinceReset = 0;
  }
  impl_->fault.reset();
  impl_->backendFailure = nullptr;
  // The cycle counter restarted: times recorded before cannot be compared
  // with later ones.
  impl_->timedPending.clear();
  impl_->timed.clear();
}

void Runtime::writePhysical(uint64_t address, const void *src, uint64_t bytes) {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  impl_->backend->writeMemory(address, src, bytes);
}

void Runtime::readPhysical(uint64_t address, void *dst, uint64_t bytes) {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  impl_->backend->readMemory(address, dst, bytes);
}

void Runtime::setRecording(bool enabled) {
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  impl_->backend->setRecording(enabled);
}

sim::Stats Runtime::deviceStats() {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  return impl_->backend->stats();
}

std::string Runtime::backendSummary() {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  return impl_->backend->summary();
}

std::vector<sim::PacketRecord> Runtime::takeRecords() {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  return impl_->backend->takeRecords();
}

MemoryStats Runtime::memoryStats() const {
  MemoryStats total;
  for (const auto &heap : impl_->heaps) {
    const mem::DeviceAllocator::Stats s = heap->stats();
    total.allocatedBytes += s.allocatedBytes;
    total.peakAllocatedBytes += s.peakAllocatedBytes;
    total.reservedBytes += s.capacity;
    total.largestFreeBlock = std::max(total.largestFreeBlock, s.largestFreeBlock);
    total.liveAllocations += s.liveAllocations;
    total.totalAllocations += s.totalAllocations;
    total.totalFrees += s.totalFrees;
    total.failedAllocations += s.failedAllocations;
  }
  return total;
}

void Runtime::resetPeakMemoryStats() {
  for (const auto &heap : impl_->heaps)
    heap->resetPeak();
}

std::vector<mem::PhysicalMemory::RegionStats> Runtime::regionStats() const {
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  return impl_->backend->memoryStats();
}

void Runtime::resetRegionCounters() {
  impl_->drain();
  std::lock_guard<std::mutex> lock(impl_->deviceMutex);
  impl_->backend->resetMemoryCounters();
}

uint64_t Runtime::deviceCycles() {
  synchronize();
  std::lock_guard<std::mutex> lock(impl_->queueMutex);
  return impl_->readCycles();
}

void Runtime::beginCapture(const std::string &path) {
  synchronize();
  std::unique_ptr<TraceRecorder> recorder;
  {
    std::lock_guard<std::mutex> device(impl_->deviceMutex);
    std::vector<mem::PhysicalMemory::RegionStats> regions = impl_->backend->memoryStats();
    const auto staging = std::find_if(regions.begin(), regions.end(),
                                      [](const auto &r) { return r.name == "staging"; });
    if (staging == regions.end())
      throw Error(ErrorCode::InvalidValue,
                  "trace capture needs a 'staging' memory region in the address map");
    recorder = std::make_unique<TraceRecorder>(path, staging->base, staging->size);
    // Whatever live allocations hold now is the trace's initial state.
    for (const auto &heap : impl_->heaps)
      for (const mem::DeviceAllocator::Block &block : heap->liveAllocations()) {
        std::vector<uint8_t> bytes(block.size);
        impl_->backend->readMemory(block.address, bytes.data(), bytes.size());
        if (std::any_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b != 0; }))
          recorder->addInitialData(block.address, std::move(bytes));
      }
  }
  std::lock_guard<std::mutex> lock(impl_->captureMutex);
  if (impl_->capture)
    throw Error(ErrorCode::InvalidValue,
                "a capture to " + impl_->capture->path() + " is already running");
  impl_->capture = std::move(recorder);
}

void Runtime::endCapture() {
  synchronize();
  std::unique_ptr<TraceRecorder> recorder;
  {
    std::lock_guard<std::mutex> lock(impl_->captureMutex);
    recorder = std::move(impl_->capture);
  }
  if (!recorder)
    throw Error(ErrorCode::InvalidValue, "no capture is running");
  std::lock_guard<std::mutex> device(impl_->deviceMutex);
  recorder->finish(*impl_->backend);
}

bool Runtime::capturing() const {
  std::lock_guard<std::mutex> lock(impl_->captureMutex);
  return impl_->capture != nullptr;
}

} // namespace npu::rt
