// torch.profiler's device activity: with ProfilerActivity.PrivateUse1, every
// packet the device ran during the profile is a kernel event on the npu's
// rows (one per engine) of the trace that export_chrome_trace writes, next
// to the CPU ops, and counts as device time in key_averages().
//
// Placing device time on the host's clock: a packet's start and length are
// its device cycles at the clock of isa/hardware.td; each submitted batch
// starts when the host submitted it or when the device finished the batch
// before, whichever is later — the device model runs on its own time, the
// host only decides when work arrives.
#include "Device.h"

#include "npu/isa/isa.h"

#include <c10/util/ApproximateClock.h>
#include <libkineto.h>
#include <output_base.h>
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace npu::bridge {

namespace {

constexpr int32_t kDeviceIndex = 0;

double nanosecondsPerCycle() {
  return 1000.0 / isa::hw::kClockMegahertz;
}

class DeviceProfilerSession : public libkineto::IActivityProfilerSession {
public:
  void start() override {
    beginDeviceProfile();
    startNs_ = c10::getTime();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    DeviceProfile profile = endDeviceProfile();
    endNs_ = c10::getTime();
    span_ = libkineto::TraceSpan(startNs_, endNs_, "npu");
    buffer_.span = span_;
    placeOnHostClock(profile);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return errors_; }

  // Kineto asks the session to log its activities (handleGenericActivity:
  // the logger keeps copies, this session does not outlive the profile),
  // each linked to the CPU op that submitted it; the trace buffer handed
  // over afterwards only carries the span.
  void processTrace(libkineto::ActivityLogger &logger) override {
    processTrace(
        logger, [](int32_t) { return nullptr; }, 0, 0);
  }

  void processTrace(libkineto::ActivityLogger &logger,
                    libkineto::getLinkedActivityCallback linkedActivity, int64_t,
                    int64_t) override {
    for (const std::unique_ptr<libkineto::GenericTraceActivity> &activity : activities_) {
      if (activity->id != 0) {
        activity->linked = linkedActivity(activity->id);
        activity->flow.id = activity->id;
        activity->flow.type = libkineto::kLinkAsyncCpuGpu;
        activity->flow.start = false;
      }
      logger.handleGenericActivity(*activity);
    }
  }

  void pushCorrelationId(uint64_t id) override { pushProfileCorrelation(id); }
  void popCorrelationId() override { popProfileCorrelation(); }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{kDeviceIndex, kDeviceIndex, "npu", "npu:0"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> engines;
    for (size_t e = 0; e < sim::kNumEngines; ++e)
      engines.push_back({static_cast<int64_t>(e), static_cast<int64_t>(e), kDeviceIndex,
                         std::string(isa::engineName(static_cast<isa::Engine>(e))) + " engine"});
    return engines;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::make_unique<libkineto::CpuTraceBuffer>(std::move(buffer_));
  }

private:
  void placeOnHostClock(const DeviceProfile &profile) {
    uint64_t counted = 0;
    for (const SubmittedBatch &batch : profile.batches)
      counted += batch.packets;
    if (counted != profile.records.size()) {
      // Packets ran that the bridge did not submit (another user of the
      // runtime): their host times are unknown.
      errors_.push_back("npu: " + std::to_string(profile.records.size()) +
                        " packets ran during the profile but the bridge submitted " +
                        std::to_string(counted) + "; device activity left out");
      return;
    }
    const double perCycle = nanosecondsPerCycle();
    size_t next = 0;
    double deviceFreeNs = 0;
    for (const SubmittedBatch &batch : profile.batches) {
      if (batch.packets == 0)
        continue;
      const uint64_t firstCycle = profile.records[next].startCycle;
      const double batchStartNs = std::max(static_cast<double>(batch.hostNs), deviceFreeNs);
      for (uint64_t i = 0; i < batch.packets; ++i, ++next) {
        const sim::PacketRecord &record = profile.records[next];
        auto activity = std::make_unique<libkineto::GenericTraceActivity>(
            span_, libkineto::ActivityType::CONCURRENT_KERNEL, isa::info(record.opcode).mnemonic);
        const double startNs = batchStartNs + (record.startCycle - firstCycle) * perCycle;
        const double endNs = batchStartNs + (record.endCycle - firstCycle) * perCycle;
        activity->startTime = static_cast<int64_t>(startNs);
        activity->endTime = std::max(static_cast<int64_t>(endNs), activity->startTime + 1);
        activity->device = kDeviceIndex;
        activity->resource = static_cast<int32_t>(record.engine);
        activity->id = static_cast<int32_t>(batch.correlation);
        activity->addMetadata("packet", record.index);
        activity->addMetadata("cycles", record.endCycle - record.startCycle);
        activity->addMetadata("bytes read", record.bytesRead);
        activity->addMetadata("bytes written", record.bytesWritten);
        activity->addMetadataQuoted("engine", isa::engineName(record.engine));
        activity->addMetadata("stream", batch.stream);
        deviceFreeNs = std::max(deviceFreeNs, endNs);
        activities_.push_back(std::move(activity));
      }
    }
  }

  int64_t startNs_ = 0;
  int64_t endNs_ = 0;
  // The activities point at their span: it stays here when buffer_ (a
  // copy's owner) is handed to Kineto.
  libkineto::TraceSpan span_{0, 0, "npu"};
  libkineto::CpuTraceBuffer buffer_;
  std::vector<std::unique_ptr<libkineto::GenericTraceActivity>> activities_;
  std::vector<std::string> errors_;
};

class DeviceProfiler : public libkineto::IActivityProfiler {
public:
  const std::string &name() const override { return name_; }

  const std::set<libkineto::ActivityType> &availableActivities() const override {
    return activities_;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession>
  configure(const std::set<libkineto::ActivityType> &requested,
            const libkineto::Config &) override {
    if (!requested.contains(libkineto::ActivityType::CONCURRENT_KERNEL))
      return nullptr; // CPU-only profiles leave the device alone
    return std::make_unique<DeviceProfilerSession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession>
  configure(int64_t, int64_t, const std::set<libkineto::ActivityType> &requested,
            const libkineto::Config &config) override {
    return configure(requested, config);
  }

private:
  std::string name_ = "npu";
  std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(DeviceProfiler);

} // namespace

} // namespace npu::bridge
