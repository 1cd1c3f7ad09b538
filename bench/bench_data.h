// Deterministic input data for the benchmarks: every run, and the ISS and
// RTL benchmarks alike, see the same values.
#pragma once

#include "npu/mem/physical_memory.h"

#include <cstdint>
#include <random>
#include <vector>

namespace npu::bench {

// `count` floats uniform in [-1, 1) at `address`.
inline void fillRandom(mem::PhysicalMemory &memory, uint64_t address, uint64_t count) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float &v : values)
    v = d(rng);
  memory.write(address, values.data(), count * 4);
}

} // namespace npu::bench
