// npu-rtl-bench: simulation speed of the Verilated npu_top, in simulated
// clock cycles per wall-clock second, on a GEMM stream and a softmax
// stream; prints one JSON object per workload. It is built twice, against a
// single-threaded model (npu-rtl-bench) and a model Verilated with
// --threads (npu-rtl-bench-mt); bench/rtl_cycles.py runs both.
#include "npu_device.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace npu;

constexpr uint64_t kData = 0x1000'0000, kRing = 0x2000'0000;

void fillRandom(mem::PhysicalMemory &memory, uint64_t address, uint64_t count) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float &v : values)
    v = d(rng);
  memory.write(address, values.data(), count * 4);
}

// Runs the stream through the ring once and reports cycles and seconds.
void measure(const char *workload, const std::vector<isa::Packet> &stream, uint64_t dataFloats) {
  mem::PhysicalMemory memory;
  fillRandom(memory, kData, dataFloats);
  for (size_t i = 0; i < stream.size(); ++i)
    memory.write(kRing + 64 * i, stream[i].data(), 64);
  rtl::DeviceOptions options;
  rtl::Device device(memory, options);
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRing));
  device.writeCsr(RING_ENTRIES, 1024);
  const uint64_t clockStart = device.cycle();
  const auto start = std::chrono::steady_clock::now();
  device.writeCsr(RING_TAIL, static_cast<uint32_t>(stream.size()));
  device.runUntilIdle();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t clocks = device.cycle() - clockStart;
  std::printf("{\"workload\": \"%s\", \"threads\": %u, \"packets\": %zu, \"device_cycles\": %llu, "
              "\"clock_cycles\": %llu, \"seconds\": %.3f, \"cycles_per_second\": %.0f}\n",
              workload, device.modelThreads(), stream.size(),
              static_cast<unsigned long long>(device.stats().cycles),
              static_cast<unsigned long long>(clocks), seconds, double(clocks) / seconds);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  const uint32_t scale = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 1;
  // GEMM: C (64 x 64) = A (64 x 128) B (128 x 64), repeated.
  {
    isa::inst::Matmul mm;
    mm.m = 64;
    mm.k = 128;
    mm.n = 64;
    mm.a = kData;
    mm.b = kData + 64 * 128 * 4;
    mm.c = kData + 2 * 64 * 128 * 4;
    std::vector<isa::Packet> stream(scale, isa::packetOf(mm));
    measure("gemm 64x128x64", stream, 3 * 64 * 128);
  }
  // Softmax over 64 rows of 512 columns, repeated.
  {
    isa::inst::Softmax sm;
    sm.rows = 64;
    sm.cols = 512;
    sm.scale = 0.125f;
    sm.causal = true;
    sm.src = kData;
    sm.dst = kData + 64 * 512 * 4;
    std::vector<isa::Packet> stream(scale, isa::packetOf(sm));
    measure("softmax 64x512", stream, 64 * 512);
  }
  return 0;
}
