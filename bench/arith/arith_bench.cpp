// npu-arith-bench: throughput of the micro-program array kernels on the host
// (npu::arith::apply), single thread, as nanoseconds per element and
// elements per second. bench/arith/compare_numpy.py sets these against
// numpy on the same machine.
#include "npu/arith/functions.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  using namespace npu::arith;
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : size_t(1) << 24;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<float> a(n), b(n), out(n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i] = dist(rng);
    b[i] = dist(rng);
  }
  const Implementation impl = fastestImplementation();
  std::printf("# %zu elements, %s, best of %d runs\n", n, implementationName(impl), repeats);
  std::printf("%-10s %10s %14s\n", "program", "ns/elem", "Melem/s");
  for (unsigned p = 0; p < microcode::kNumPrograms; ++p) {
    const Program program = static_cast<Program>(p);
    const Operand in[2] = {{a.data()}, {b.data()}};
    const auto &info = microcode::kPrograms[p];
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      apply(program, std::span(in, info.numInputs), out.data(), n, impl);
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      best = std::min(best, elapsed.count());
    }
    std::printf("%-10s %10.3f %14.1f\n", info.name, best / n * 1e9, n / best / 1e6);
  }
}
