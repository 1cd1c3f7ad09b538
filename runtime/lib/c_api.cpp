#include "npu_runtime.h"

#include "npu/rt/runtime.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>

namespace {

using namespace npu::rt;

// The process-wide runtime: calls share it; init/shutdown replace it.
std::shared_mutex globalMutex;
std::unique_ptr<Runtime> global;
thread_local std::string lastMessage;

npuError_t fail(npuError_t code, const std::string &message) {
  lastMessage = message;
  return code;
}

// Runs f(runtime) and turns exceptions into error codes.
template <class F> npuError_t call(F f) {
  std::shared_lock<std::shared_mutex> lock(globalMutex);
  if (!global)
    return fail(npuErrorNotInitialized, "npuInit has not been called");
  try {
    f(*global);
    return npuSuccess;
  } catch (const Error &e) {
    return fail(static_cast<npuError_t>(e.code()), e.what());
  } catch (const std::exception &e) {
    return fail(npuErrorInvalidValue, e.what());
  }
}

void copyString(char *dst, size_t size, const std::string &src) {
  std::strncpy(dst, src.c_str(), size - 1);
  dst[size - 1] = '\0';
}

} // namespace

extern "C" {

npuError_t npuInit(const char *backend) {
  std::unique_lock<std::shared_mutex> lock(globalMutex);
  if (global)
    return fail(npuErrorInvalidValue, "npuInit: already initialised (call npuShutdown first)");
  try {
    RuntimeOptions options;
    options.backend = backend ? backend : "";
    global = std::make_unique<Runtime>(options);
    return npuSuccess;
  } catch (const Error &e) {
    return fail(static_cast<npuError_t>(e.code()), e.what());
  } catch (const std::exception &e) {
    return fail(npuErrorInvalidValue, e.what());
  }
}

npuError_t npuShutdown(void) {
  std::unique_lock<std::shared_mutex> lock(globalMutex);
  if (!global)
    return fail(npuErrorNotInitialized, "npuShutdown: not initialised");
  try {
    if (global->capturing())
      global->endCapture();
  } catch (const Error &e) {
    global.reset();
    return fail(static_cast<npuError_t>(e.code()), e.what());
  }
  global.reset();
  return npuSuccess;
}

const char *npuGetBackendName(void) {
  static thread_local std::string name;
  std::shared_lock<std::shared_mutex> lock(globalMutex);
  name = global ? global->backendName() : "";
  return name.c_str();
}

npuError_t npuMalloc(npuDevicePtr *ptr, uint64_t bytes) {
  if (!ptr)
    return fail(npuErrorInvalidValue, "npuMalloc: ptr is NULL");
  return call([&](Runtime &rt) { *ptr = rt.malloc(bytes); });
}
npuError_t npuFree(npuDevicePtr ptr) {
  return call([&](Runtime &rt) { rt.free(ptr); });
}
npuError_t npuMemcpyHtoD(npuDevicePtr dst, const void *src, uint64_t bytes) {
  if (!src && bytes)
    return fail(npuErrorInvalidValue, "npuMemcpyHtoD: src is NULL");
  return call([&](Runtime &rt) { rt.memcpyHostToDevice(dst, src, bytes); });
}
npuError_t npuMemcpyDtoH(void *dst, npuDevicePtr src, uint64_t bytes) {
  if (!dst && bytes)
    return fail(npuErrorInvalidValue, "npuMemcpyDtoH: dst is NULL");
  return call([&](Runtime &rt) { rt.memcpyDeviceToHost(dst, src, bytes); });
}
npuError_t npuMemcpyDtoD(npuDevicePtr dst, npuDevicePtr src, uint64_t bytes) {
  return call([&](Runtime &rt) { rt.memcpyDeviceToDevice(dst, src, bytes); });
}
npuError_t npuMemset(npuDevicePtr dst, int value, uint64_t bytes) {
  return call([&](Runtime &rt) { rt.memset(dst, static_cast<uint8_t>(value), bytes); });
}
npuError_t npuSubmit(const void *packets, uint64_t count) {
  if (!packets && count)
    return fail(npuErrorInvalidValue, "npuSubmit: packets is NULL");
  return call([&](Runtime &rt) {
    rt.submit({static_cast<const npu::isa::Packet *>(packets), static_cast<size_t>(count)});
  });
}
npuError_t npuSynchronize(void) {
  return call([](Runtime &rt) { rt.synchronize(); });
}
npuError_t npuEventRecord(npuEvent_t *event) {
  if (!event)
    return fail(npuErrorInvalidValue, "npuEventRecord: event is NULL");
  return call([&](Runtime &rt) { *event = rt.recordEvent(); });
}
npuError_t npuQueueCreate(npuQueue_t *queue) {
  if (!queue)
    return fail(npuErrorInvalidValue, "npuQueueCreate: queue is NULL");
  return call([&](Runtime &rt) { *queue = rt.createQueue(); });
}
npuError_t npuQueueDestroy(npuQueue_t queue) {
  return call([&](Runtime &rt) { rt.destroyQueue(queue); });
}
npuError_t npuSubmitOnQueue(npuQueue_t queue, const void *packets, uint64_t count) {
  if (!packets && count)
    return fail(npuErrorInvalidValue, "npuSubmitOnQueue: packets is NULL");
  return call([&](Runtime &rt) {
    rt.submit(queue, {static_cast<const npu::isa::Packet *>(packets), static_cast<size_t>(count)});
  });
}
npuError_t npuEventRecordOnQueue(npuEvent_t *event, npuQueue_t queue) {
  if (!event)
    return fail(npuErrorInvalidValue, "npuEventRecordOnQueue: event is NULL");
  return call([&](Runtime &rt) { *event = rt.recordEvent(queue); });
}
npuError_t npuQueueWaitEvent(npuQueue_t queue, npuEvent_t event) {
  return call([&](Runtime &rt) { rt.queueWaitEvent(queue, event); });
}
npuError_t npuQueueSynchronize(npuQueue_t queue) {
  return call([&](Runtime &rt) { rt.synchronizeQueue(queue); });
}
npuError_t npuEventSynchronize(npuEvent_t event) {
  return call([&](Runtime &rt) { rt.waitEvent(event); });
}
npuError_t npuEventQuery(npuEvent_t event, int *done) {
  if (!done)
    return fail(npuErrorInvalidValue, "npuEventQuery: done is NULL");
  return call([&](Runtime &rt) { *done = rt.eventDone(event) ? 1 : 0; });
}

npuError_t npuGetLastFault(npuFaultInfo *info) {
  if (!info)
    return fail(npuErrorInvalidValue, "npuGetLastFault: info is NULL");
  std::optional<FaultInfo> fault;
  npuError_t status = call([&](Runtime &rt) { fault = rt.lastFault(); });
  if (status != npuSuccess)
    return status;
  if (!fault)
    return fail(npuErrorInvalidValue, "no device fault since the last reset");
  info->code = static_cast<uint32_t>(fault->fault.code);
  info->address = fault->fault.address;
  info->streamIndex = fault->streamIndex;
  copyString(info->disassembly, sizeof info->disassembly, fault->disassembly);
  copyString(info->description, sizeof info->description, fault->describe());
  return npuSuccess;
}

npuError_t npuReset(void) {
  return call([](Runtime &rt) { rt.reset(); });
}

npuError_t npuGetMemoryStats(npuMemoryStats *stats) {
  if (!stats)
    return fail(npuErrorInvalidValue, "npuGetMemoryStats: stats is NULL");
  return call([&](Runtime &rt) {
    const MemoryStats s = rt.memoryStats();
    *stats = {s.allocatedBytes,   s.peakAllocatedBytes, s.reservedBytes, s.largestFreeBlock,
              s.liveAllocations,  s.totalAllocations,   s.totalFrees,    s.failedAllocations};
  });
}
npuError_t npuResetPeakMemoryStats(void) {
  return call([](Runtime &rt) { rt.resetPeakMemoryStats(); });
}
npuError_t npuGetDeviceCycles(uint64_t *cycles) {
  if (!cycles)
    return fail(npuErrorInvalidValue, "npuGetDeviceCycles: cycles is NULL");
  return call([&](Runtime &rt) { *cycles = rt.deviceCycles(); });
}

npuError_t npuCaptureBegin(const char *path) {
  if (!path || !*path)
    return fail(npuErrorInvalidValue, "npuCaptureBegin: empty path");
  return call([&](Runtime &rt) { rt.beginCapture(path); });
}
npuError_t npuCaptureEnd(void) {
  return call([](Runtime &rt) { rt.endCapture(); });
}

const char *npuGetErrorString(npuError_t error) {
  return errorCodeName(static_cast<ErrorCode>(error));
}

const char *npuGetLastErrorMessage(void) { return lastMessage.c_str(); }

} // extern "C"
