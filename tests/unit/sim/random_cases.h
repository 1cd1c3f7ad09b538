// Random operands shared by the ISS's and the RTL's op tests, so that both
// draw their cases the same way.
#pragma once

#include "npu/isa/isa.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>

namespace npu::cases {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A float bit pattern; `specialPercent` of them are special values.
inline uint32_t randomFloat(std::mt19937_64 &rng, int specialPercent) {
  std::uniform_real_distribution<float> normal(-4.0f, 4.0f);
  if (static_cast<int>(rng() % 100) >= specialPercent)
    return bitsOf(normal(rng));
  const uint32_t sign = static_cast<uint32_t>(rng() & 1) << 31;
  switch (rng() % 8) {
  case 0: return sign;                                                             // ±0
  case 1: return sign | 0x7f800000u;                                               // ±inf
  case 2: return sign | 0x7f800000u | (1 + static_cast<uint32_t>(rng() % 0x7fffff)); // NaN
  case 3: return sign | (1 + static_cast<uint32_t>(rng() % 0x7fffff));             // denormal
  case 4: return sign | (0x7e800000u + static_cast<uint32_t>(rng() % 0xffffff));   // huge
  case 5: return sign | (0x00800000u + static_cast<uint32_t>(rng() % 0xffffff));   // tiny
  case 6:
    return sign | (static_cast<uint32_t>(rng() % 254 + 1) << 23) |
           static_cast<uint32_t>(rng() % 0x800000); // any normal
  default: return bitsOf(static_cast<float>(static_cast<int>(rng() % 9) - 4)); // small integer
  }
}

// The elements of a broadcasting binary instruction's second operand.
inline uint64_t broadcastCount(isa::Broadcast bcast, uint64_t rows, uint64_t cols) {
  switch (bcast) {
  case isa::Broadcast::none: return rows * cols;
  case isa::Broadcast::row: return cols;
  case isa::Broadcast::col: return rows;
  case isa::Broadcast::scalar: return 1;
  }
  return 0;
}

// The packet of `typed` with every f32 operand drawn at random: an optional
// one is at its default half the time (the instruction's fast path), others
// are small integral or half-integral values (where pow has its special
// cases) or any pattern with special values.
template <class T> isa::Packet withRandomF32Operands(const T &typed, std::mt19937_64 &rng) {
  static const float kExponents[] = {0.0f, 1.0f, 2.0f, 3.0f, -1.0f, 0.5f, -0.5f, 2.5f, -3.0f};
  isa::Instruction inst = typed.toInstruction();
  const isa::InstrInfo &info = isa::info(T::kOpcode);
  for (uint32_t i = 0; i < info.numOperands; ++i) {
    const isa::OperandInfo &operand = info.operands[i];
    if (operand.kind != isa::OperandKind::F32)
      continue;
    if (operand.optional && rng() % 2)
      inst.operands[i] = operand.defaultBits;
    else if (rng() % 3)
      inst.operands[i] = bitsOf(kExponents[rng() % std::size(kExponents)]);
    else
      inst.operands[i] = randomFloat(rng, 30);
  }
  isa::Packet p;
  std::string error;
  EXPECT_TRUE(isa::validate(inst, &error)) << error;
  isa::encode(inst, p);
  return p;
}

} // namespace npu::cases
