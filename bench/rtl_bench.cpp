// npu-rtl-bench: simulation speed of the Verilated npu_top, in simulated
// clock cycles per wall-clock second, on a GEMM stream and a softmax
// stream; prints one JSON object per workload (bench/rtl_cycles.py runs it).
#include "rtl_stream.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace npu;
using bench::kData;

// Runs the stream through the ring once and reports cycles and seconds.
void measure(const char *workload, const std::vector<isa::Packet> &stream, uint64_t dataFloats) {
  mem::PhysicalMemory memory;
  bench::fillRandom(memory, kData, dataFloats);
  const bench::StreamRun run = bench::runStream(memory, stream);
  std::printf("{\"workload\": \"%s\", \"threads\": %u, \"packets\": %zu, \"device_cycles\": %llu, "
              "\"clock_cycles\": %llu, \"seconds\": %.3f, \"cycles_per_second\": %.0f, "
              "\"cpu_seconds\": %.3f, \"cycles_per_cpu_second\": %.0f}\n",
              workload, run.modelThreads, stream.size(),
              static_cast<unsigned long long>(run.deviceCycles),
              static_cast<unsigned long long>(run.clockCycles), run.seconds,
              double(run.clockCycles) / run.seconds, run.cpuSeconds,
              double(run.clockCycles) / run.cpuSeconds);
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
