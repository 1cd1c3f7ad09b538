/* Device memory through the runtime's C interface: a host-to-device copy, a
 * copy on the device (COPY packets), a memset and the read-back, then an
 * error (freeing an address that is no allocation) with its message. */
#include <npu_runtime.h>

#include <stdio.h>
#include <string.h>

static int check(npuError_t error, const char *what) {
  if (error == npuSuccess)
    return 1;
  fprintf(stderr, "embed_copy: %s: %s: %s\n", what, npuGetErrorString(error),
          npuGetLastErrorMessage());
  return 0;
}

int main(void) {
  enum { kBytes = 4096 };
  static unsigned char input[kBytes], output[kBytes];
  for (int i = 0; i < kBytes; ++i)
    input[i] = (unsigned char)(i * 7 + 3);

  npuDevicePtr src = 0, dst = 0;
  if (!check(npuInit(NULL), "npuInit") || !check(npuMalloc(&src, kBytes), "npuMalloc") ||
      !check(npuMalloc(&dst, kBytes), "npuMalloc") ||
      !check(npuMemcpyHtoD(src, input, kBytes), "npuMemcpyHtoD") ||
      !check(npuMemcpyDtoD(dst, src, kBytes), "npuMemcpyDtoD") ||
      !check(npuMemset(dst, 0xab, 16), "npuMemset") ||
      !check(npuMemcpyDtoH(output, dst, kBytes), "npuMemcpyDtoH"))
    return 1;
  for (int i = 0; i < kBytes; ++i) {
    const unsigned char expected = i < 16 ? 0xab : input[i];
    if (output[i] != expected) {
      fprintf(stderr, "embed_copy: byte %d is 0x%02x, expected 0x%02x\n", i, output[i], expected);
      return 1;
    }
  }

  const npuError_t bad = npuFree(dst + 8);
  if (bad != npuErrorInvalidDevicePointer || strlen(npuGetLastErrorMessage()) == 0) {
    fprintf(stderr, "embed_copy: freeing a non-allocation gave %s\n", npuGetErrorString(bad));
    return 1;
  }
  printf("embed_copy: %d bytes copied on the %s backend; a bad free says: %s\n", kBytes,
         npuGetBackendName(), npuGetLastErrorMessage());
  return check(npuFree(src), "npuFree") && check(npuFree(dst), "npuFree") &&
                 check(npuShutdown(), "npuShutdown")
             ? 0
             : 1;
}
