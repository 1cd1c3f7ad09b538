// The one NPU as the bridge sees it: the runtime behind it (re-created when
// the backend changes), the packets the current op is building, statistics
// and the NPU_DEBUG log.
//
// Every native op runs inside an OpScope. Packets that an op and its helpers
// build collect in a per-thread buffer; the outermost scope submits them as
// one batch when it ends, and nothing waits for the device to run them.
// Anything that touches device memory from the host (copies, allocation
// hand-back) calls flush() first, so the stream order is the program order.
#pragma once

#include "npu/isa/isa.h"
#include "npu/rt/runtime.h"

#include <c10/core/Stream.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace npu::bridge {

// --- The runtime ------------------------------------------------------------

rt::Runtime &runtime();
// The runtime if the device was used, else nullptr (starts nothing).
rt::Runtime *startedRuntime();
// The size of the device heap region the bridge adds to the address map:
// $NPU_MEMORY_SIZE, or its default (8G).
std::string deviceMemorySize();
std::string backendName();
// Re-creates the runtime (a fresh device) on the named backend. Fails with a
// clear message when tensors are still live on the device (their addresses
// would dangle), unless it is the current backend: then nothing changes.
void setBackend(const std::string &name);
// Throws a runtime error as a PyTorch error. A device fault is sticky in
// the runtime; this resets the device (keeping its memory) first, so that
// it stays usable after the error is reported.
[[noreturn]] void raise(const rt::Error &error);

// Runs a runtime call, translating its errors with raise().
template <class F> decltype(auto) deviceCall(F &&call) {
  try {
    return call();
  } catch (const rt::Error &e) {
    raise(e);
  }
}

// Submits the calling thread's pending packets, to the command queue of
// the stream they were built on.
void flush();
// flush() and wait until the device has run everything submitted.
void synchronize();

// --- Packet building ----------------------------------------------------------

// Packets built since the last flush on this thread, all on its current
// stream (the packets of another stream are flushed first).
std::vector<isa::Packet> &pendingPackets();
// Whether this thread has built packets it has not submitted yet.
bool hasPendingPackets() noexcept;
size_t pendingPacketCount() noexcept;

// The calling thread's current npu stream (Guard.cpp). A stream id is the
// id of the runtime command queue its packets go to (docs/pytorch.md,
// "Streams and events").
c10::StreamId currentStreamId() noexcept;
void setCurrentStreamId(c10::StreamId stream) noexcept;
// The command queue of `stream`: an error for an id no queue can have.
uint32_t queueOf(c10::StreamId stream);

template <class Inst> void emit(const Inst &inst) {
  inst.toPacket(pendingPackets().emplace_back().data());
}

// Counters of one native op, registered once per op (a function-local static
// in the kernel) and readable from Python.
struct OpCounter {
  explicit OpCounter(const char *name);
  const char *name;
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> packets{0};
};

// Brackets one native op: counts it, logs it at NPU_DEBUG>=1 and submits the
// packets built inside it when the outermost scope ends normally.
class OpScope {
public:
  explicit OpScope(OpCounter &counter);
  ~OpScope();
  OpScope(const OpScope &) = delete;
  OpScope &operator=(const OpScope &) = delete;
  // Text appended to the [NPU] log line (shapes); only built when logging.
  void describe(std::string text) { description_ = std::move(text); }

private:
  OpCounter &counter_;
  uint64_t firstPacket_; // index among the packets this thread built
  uint64_t nestedPackets_;
  int uncaught_;
  std::string description_;
};

// Whether the [NPU] lines are printed: callers skip building descriptions.
bool logOps();

// --- Statistics ---------------------------------------------------------------

uint64_t packetCount();     // packets submitted through the bridge since start
uint64_t submissionCount(); // runtime submissions (batches of packets) since start
std::map<std::string, std::pair<uint64_t, uint64_t>> nativeOpStats(); // op -> (calls, packets)

// The ATen ops that one instruction computes, as their registration lines
// (NPU_UNARY, NPU_BINARY..., NPU_POINTWISE_GRAD) name them: the registered
// op ("erf.out") -> the instruction's mnemonic. docs/pytorch.md's table of
// them is derived from this (tests/python/torch/native_op_table.py).
void recordInstructionOp(const std::string &op, const char *mnemonic);
std::map<std::string, std::string> instructionOps();
std::map<std::string, uint64_t> fallbackStats();
void countFallback(const std::string &op);
// Ops computed on binary32 copies of bf16/f16 operands (Widening.cpp).
std::map<std::string, uint64_t> widenedStats();
void countWidened(const std::string &op);
void resetStats();

// --- Device profiling (torch.profiler, Profiler.cpp) -----------------------------

// One flush while a profile records: when the host handed the packets to the
// runtime (c10::getTime(), ns) and how many.
struct SubmittedBatch {
  int64_t hostNs = 0;
  uint64_t packets = 0;
  uint64_t correlation = 0; // the profiler's id of the op that submitted it; 0: none
  c10::StreamId stream = 0;
};
struct DeviceProfile {
  std::vector<SubmittedBatch> batches;
  std::vector<sim::PacketRecord> records; // every packet run while recording
};
// Waits for the device, then records every packet it runs until
// endDeviceProfile, which waits again and returns them.
void beginDeviceProfile();
DeviceProfile endDeviceProfile();
// The profiler's correlation ids of the ops running on this thread (Kineto
// pushes one as an op starts): a batch belongs to the innermost.
void pushProfileCorrelation(uint64_t id);
void popProfileCorrelation();

// --- Debug log (NPU_DEBUG) ------------------------------------------------------

// 0 off, 1 ops ([NPU] native, [CPU] fallback), 2 + copies ([COPY]),
// 3 + views ([VIEW]) and runtime detail.
int debugLevel();
void setDebugLevel(int level);
void logLine(std::string_view tag, std::string_view text);
bool strictMode(); // NPU_STRICT=1: a CPU fallback is an error
void setStrictMode(bool strict);
// NPU_RNG=host: random fills and dropout drawn on the host with the CPU's
// generator (equal to the CPU's for a seed) instead of by RAND/RANDN.
bool hostRandom();
void setHostRandom(bool host);

} // namespace npu::bridge
