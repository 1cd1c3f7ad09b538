// npu-rtl-roofline: how close the Verilated npu_top comes to its roofline.
// Each workload is one packet on the default memory (isa/hardware.td's
// latency, the full bus width, no wait states); prints one JSON object per
// workload with the device cycles and the bound they are measured against,
// the larger of its compute and its memory cycles:
//
// * compute: MATMUL's MACs / (HW_MATRIX_TILE^2 MACs per cycle); a vector
//   packet's lane cycles at one ROM word per cycle on HW_VECTOR_LANES
//   elements (the ISS's roofline: EXP's 15 words per element bind it);
// * memory (elementwise, unary, COPY): the busier AXI direction,
//   max(bytes read, bytes written) / HW_AXI_DATA_BYTES per cycle (AXI4's
//   read and write channels are independent, so a machine that overlaps
//   them moves both in that time);
// * COPY_STRIDED: the bytes it delivers / HW_AXI_DATA_BYTES per cycle.
//
//     npu-rtl-roofline [elements]      (default 1048576; bench/rtl_roofline.py runs it)
#include "npu/sim/iss.h"
#include "rtl_stream.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace npu;
using bench::kData;

constexpr double kPeakMacs = double(isa::hw::kMatrixTile) * isa::hw::kMatrixTile;
constexpr double kBusBytes = isa::hw::kAxiDataBytes;

struct Workload {
  std::string name;
  isa::Packet packet;
  uint64_t dataFloats;      // random floats at kData the packet reads
  std::string unit;         // of the work: "MACs" or "B"
  double work;              // MACs, or bytes over the busier path
  double peak;              // work units per cycle
  double computeCycles = 0; // the compute roof, when the work is bytes
};

void measure(const Workload &w) {
  mem::PhysicalMemory memory;
  bench::fillRandom(memory, kData, w.dataFloats);
  const bench::StreamRun run = bench::runStream(memory, {w.packet});
  const bool macs = w.unit == "MACs";
  const double computeCycles = macs ? w.work / w.peak : w.computeCycles;
  const double memoryCycles = macs ? 0 : w.work / w.peak;
  const bool computeBound = computeCycles >= memoryCycles;
  const double boundCycles = computeBound ? computeCycles : memoryCycles;
  std::printf("{\"workload\": \"%s\", \"bound\": \"%s\", \"device_cycles\": %llu, "
              "\"unit\": \"%s\", \"work\": %.0f, \"achieved_per_cycle\": %.3f, "
              "\"peak_per_cycle\": %.0f, \"compute_cycles\": %.0f, \"memory_cycles\": %.0f, "
              "\"bound_cycles\": %.0f, \"percent_of_bound\": %.1f, \"seconds\": %.2f}\n",
              w.name.c_str(), computeBound ? "compute" : "memory",
              static_cast<unsigned long long>(run.deviceCycles), w.unit.c_str(), w.work,
              w.work / double(run.deviceCycles), w.peak, computeCycles, memoryCycles, boundCycles,
              100.0 * boundCycles / double(run.deviceCycles), run.seconds);
  std::fflush(stdout);
}

// A vector packet's compute roof (the ISS's roofline).
double laneCycles(const isa::Packet &packet) {
  return double(sim::roofline(packet).value().computeCycles);
}

Workload matmul(uint32_t m, uint32_t k, uint32_t n) {
  isa::inst::Matmul mm;
  mm.m = m;
  mm.k = k;
  mm.n = n;
  mm.a = kData;
  mm.b = kData + uint64_t(m) * k * 4;
  mm.c = mm.b + uint64_t(k) * n * 4;
  return {"matmul " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n),
          isa::packetOf(mm),
          uint64_t(m) * k + uint64_t(k) * n,
          "MACs",
          double(m) * k * n,
          kPeakMacs};
}

std::vector<Workload> workloads(uint32_t elements) {
  const double bytes = 4.0 * elements;
  const std::string count = std::to_string(elements);
  std::vector<Workload> list = {matmul(128, 128, 128), matmul(256, 64, 256)};
  {
    isa::inst::Add add; // two streams in, one out: reads bound
    add.rows = 1;
    add.cols = elements;
    add.a = kData;
    add.b = kData + 4 * uint64_t(elements);
    add.dst = kData + 8 * uint64_t(elements);
    const isa::Packet packet = isa::packetOf(add);
    list.push_back({"add " + count, packet, 2 * uint64_t(elements), "B", 2 * bytes, kBusBytes,
                    laneCycles(packet)});
  }
  {
    isa::inst::Neg neg; // one stream each way, one ROM word: bound by either direction
    neg.n = elements;
    neg.src = kData;
    neg.dst = kData + 4 * uint64_t(elements);
    const isa::Packet packet = isa::packetOf(neg);
    list.push_back({"neg " + count, packet, elements, "B", bytes, kBusBytes, laneCycles(packet)});
  }
  {
    isa::inst::Exp exp;
    exp.n = elements;
    exp.src = kData;
    exp.dst = kData + 4 * uint64_t(elements);
    const isa::Packet packet = isa::packetOf(exp);
    list.push_back({"exp " + count, packet, elements, "B", bytes, kBusBytes, laneCycles(packet)});
  }
  {
    isa::inst::Copy copy;
    copy.bytes = 4 * elements;
    copy.src = kData;
    copy.dst = kData + 4 * uint64_t(elements);
    list.push_back({"copy " + std::to_string(4 * uint64_t(elements)) + " B", isa::packetOf(copy),
                    elements, "B", bytes, kBusBytes});
  }
  {
    // Every other 4-byte element of a (rows x 2 * 512) matrix: a non-unit
    // innermost stride that still leaves four wanted elements per beat.
    isa::inst::CopyStrided gather;
    const uint32_t cols = 512, rows = elements / 4 / cols;
    gather.size0 = 1;
    gather.size1 = 1;
    gather.size2 = rows;
    gather.size3 = cols;
    gather.stride0 = 0;
    gather.stride1 = 0;
    gather.stride2 = 2 * cols;
    gather.stride3 = 2;
    gather.esize = isa::ElemSize::word;
    gather.src = kData;
    gather.dst = kData + 8 * uint64_t(rows) * cols;
    list.push_back(
        {"copy_strided " + std::to_string(rows) + "x" + std::to_string(cols) + " stride 2 (f32)",
         isa::packetOf(gather), 2 * uint64_t(rows) * cols, "B", 4.0 * rows * cols, kBusBytes});
  }
  return list;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: npu-rtl-roofline [elements]\n");
    return 2;
  }
  long elements = 1 << 20;
  if (argc == 2) {
    char *end = nullptr;
    elements = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end || elements < 2048 || elements > (1 << 24) || elements % 2048) {
      std::fprintf(stderr,
                   "npu-rtl-roofline: elements '%s' must be a multiple of 2048 in [2048, 2^24] "
                   "(the strided copy gathers rows of 512 from every other element)\n",
                   argv[1]);
      return 2;
    }
  }
  for (const Workload &w : workloads(static_cast<uint32_t>(elements)))
    measure(w);
  return 0;
}
