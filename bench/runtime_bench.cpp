// npu-runtime-bench: per-packet submission + execution overhead for tiny
// packets through the full runtime path (queue, worker thread, command
// ring, doorbell, ISS backend), next to the ISS executing the same packets
// directly from a buffer. Prints packets/s for both and their ratio.
#include "npu/rt/runtime.h"
#include "npu/sim/iss.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

using namespace npu;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Result {
  double runtimePerSecond, directPerSecond;
};

Result measure(const isa::Packet &packet, uint64_t count, uint64_t batch, rt::Runtime &runtime) {
  const std::vector<isa::Packet> packets(batch, packet);
  double bestRuntime = 1e30, bestDirect = 1e30;
  for (int repeat = 0; repeat < 3; ++repeat) {
    auto start = Clock::now();
    for (uint64_t done = 0; done < count; done += batch)
      runtime.submit(packets);
    runtime.synchronize();
    bestRuntime = std::min(bestRuntime, seconds(start));

    mem::PhysicalMemory memory;
    sim::Iss iss(memory, sim::Mode::Both);
    const std::vector<isa::Packet> all(count, packet);
    start = Clock::now();
    iss.run(all);
    bestDirect = std::min(bestDirect, seconds(start));
  }
  return {count / bestRuntime, count / bestDirect};
}

} // namespace

int main() {
  rt::Runtime runtime; // the iss backend
  const uint64_t a = runtime.malloc(64), b = runtime.malloc(64), c = runtime.malloc(64);
  isa::inst::Add add;
  add.dst = c;
  add.a = a;
  add.b = b;
  add.rows = 1;
  add.cols = 16;
  isa::Packet nop, add16;
  isa::inst::Nop{}.toPacket(nop.data());
  add.toPacket(add16.data());
  constexpr uint64_t kCount = 2'000'000;
  std::printf("%-22s %8s %16s %16s %8s\n", "packet", "batch", "runtime pkt/s", "ISS direct pkt/s",
              "ratio");
  for (auto [name, packet] : {std::pair{"NOP", nop}, std::pair{"ADD (16 elements)", add16}})
    for (uint64_t batch : {uint64_t(1), uint64_t(64), uint64_t(4096)}) {
      const uint64_t count = batch == 1 ? kCount / 20 : kCount;
      const Result r = measure(packet, count, batch, runtime);
      std::printf("%-22s %8llu %16.0f %16.0f %7.2fx\n", name, static_cast<unsigned long long>(batch),
                  r.runtimePerSecond, r.directPerSecond, r.directPerSecond / r.runtimePerSecond);
    }
}
