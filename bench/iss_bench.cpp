// npu-iss-bench: times the ISS executing single large packets (MATMUL,
// elementwise, EXP, SIGMOID, SILU, SOFTMAX, RMSNORM) from memory that is
// already resident, and prints JSON (with the GEMM kernel, the vector
// micro-programs' implementation and the thread count it ran:
// NPU_ISS_THREADS).
// bench/iss_throughput.py runs it next to the numpy baselines.
#include "bench_data.h"
#include "gemm.h"
#include "host_threads.h"
#include "npu/arith/convert.h"
#include "npu/arith/float_env.h"
#include "npu/arith/functions.h"
#include "npu/sim/iss.h"

#include <bit>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace npu;

constexpr uint64_t kActivations = 0x1000'0000, kWeights = 0x0000'1000;

// Best of `repeats` runs of one packet, in seconds (after one warm-up run).
double best(mem::PhysicalMemory &memory, const isa::Packet &packet, int repeats) {
  sim::Iss iss(memory, sim::Mode::Func);
  iss.step(packet, 0);
  double fastest = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    iss.step(packet, 0);
    fastest = std::min(
        fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return fastest;
}

} // namespace

int main() {
  mem::PhysicalMemory memory;
  std::printf("{\n  \"host\": {\"gemm_kernel\": \"%s\", \"gemm_threads\": %u, "
              "\"vector_implementation\": \"%s\", \"threads\": %u},\n",
              sim::kernels::gemmKernelName(sim::kernels::hostGemmKernel()),
              sim::kernels::issThreads(), arith::implementationName(arith::fastestImplementation()),
              sim::kernels::issThreads());
  for (uint32_t n : {512u, 1024u}) {
    isa::inst::Matmul mm;
    mm.m = mm.k = mm.n = n;
    mm.a = kWeights;
    mm.b = kWeights + uint64_t(n) * n * 4;
    mm.c = kActivations;
    bench::fillRandom(memory, mm.a, uint64_t(n) * n);
    bench::fillRandom(memory, mm.b, uint64_t(n) * n);
    const double seconds = best(memory, isa::packetOf(mm), n == 512 ? 10 : 4);
    std::printf("  \"matmul_%u\": {\"seconds\": %.6g, \"gflops\": %.4g},\n", n, seconds,
                2.0 * n * n * n / seconds / 1e9);
    // The GEMM kernel alone on the same operands: the packet above adds
    // its checks and the cycle model (which every mode runs, to count the
    // bytes the engine requests).
    const uint64_t elements = uint64_t(n) * n;
    std::vector<float> a(elements), b(elements), c(elements);
    memory.read(mm.a, a.data(), elements * 4);
    memory.read(mm.b, b.data(), elements * 4);
    const sim::kernels::GemmShape shape{.m = n, .k = n, .n = n, .lda = n, .ldb = n, .ldc = n};
    arith::FloatEnvGuard env;
    double kernel = 1e30;
    for (int r = 0; r <= (n == 512 ? 10 : 4); ++r) {
      const auto start = std::chrono::steady_clock::now();
      sim::kernels::gemm(shape, a, b, c);
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      kernel = r ? std::min(kernel, took) : kernel; // the first run warms up
    }
    std::printf("  \"gemm_kernel_%u\": {\"seconds\": %.6g, \"gflops\": %.4g},\n", n, kernel,
                2.0 * n * n * n / kernel / 1e9);
  }
  // bf16 and f16 inputs and result: fillRandom's values rounded to the type.
  for (isa::DType type : {isa::DType::bf16, isa::DType::f16}) {
    constexpr uint32_t n = 1024;
    const uint64_t elements = uint64_t(n) * n;
    isa::inst::Matmul mm;
    mm.m = mm.k = mm.n = n;
    mm.dtype = mm.otype = type;
    mm.a = kWeights;
    mm.b = kWeights + elements * 2;
    mm.c = kActivations;
    std::vector<uint16_t> stored(elements);
    bench::fillRandom(memory, mm.a, elements);
    std::vector<float> values(elements);
    memory.read(mm.a, values.data(), elements * 4);
    for (uint64_t i = 0; i < elements; ++i) {
      const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
      stored[i] = type == isa::DType::bf16 ? arith::narrowBf16(bits) : arith::narrowF16(bits);
    }
    memory.write(mm.a, stored.data(), elements * 2);
    memory.write(mm.b, stored.data(), elements * 2);
    const double seconds = best(memory, isa::packetOf(mm), 4);
    std::printf("  \"matmul_%s_%u\": {\"seconds\": %.6g, \"gflops\": %.4g},\n",
                type == isa::DType::bf16 ? "bf16" : "f16", n, seconds,
                2.0 * n * n * n / seconds / 1e9);
  }
  constexpr uint32_t kElements = 1u << 24;
  const uint64_t a = kActivations, b = a + uint64_t(kElements) * 4, c = b + uint64_t(kElements) * 4;
  bench::fillRandom(memory, a, kElements);
  bench::fillRandom(memory, b, kElements);
  const auto unary = [&]<class Inst>(Inst op) {
    op.dst = c;
    op.src = a;
    op.n = kElements;
    return op;
  };
  const auto exp = unary(isa::inst::Exp{});
  const auto sigmoid = unary(isa::inst::Sigmoid{});
  const auto silu = unary(isa::inst::Silu{});
  // The row instructions on 4096 rows of 1024 (a long sequence's attention
  // scores, a batch of tokens' hidden states); the weight in b.
  constexpr uint32_t kRows = 4096, kCols = 1024;
  isa::inst::Softmax softmax;
  softmax.dst = c;
  softmax.src = a;
  softmax.rows = kRows;
  softmax.cols = kCols;
  isa::inst::Rmsnorm rmsnorm;
  rmsnorm.dst = c;
  rmsnorm.src = a;
  rmsnorm.weight = b;
  rmsnorm.rows = kRows;
  rmsnorm.cols = kCols;
  rmsnorm.eps = 1e-6f;
  rmsnorm.use_weight = true;
  struct VectorOp {
    const char *name;
    isa::Packet packet;
    uint64_t elements;
  };
  const VectorOp vectorOps[] = {
      {"add_2^24", bench::rowPacket<isa::inst::Add>(c, a, b, kElements), kElements},
      {"mul_2^24", bench::rowPacket<isa::inst::Mul>(c, a, b, kElements), kElements},
      {"exp_2^24", isa::packetOf(exp), kElements},
      {"sigmoid_2^24", isa::packetOf(sigmoid), kElements},
      {"silu_2^24", isa::packetOf(silu), kElements},
      {"softmax_4096x1024", isa::packetOf(softmax), uint64_t(kRows) * kCols},
      {"rmsnorm_4096x1024", isa::packetOf(rmsnorm), uint64_t(kRows) * kCols}};
  for (size_t i = 0; i < std::size(vectorOps); ++i) {
    const double seconds = best(memory, vectorOps[i].packet, 5);
    std::printf("  \"%s\": {\"seconds\": %.6g, \"gelements_per_s\": %.4g}%s\n", vectorOps[i].name,
                seconds, vectorOps[i].elements / seconds / 1e9,
                i + 1 < std::size(vectorOps) ? "," : "");
  }
  std::printf("}\n");
}
