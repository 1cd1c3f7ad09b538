// npu-runtime-bench: per-packet submission + execution overhead for tiny
// packets through the full runtime path (queue, worker thread, command
// ring, doorbell, ISS backend), next to the ISS executing the same packets
// directly from a buffer. Prints packets/s for both and their ratio; then
// the cost per packet of a chain of small elementwise packets (the torch
// loop `z = z * y; z = z + x` on 32x32 fp32) against the host arithmetic
// alone as the floor.
#include "bench_data.h"
#include "npu/arith/functions.h"
#include "npu/rt/runtime.h"
#include "npu/sim/iss.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace npu;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
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

std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("model name"))
      return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string loadAverage() {
  std::ifstream loadavg("/proc/loadavg");
  std::string one, five, fifteen;
  loadavg >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// The torch loop's chain on 32x32 fp32 (one row of 1,024 elements, as the
// bridge emits a same-shape binary op): MUL z1 = z0 * y, ADD z0 = z1 + x,
// so that each packet's source is the one before's destination.
constexpr uint32_t kChainElements = 32 * 32;
constexpr uint64_t kChainBytes = kChainElements * sizeof(float);

struct Chain {
  uint64_t x, y, z0, z1;
  isa::Packet mul, add;
};

Chain makeChain(uint64_t x, uint64_t y, uint64_t z0, uint64_t z1) {
  return {x,
          y,
          z0,
          z1,
          bench::rowPacket<isa::inst::Mul>(z1, z0, y, kChainElements),
          bench::rowPacket<isa::inst::Add>(z0, z1, x, kChainElements)};
}

// The data of the chain: z stays finite and normal (y = 1, x = 0.25 adds a
// little each round).
void fillChain(const Chain &chain, const auto &write) {
  std::vector<float> values(kChainElements);
  for (auto [address, value] :
       {std::pair{chain.x, 0.25f}, std::pair{chain.y, 1.0f}, std::pair{chain.z0, 1.5f}}) {
    std::fill(values.begin(), values.end(), value);
    write(address, values.data());
  }
}

// ns per packet of `pairs` MUL/ADD pairs, `batch` packets per submit() call.
double chainThroughRuntime(rt::Runtime &runtime, const Chain &chain, uint64_t pairs,
                           uint64_t batch) {
  std::vector<isa::Packet> packets;
  for (uint64_t i = 0; i < batch; ++i)
    packets.push_back(i % 2 ? chain.add : chain.mul);
  runtime.synchronize();
  const auto start = Clock::now();
  for (uint64_t done = 0; done < 2 * pairs; done += batch)
    runtime.submit(packets);
  runtime.synchronize();
  return seconds(start) / double(2 * pairs) * 1e9;
}

double chainOnIss(sim::Iss &iss, const Chain &chain, uint64_t pairs) {
  const auto start = Clock::now();
  for (uint64_t i = 0; i < pairs; ++i) {
    iss.step(chain.mul, 2 * i, true);
    iss.step(chain.add, 2 * i + 1, i + 1 < pairs);
  }
  return seconds(start) / double(2 * pairs) * 1e9;
}

// The host doing the chain's arithmetic alone: no checks, no timing, no
// queue (floats, FTZ or not: the values stay normal).
double chainOnHost(uint64_t pairs) {
  std::vector<float> x(kChainElements, 0.25f), y(kChainElements, 1.0f), z0(kChainElements, 1.5f),
      z1(kChainElements);
  const auto start = Clock::now();
  for (uint64_t i = 0; i < pairs; ++i) {
    std::transform(z0.begin(), z0.end(), y.begin(), z1.begin(), std::multiplies<>());
    std::transform(z1.begin(), z1.end(), x.begin(), z0.begin(), std::plus<>());
    // Keeps the compiler from dropping rounds whose results it can see unused.
    asm volatile("" : : "r"(z0.data()) : "memory");
  }
  return seconds(start) / double(2 * pairs) * 1e9;
}

void benchChain(rt::Runtime &runtime) {
  const uint64_t x = runtime.malloc(kChainBytes), y = runtime.malloc(kChainBytes),
                 z0 = runtime.malloc(kChainBytes), z1 = runtime.malloc(kChainBytes);
  const Chain chain = makeChain(x, y, z0, z1);
  fillChain(chain, [&](uint64_t address, const float *data) {
    runtime.memcpyHostToDevice(address, data, kChainBytes);
  });
  mem::PhysicalMemory memory;
  sim::Iss iss(memory, sim::Mode::Both);
  fillChain(chain,
            [&](uint64_t address, const float *data) { memory.write(address, data, kChainBytes); });

  constexpr uint64_t kPairs = 20'000;
  constexpr int kRounds = 7;
  const std::vector<uint64_t> batches{1, 2, 64};
  std::vector<std::vector<double>> runtimeNs(batches.size());
  std::vector<double> issNs, hostNs;
  // Alternating rounds, so that the machine's load falls on every case alike.
  for (int round = 0; round < kRounds; ++round) {
    for (size_t b = 0; b < batches.size(); ++b)
      runtimeNs[b].push_back(chainThroughRuntime(runtime, chain, kPairs, batches[b]));
    issNs.push_back(chainOnIss(iss, chain, kPairs));
    hostNs.push_back(chainOnHost(kPairs));
  }
  const double host = median(hostNs);
  std::printf("\nchain of 32x32 fp32 MUL/ADD packets (median of %d rounds, %llu packets each)\n",
              kRounds, static_cast<unsigned long long>(2 * kPairs));
  std::printf("%-36s %10s %10s\n", "path", "ns/packet", "x host");
  std::printf("%-36s %10.1f %10.2f\n", "host std::transform (floor)", host, 1.0);
  std::printf("%-36s %10.1f %10.2f\n", "ISS step (direct)", median(issNs), median(issNs) / host);
  for (size_t b = 0; b < batches.size(); ++b) {
    const std::string name = "runtime, " + std::to_string(batches[b]) + " packet(s) per submit";
    const double ns = median(runtimeNs[b]);
    std::printf("%-36s %10.1f %10.2f\n", name.c_str(), ns, ns / host);
  }
}

} // namespace

int main() {
  std::printf("cpu: %s; ISS arithmetic: %s; load average: %s\n", cpuModel().c_str(),
              arith::implementationName(arith::fastestImplementation()), loadAverage().c_str());
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
      std::printf("%-22s %8llu %16.0f %16.0f %7.2fx\n", name,
                  static_cast<unsigned long long>(batch), r.runtimePerSecond, r.directPerSecond,
                  r.directPerSecond / r.runtimePerSecond);
    }
  benchChain(runtime);
  std::printf("load average after: %s\n", loadAverage().c_str());
}
