// Deterministic input data for the benchmarks: every run, and the ISS and
// RTL benchmarks alike, see the same values.
#pragma once

#include "npu/isa/isa.h"
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

// The packet of a binary elementwise instruction (ADD, MUL, ...) on one row
// of `count` fp32 elements: dst = a op b.
template <class Instruction>
isa::Packet rowPacket(uint64_t dst, uint64_t a, uint64_t b, uint32_t count) {
  Instruction op;
  op.dst = dst;
  op.a = a;
  op.b = b;
  op.rows = 1;
  op.cols = count;
  return isa::packetOf(op);
}

} // namespace npu::bench
