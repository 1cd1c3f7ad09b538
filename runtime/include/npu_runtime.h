/* The NPU runtime's C interface (libnpu_rt). Every function returns an
 * npuError_t; on failure npuGetLastErrorMessage() explains what and why for
 * the calling thread. One process-wide device, initialised by npuInit. See
 * npu/rt/runtime.h for the semantics and thread-safety guarantees. */
#ifndef NPU_RUNTIME_H
#define NPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npuError {
  npuSuccess = 0,
  npuErrorInvalidValue = 1,
  npuErrorOutOfMemory = 2,
  npuErrorNotInitialized = 3,
  npuErrorInvalidDevicePointer = 4,
  npuErrorDeviceFault = 5,
  npuErrorUnknownBackend = 6,
  npuErrorIo = 7,
} npuError_t;

typedef uint64_t npuDevicePtr;
typedef uint64_t npuEvent_t;
typedef uint32_t npuQueue_t;

typedef struct npuFaultInfo {
  uint32_t code;        /* npu::mem::FaultCode */
  uint64_t address;
  uint64_t streamIndex; /* index of the faulting packet among all submitted */
  char disassembly[256];
  char description[512];
} npuFaultInfo;

typedef struct npuMemoryStats {
  uint64_t allocatedBytes;
  uint64_t peakAllocatedBytes;
  uint64_t reservedBytes;
  uint64_t largestFreeBlock;
  uint64_t liveAllocations;
  uint64_t totalAllocations;
  uint64_t totalFrees;
  uint64_t failedAllocations;
} npuMemoryStats;

/* backend: "iss", "rtl", "cosim"; NULL or "" means $NPU_BACKEND, else "iss". */
npuError_t npuInit(const char *backend);
npuError_t npuShutdown(void);
const char *npuGetBackendName(void);

npuError_t npuMalloc(npuDevicePtr *ptr, uint64_t bytes);
npuError_t npuFree(npuDevicePtr ptr);
npuError_t npuMemcpyHtoD(npuDevicePtr dst, const void *src, uint64_t bytes);
npuError_t npuMemcpyDtoH(void *dst, npuDevicePtr src, uint64_t bytes);
npuError_t npuMemcpyDtoD(npuDevicePtr dst, npuDevicePtr src, uint64_t bytes);
npuError_t npuMemset(npuDevicePtr dst, int value, uint64_t bytes);

/* Queues count 64-byte packets for asynchronous execution. */
npuError_t npuSubmit(const void *packets, uint64_t count);
npuError_t npuSynchronize(void);
/* Events are non-zero handles from npuEventRecord; synchronizing on or
 * querying any other value is npuErrorInvalidValue (never a wait). */
npuError_t npuEventRecord(npuEvent_t *event);
npuError_t npuEventSynchronize(npuEvent_t event);
/* Sets *done to 1 if every packet before the event has executed, else 0. */
npuError_t npuEventQuery(npuEvent_t event, int *done);

/* Command queues (docs/runtime.md): queue 0 always exists. The device runs
 * every queue's packets in submission order; a queue's event is the point
 * after its own last packet. An unknown queue is npuErrorInvalidValue. */
npuError_t npuQueueCreate(npuQueue_t *queue);
npuError_t npuQueueDestroy(npuQueue_t queue);
npuError_t npuSubmitOnQueue(npuQueue_t queue, const void *packets, uint64_t count);
npuError_t npuEventRecordOnQueue(npuEvent_t *event, npuQueue_t queue);
npuError_t npuQueueWaitEvent(npuQueue_t queue, npuEvent_t event);
npuError_t npuQueueSynchronize(npuQueue_t queue);

/* Fills *info and returns npuSuccess if the stream faulted since the last
 * npuReset, npuErrorInvalidValue if it did not. */
npuError_t npuGetLastFault(npuFaultInfo *info);
npuError_t npuReset(void);

npuError_t npuGetMemoryStats(npuMemoryStats *stats);
npuError_t npuResetPeakMemoryStats(void);
npuError_t npuGetDeviceCycles(uint64_t *cycles);

npuError_t npuCaptureBegin(const char *path);
npuError_t npuCaptureEnd(void);

const char *npuGetErrorString(npuError_t error);
const char *npuGetLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif /* NPU_RUNTIME_H */
