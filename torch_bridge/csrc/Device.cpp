#include "Device.h"

#include "Allocator.h"
#include "GraphCapture.h"

#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>

#include "npu/mem/address_map.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <unistd.h>

namespace npu::bridge {

namespace {

int envLevel(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? std::atoi(value) : 0;
}

std::atomic<int> g_debugLevel{envLevel("NPU_DEBUG")};
std::atomic<bool> g_strict{envLevel("NPU_STRICT") != 0};
std::atomic<bool> g_hostRandom{[] {
  const char *value = std::getenv("NPU_RNG");
  return value && std::string_view(value) == "host";
}()};

std::mutex g_runtimeMutex;
// Never destroyed: tensors may outlive static destruction at interpreter exit
// and hand their blocks back to it.
std::atomic<rt::Runtime *> g_runtime{nullptr};

std::atomic<uint64_t> g_packetCount{0};
std::atomic<uint64_t> g_submissionCount{0};

std::mutex g_statsMutex;
std::vector<OpCounter *> &opCounters() {
  static std::vector<OpCounter *> counters;
  return counters;
}
std::map<std::string, uint64_t> g_fallbacks;
std::map<std::string, uint64_t> g_widened;

std::atomic<bool> g_profiling{false};
std::mutex g_profileMutex;
std::vector<SubmittedBatch> g_profiledBatches;
thread_local std::vector<uint64_t> t_profileCorrelations;

struct ThreadState {
  std::vector<isa::Packet> pending;
  c10::StreamId stream = 0;        // the current npu stream's id (Guard.cpp)
  c10::StreamId pendingStream = 0; // the stream `pending` was built on
  uint64_t flushed = 0;           // packets submitted by this thread
  int depth = 0;                  // OpScope nesting
  uint64_t attributedInScope = 0; // packets counted by nested scopes
  bool deviceWorkOnly = false;    // the running flush() is followed by no host access
};
thread_local ThreadState t_state;

// Device memory for real models: besides the default map's 256 MiB
// 'activations' and 'weights' heaps, a 'device' heap region at 8 GiB of
// NPU_MEMORY_SIZE bytes (default 8G, which holds a 0.5B-parameter float32
// model with its gradients and activations). The backends reserve it
// sparsely: pages cost host memory only once written.
constexpr const char *kDefaultMemorySize = "8G";
constexpr const char *kDeviceHeapBase = "0x2_0000_0000";

mem::AddressMap deviceAddressMap() {
  mem::AddressMap map = mem::AddressMap::defaults();
  const std::string size = deviceMemorySize();
  try {
    map.applyOverride(std::string("device=") + kDeviceHeapBase + ":" + size);
    map.validate();
  } catch (const std::invalid_argument &e) {
    throw rt::Error(rt::ErrorCode::InvalidValue,
                    "NPU_MEMORY_SIZE='" + size + "' is not a usable device memory size (" +
                        e.what() + "); give bytes with an optional K, M or G suffix, e.g. 8G");
  }
  return map;
}

rt::Runtime *createRuntime(const std::string &backend) {
  rt::RuntimeOptions options;
  options.backend = backend;
  options.backendOptions.addressMap = deviceAddressMap();
  return new rt::Runtime(options);
}

} // namespace

std::string deviceMemorySize() {
  const char *env = std::getenv("NPU_MEMORY_SIZE");
  return env && *env ? env : kDefaultMemorySize;
}

rt::Runtime &runtime() {
  if (rt::Runtime *r = g_runtime.load(std::memory_order_acquire))
    return *r;
  std::lock_guard<std::mutex> lock(g_runtimeMutex);
  if (!g_runtime.load()) {
    try {
      g_runtime.store(createRuntime(""), std::memory_order_release);
    } catch (const rt::Error &e) {
      TORCH_CHECK(false, "cannot start the NPU runtime: ", e.what());
    }
  }
  return *g_runtime.load();
}

rt::Runtime *startedRuntime() {
  return g_runtime.load(std::memory_order_acquire);
}

std::string backendName() {
  return runtime().backendName();
}

void setBackend(const std::string &name) {
  flush();
  rt::Runtime &current = runtime();
  const DeviceAllocator::Stats stats = allocator().stats();
  if (stats.liveBlocks.current > 0 && current.backendName() == name)
    return; // already there; a fresh device would need the tensors gone
  TORCH_CHECK(stats.liveBlocks.current == 0, "cannot switch the NPU backend to '", name,
              "': ", stats.liveBlocks.current, " tensor allocation(s) (",
              stats.allocatedBytes.current, " bytes) are still live on the '",
              current.backendName(), "' device; free them (del, gc.collect()) first");
  TORCH_CHECK(!current.capturing(), "cannot switch the NPU backend during a trace capture");
  std::unique_ptr<rt::Runtime> replacement;
  try {
    replacement.reset(createRuntime(name));
  } catch (const rt::Error &e) {
    TORCH_CHECK(false, e.what());
  }
  std::lock_guard<std::mutex> lock(g_runtimeMutex);
  allocator().releaseCache();
  delete g_runtime.exchange(replacement.release(), std::memory_order_acq_rel);
}

std::vector<isa::Packet> &pendingPackets() {
  // A flush submits to one queue: packets of another stream go after it.
  if (t_state.pendingStream != t_state.stream) {
    flush();
    // A stream no queue has is refused here, in the op that builds the
    // packets, rather than at a submission after it.
    const uint32_t queue = queueOf(t_state.stream);
    deviceCall([&] { runtime().recordEvent(queue); });
    t_state.pendingStream = t_state.stream;
  }
  return t_state.pending;
}

bool hasPendingPackets() noexcept {
  return !t_state.pending.empty();
}

size_t pendingPacketCount() noexcept {
  return t_state.pending.size();
}

c10::StreamId currentStreamId() noexcept {
  return t_state.stream;
}

void setCurrentStreamId(c10::StreamId stream) noexcept {
  t_state.stream = stream;
}

uint32_t queueOf(c10::StreamId stream) {
  TORCH_CHECK(stream >= 0 && stream <= std::numeric_limits<uint32_t>::max(), "npu stream id ",
              stream, " names no command queue (npu streams are 0, the default, and those "
              "torch.npu.Stream() creates)");
  return static_cast<uint32_t>(stream);
}

void raise(const rt::Error &error) {
  if (error.code() == rt::ErrorCode::DeviceFault) {
    runtime().reset();
    TORCH_CHECK(false, "NPU: ", error.what(),
                ". The device was reset; tensors written by the packets queued since the last "
                "synchronisation hold undefined values.");
  }
  TORCH_CHECK(false, "NPU: ", error.what());
}

void flush() {
  std::vector<isa::Packet> &pending = t_state.pending;
  noteFlush(pending, !t_state.deviceWorkOnly);
  if (pending.empty())
    return;
  uint32_t queue = 0;
  try {
    queue = queueOf(t_state.pendingStream);
  } catch (const c10::Error &) {
    pending.clear(); // never submitted: the error says so
    throw;
  }
  g_packetCount.fetch_add(pending.size(), std::memory_order_relaxed);
  g_submissionCount.fetch_add(1, std::memory_order_relaxed);
  t_state.flushed += pending.size();
  try {
    // While a profile records, batches are noted and submitted under one
    // lock, so they are in the order the device runs them.
    std::unique_lock<std::mutex> profiled(g_profileMutex, std::defer_lock);
    if (g_profiling.load(std::memory_order_acquire)) {
      profiled.lock();
      g_profiledBatches.push_back(
          {c10::getTime(), pending.size(),
           t_profileCorrelations.empty() ? 0 : t_profileCorrelations.back(),
           t_state.pendingStream});
    }
    runtime().submit(queue, pending);
  } catch (const rt::Error &e) {
    pending.clear();
    allocator().releaseDeferred();
    raise(e);
  }
  if (debugLevel() >= 3)
    logLine("NPU", "  submitted " + std::to_string(pending.size()) + " packet(s)");
  pending.clear();
  allocator().releaseDeferred();
}

void flushDeviceWork() {
  t_state.deviceWorkOnly = true;
  try {
    flush();
  } catch (...) {
    t_state.deviceWorkOnly = false;
    throw;
  }
  t_state.deviceWorkOnly = false;
}

void synchronize() {
  flush();
  deviceCall([] { runtime().synchronize(); });
}

void beginDeviceProfile() {
  synchronize();
  std::lock_guard<std::mutex> lock(g_profileMutex);
  deviceCall([] {
    runtime().setRecording(true);
    runtime().takeRecords(); // what ran before the profile
  });
  g_profiledBatches.clear();
  g_profiling.store(true, std::memory_order_release);
}

void pushProfileCorrelation(uint64_t id) {
  t_profileCorrelations.push_back(id);
}

void popProfileCorrelation() {
  if (!t_profileCorrelations.empty())
    t_profileCorrelations.pop_back();
}

DeviceProfile endDeviceProfile() {
  synchronize();
  std::lock_guard<std::mutex> lock(g_profileMutex);
  g_profiling.store(false, std::memory_order_release);
  DeviceProfile profile;
  profile.batches.swap(g_profiledBatches);
  deviceCall([&] {
    profile.records = runtime().takeRecords();
    runtime().setRecording(false);
  });
  return profile;
}

OpCounter::OpCounter(const char *name) : name(name) {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  opCounters().push_back(this);
}

OpScope::OpScope(OpCounter &counter)
    : counter_(counter), firstPacket_(t_state.flushed + t_state.pending.size()),
      nestedPackets_(t_state.attributedInScope), uncaught_(std::uncaught_exceptions()) {
  ++t_state.depth;
  counter_.calls.fetch_add(1, std::memory_order_relaxed);
}

OpScope::~OpScope() {
  ThreadState &state = t_state;
  --state.depth;
  if (std::uncaught_exceptions() > uncaught_) {
    // The op failed half-way: what it built and did not submit yet must not run.
    state.pending.resize(firstPacket_ > state.flushed ? firstPacket_ - state.flushed : 0);
    return;
  }
  const uint64_t built = state.flushed + state.pending.size() - firstPacket_;
  const uint64_t nested = state.attributedInScope - nestedPackets_;
  const uint64_t own = built - nested;
  counter_.packets.fetch_add(own, std::memory_order_relaxed);
  state.attributedInScope += own;
  if (own > 0 && logOps()) // a scope that built no packets ran nothing on the NPU
    logLine("NPU", std::string(counter_.name) + (description_.empty() ? "" : " ") + description_ +
                       " (" + std::to_string(own) + (own == 1 ? " packet)" : " packets)"));
  if (state.depth == 0) {
    state.attributedInScope = 0;
    try {
      flushDeviceWork();
    } catch (const c10::Error &e) {
      // A destructor must not throw: report the failed submission here; the
      // device was reset by raise().
      logLine("NPU", std::string("submit failed: ") + e.what_without_backtrace());
    }
  }
}

bool logOps() {
  return g_debugLevel.load(std::memory_order_relaxed) >= 1;
}

uint64_t packetCount() {
  return g_packetCount.load(std::memory_order_relaxed);
}

uint64_t submissionCount() {
  return g_submissionCount.load(std::memory_order_relaxed);
}

std::map<std::string, std::pair<uint64_t, uint64_t>> nativeOpStats() {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  std::map<std::string, std::pair<uint64_t, uint64_t>> result;
  for (const OpCounter *c : opCounters()) {
    auto &entry = result[c->name];
    entry.first += c->calls.load();
    entry.second += c->packets.load();
  }
  return result;
}

namespace {
// Filled by the op files' static registrations, before any other use.
std::map<std::string, std::string> &instructionOpTable() {
  static std::map<std::string, std::string> table;
  return table;
}
} // namespace

void recordInstructionOp(const std::string &op, const char *mnemonic) {
  instructionOpTable()[op] = mnemonic;
}

std::map<std::string, std::string> instructionOps() {
  return instructionOpTable();
}

std::map<std::string, uint64_t> fallbackStats() {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  return g_fallbacks;
}

void countFallback(const std::string &op) {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  ++g_fallbacks[op];
}

std::map<std::string, uint64_t> widenedStats() {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  return g_widened;
}

void countWidened(const std::string &op) {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  ++g_widened[op];
}

void resetStats() {
  std::lock_guard<std::mutex> lock(g_statsMutex);
  for (OpCounter *c : opCounters()) {
    c->calls = 0;
    c->packets = 0;
  }
  g_fallbacks.clear();
  g_widened.clear();
}

int debugLevel() {
  return g_debugLevel.load(std::memory_order_relaxed);
}
void setDebugLevel(int level) {
  g_debugLevel = level;
}
bool strictMode() {
  return g_strict.load(std::memory_order_relaxed);
}
void setStrictMode(bool strict) {
  g_strict = strict;
}
bool hostRandom() {
  return g_hostRandom.load(std::memory_order_relaxed);
}
void setHostRandom(bool host) {
  g_hostRandom = host;
}

void logLine(std::string_view tag, std::string_view text) {
  // The seed's colours: native green, fallback red, copies blue, views grey.
  static const bool colour = isatty(STDERR_FILENO) != 0;
  const char *code = tag == "NPU" ? "32" : tag == "CPU" ? "31" : tag == "COPY" ? "34" : "90";
  if (colour)
    std::fprintf(stderr, "\033[%sm[%.*s]\033[0m %.*s\n", code, static_cast<int>(tag.size()),
                 tag.data(), static_cast<int>(text.size()), text.data());
  else
    std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(tag.size()), tag.data(),
                 static_cast<int>(text.size()), text.data());
}

} // namespace npu::bridge
