// Runs a command stream through the ring of a Verilated npu_top once and
// measures it; shared by the RTL benchmarks (npu-rtl-bench, npu-rtl-roofline).
#pragma once

#include "bench_data.h"
#include "npu_device.h"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>

namespace npu::bench {

constexpr uint64_t kData = 0x1000'0000, kRing = 0x2000'0000;

struct StreamRun {
  uint64_t deviceCycles = 0; // the CYCLE counter: cycles fetching or executing
  uint64_t clockCycles = 0;  // clock cycles simulated, idle ones included
  double seconds = 0;        // wall time of the simulation
  double cpuSeconds = 0;     // CPU time of the process meanwhile (every thread's)
  unsigned modelThreads = 1;
};

// CPU time of the process: on a shared machine the simulation's own time,
// which the wall time exceeds by what other processes take.
inline double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Writes the stream into the ring at kRing, rings the doorbell and runs the
// model until the ring is empty (a fault or hang throws from the harness).
inline StreamRun runStream(mem::PhysicalMemory &memory, const std::vector<isa::Packet> &stream,
                           const rtl::DeviceOptions &options = {}) {
  for (size_t i = 0; i < stream.size(); ++i)
    memory.write(kRing + 64 * i, stream[i].data(), 64);
  rtl::Device device(memory, options);
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRing));
  device.writeCsr(RING_ENTRIES, 1024);
  const uint64_t clockStart = device.cycle();
  const auto start = std::chrono::steady_clock::now();
  const double cpuStart = processCpuSeconds();
  device.writeCsr(RING_TAIL, static_cast<uint32_t>(stream.size()));
  device.runUntilIdle();
  StreamRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.cpuSeconds = processCpuSeconds() - cpuStart;
  run.clockCycles = device.cycle() - clockStart;
  run.deviceCycles = device.stats().cycles;
  run.modelThreads = device.modelThreads();
  return run;
}

} // namespace npu::bench
