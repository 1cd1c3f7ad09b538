// npu-remote-bench: packets/s through the runtime on the `remote` backend
// (an npu-server core hosting `iss`, on loopback in this process) against
// the in-process `iss` backend, for single packets and batches. Measured in
// alternation, several rounds, medians; prints the machine and its load.
#include "bench_data.h"
#include "npu/rt/runtime.h"
#include "remote_server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace npu;
using Clock = std::chrono::steady_clock;

std::string firstLine(const char *path, const char *prefix) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(prefix))
      return line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 2);
  return "unknown";
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

rt::RuntimeOptions runtimeOptions(const char *backend) {
  rt::RuntimeOptions options;
  options.backend = backend;
  return options;
}

// Packets per second of `submits` submissions of `batch` packets, each
// waited for.
double packetsPerSecond(rt::Runtime &runtime, const std::vector<isa::Packet> &batch,
                        unsigned submits) {
  const auto start = Clock::now();
  for (unsigned i = 0; i < submits; ++i) {
    runtime.submit(batch);
    runtime.synchronize();
  }
  return double(batch.size()) * submits /
         std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

int main() {
  std::printf("cpu: %s; load average: %s\n", firstLine("/proc/cpuinfo", "model name").c_str(),
              firstLine("/proc/loadavg", "").c_str());
  remote::ServerOptions serverOptions;
  serverOptions.token = "bench";
  remote::Server server(serverOptions);
  const std::string address = "127.0.0.1:" + std::to_string(server.port());
  setenv("NPU_REMOTE", address.c_str(), 1);
  setenv("NPU_REMOTE_TOKEN", "bench", 1);
  rt::Runtime local(runtimeOptions("iss")), remote(runtimeOptions("remote"));
  std::printf("remote: %s\n", remote.backendName().c_str());
  std::vector<rt::Runtime *> runtimes{&local, &remote};
  std::vector<uint64_t> operands;
  for (rt::Runtime *runtime : runtimes) {
    const uint64_t a = runtime->malloc(64), b = runtime->malloc(64), c = runtime->malloc(64);
    operands = {a, b, c};
  }
  // The three allocations are the same addresses on both devices.
  const isa::Packet add16 =
      bench::rowPacket<isa::inst::Add>(operands[2], operands[0], operands[1], 16);
  constexpr int kRounds = 5;
  std::printf("%-28s %8s %16s %16s %8s\n", "packet", "batch", "in-process pkt/s", "remote pkt/s",
              "ratio");
  for (auto [batch, submits] : {std::pair{1u, 1000u}, {64u, 200u}, {4096u, 10u}}) {
    const std::vector<isa::Packet> packets(batch, add16);
    std::vector<double> rates[2];
    for (int round = 0; round < kRounds; ++round)
      for (size_t r = 0; r < runtimes.size(); ++r)
        rates[r].push_back(packetsPerSecond(*runtimes[r], packets, submits));
    const double inProcess = median(rates[0]), overRemote = median(rates[1]);
    std::printf("%-28s %8u %16.0f %16.0f %7.3fx\n", "ADD (16 elements)", batch, inProcess,
                overRemote, overRemote / inProcess);
  }
  std::printf("load average after: %s\n", firstLine("/proc/loadavg", "").c_str());
}
