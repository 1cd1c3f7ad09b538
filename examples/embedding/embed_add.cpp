// Adds two vectors of 1,024 floats on the NPU through the runtime's C++
// interface: device memory, one ADD packet built from the generated
// instruction struct, and the result checked against the host's sums.
#include <npu/isa/isa.h>
#include <npu/rt/runtime.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

int main() {
  try {
    constexpr uint32_t kCount = 1024;
    std::vector<float> a(kCount), b(kCount), sum(kCount);
    for (uint32_t i = 0; i < kCount; ++i) {
      a[i] = 0.5f * static_cast<float>(i);
      b[i] = 1.0f - 0.25f * static_cast<float>(i);
    }
    npu::rt::Runtime runtime; // $NPU_BACKEND, else the ISS
    const uint64_t bytes = kCount * sizeof(float);
    const uint64_t da = runtime.malloc(bytes), db = runtime.malloc(bytes),
                   dc = runtime.malloc(bytes);
    runtime.memcpyHostToDevice(da, a.data(), bytes);
    runtime.memcpyHostToDevice(db, b.data(), bytes);

    npu::isa::inst::Add add;
    add.dst = dc;
    add.a = da;
    add.b = db;
    add.rows = 1;
    add.cols = kCount;
    const npu::isa::Packet packet = npu::isa::packetOf(add);
    runtime.submit(std::span(&packet, 1));
    runtime.memcpyDeviceToHost(sum.data(), dc, bytes);

    for (uint32_t i = 0; i < kCount; ++i) {
      const float expected = a[i] + b[i];
      if (std::memcmp(&sum[i], &expected, sizeof expected) != 0) {
        std::fprintf(stderr, "embed_add: element %u is %g, expected %g\n", i, sum[i], expected);
        return 1;
      }
    }
    std::printf("embed_add: %u sums on the %s backend match the host's\n", kCount,
                runtime.backendName().c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "embed_add: %s\n", e.what());
    return 1;
  }
}
