// libnpu_rt: the one door to the device for every client (npu-sim, the
// PyTorch bridge, tests). It owns the device allocator and the command
// ring, feeds submitted packets to the backend on a worker thread, and can
// capture everything it does into a self-contained .npubin.
//
// Thread safety: every member function may be called from any thread.
// Packets submitted by one thread execute in submission order; packets from
// different threads interleave in the order their submit() calls took the
// queue lock. memcpy/memset/free wait for all previously submitted packets
// (like a synchronous CUDA copy on the default stream).
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/rt/backend.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace npu::rt {

enum class ErrorCode : int {
  Success = 0,
  InvalidValue = 1,
  OutOfMemory = 2,
  NotInitialized = 3,
  InvalidDevicePointer = 4,
  DeviceFault = 5,
  UnknownBackend = 6,
  Io = 7,
};
const char *errorCodeName(ErrorCode code);

// A failed runtime call: its code and a message naming what and why.
class Error : public std::runtime_error {
public:
  Error(ErrorCode code, const std::string &message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

private:
  ErrorCode code_;
};

// The first fault of the stream since the last reset.
struct FaultInfo {
  mem::Fault fault;
  uint64_t streamIndex = 0; // index of the packet among all packets submitted
  std::string disassembly;
  std::string describe() const;
};

struct MemoryStats {
  uint64_t allocatedBytes = 0;
  uint64_t peakAllocatedBytes = 0;
  uint64_t reservedBytes = 0; // capacity of the device heap
  uint64_t largestFreeBlock = 0;
  uint64_t liveAllocations = 0;
  uint64_t totalAllocations = 0;
  uint64_t totalFrees = 0;
  uint64_t failedAllocations = 0;
};

struct RuntimeOptions {
  // Backend name; empty means $NPU_BACKEND, or "iss" if that is unset.
  std::string backend;
  BackendOptions backendOptions;
  // Capture to this .npubin from the start; empty means $NPU_TRACE (if set).
  std::string tracePath;
};

class Runtime {
public:
  explicit Runtime(const RuntimeOptions &options = {});
  ~Runtime(); // finishes a capture started from the options or $NPU_TRACE
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  std::string backendName() const;

  uint64_t malloc(uint64_t bytes); // Error(OutOfMemory) when no block fits
  void free(uint64_t address);     // Error(InvalidDevicePointer) for a non-allocation
  void memcpyHostToDevice(uint64_t dst, const void *src, uint64_t bytes);
  void memcpyDeviceToHost(void *dst, uint64_t src, uint64_t bytes);
  void memcpyDeviceToDevice(uint64_t dst, uint64_t src, uint64_t bytes); // queued on the device
  void memset(uint64_t dst, uint8_t value, uint64_t bytes);

  // Queues packets for asynchronous execution; throws the pending fault, if any.
  // A failure of the backend itself while it ran packets (not a fault of
  // the stream: e.g. the RTL backend's AxiProtocolError) stops the stream
  // like a fault; submit and waitEvent rethrow that exception, as it is,
  // until reset().
  void submit(std::span<const isa::Packet> packets);
  // A point in the stream: all packets submitted so far. The handle is never
  // 0; eventDone and waitEvent throw Error(InvalidValue) for a value that
  // recordEvent did not return (it would otherwise wait forever).
  uint64_t recordEvent();
  bool eventDone(uint64_t event);
  void waitEvent(uint64_t event); // throws Error(DeviceFault) if the stream faulted
  // An event whose device time is kept: the device's cycle counter once
  // every packet before it has run (the worker ends a ring batch there).
  // eventCycles waits for it; Error(InvalidValue) for an event at a point
  // no timed event holds (recordEvent's alone, released, or lost to a reset()).
  uint64_t recordTimedEvent();
  uint64_t eventCycles(uint64_t timedEvent);
  void releaseTimedEvent(uint64_t timedEvent); // its handle is gone: the time is not kept
  void synchronize();                          // waitEvent(recordEvent())

  // Command queues (docs/runtime.md, "Command queues"). Queue 0 always
  // exists; createQueue adds another (ids never reused). The device has one
  // command processor, which runs the packets of every queue in the order
  // they were submitted: one valid schedule of queues that are ordered
  // only within themselves and by waits, since an event is recorded before
  // anything waits on it. submit, recordEvent and synchronize without a
  // queue act on the whole device; a queue's event is the point after its
  // own last packet, so querying or synchronising a queue does not wait for
  // packets other queues submitted later. An unknown queue is
  // Error(InvalidValue).
  uint32_t createQueue();
  void destroyQueue(uint32_t queue); // not queue 0; its recorded events stay valid
  void submit(uint32_t queue, std::span<const isa::Packet> packets);
  uint64_t recordEvent(uint32_t queue);
  // Later packets of `queue` run after every packet before `event`: a
  // device-side wait, which this device's submission-order schedule
  // always meets; checks the handle like waitEvent.
  void queueWaitEvent(uint32_t queue, uint64_t event);
  void synchronizeQueue(uint32_t queue); // waitEvent(recordEvent(queue))

  // The pending fault, if the stream faulted since the last reset.
  std::optional<FaultInfo> lastFault() const;
  // Clears a fault or a backend failure: drops queued packets, resets the
  // device, keeps memory.
  void reset();

  // Loader access to any physical address, bypassing the allocator, for
  // tools that place code and data themselves. Waits for queued packets.
  void writePhysical(uint64_t address, const void *src, uint64_t bytes);
  void readPhysical(uint64_t address, void *dst, uint64_t bytes);

  // Device profiling since the last reset (see Backend).
  void setRecording(bool enabled);
  sim::Stats deviceStats();
  std::vector<sim::PacketRecord> takeRecords();

  MemoryStats memoryStats() const;
  void resetPeakMemoryStats();
  std::vector<mem::PhysicalMemory::RegionStats> regionStats() const;
  void resetRegionCounters();
  uint64_t deviceCycles();      // the device's cycle counter since its last reset
  std::string backendSummary(); // Backend::summary(), after queued packets ran

  // Records every packet and the host data it depends on; endCapture writes
  // the .npubin (data segments, text, final contents of read-back ranges as
  // check regions).
  void beginCapture(const std::string &path);
  void endCapture();
  bool capturing() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace npu::rt
