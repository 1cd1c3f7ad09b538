// Property tests of the generated codec: random valid operands round-trip
// through both the generic and the typed path; corrupted packets are
// rejected with an error, never a crash.
#include "npu/isa/isa.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace {

using namespace npu::isa;

// A uniformly random value that satisfies every constraint of `op`.
uint64_t randomValid(const OperandInfo &op, std::mt19937_64 &rng) {
  uint64_t mask = op.bitWidth >= 64 ? ~uint64_t(0) : (uint64_t(1) << op.bitWidth) - 1;
  switch (op.kind) {
  case OperandKind::Enum: {
    const std::vector<uint32_t> values = acceptedValues(op);
    return values[rng() % values.size()];
  }
  case OperandKind::Addr: return (rng() & mask) & ~uint64_t(op.align - 1);
  case OperandKind::U32:
  case OperandKind::I32:
    if (op.hasRange) {
      // Bias towards the range ends, where off-by-one bugs live.
      int64_t v;
      switch (rng() % 4) {
      case 0: v = op.min; break;
      case 1: v = op.max; break;
      default:
        v = op.min + static_cast<int64_t>(rng() % (static_cast<uint64_t>(op.max - op.min) + 1));
      }
      return static_cast<uint64_t>(v) & mask;
    }
    return rng() & mask;
  default: return rng() & mask;
  }
}

Instruction randomInstruction(const InstrInfo &ins, std::mt19937_64 &rng) {
  Instruction inst;
  inst.opcode = ins.opcode;
  for (uint32_t i = 0; i < ins.numOperands; ++i)
    inst.operands[i] = randomValid(ins.operands[i], rng);
  return inst;
}

TEST(IsaCodec, RandomValidInstructionsRoundTrip) {
  std::mt19937_64 rng(12345);
  for (const InstrInfo &ins : instructions()) {
    for (int trial = 0; trial < 2000; ++trial) {
      Instruction inst = randomInstruction(ins, rng);
      std::string error;
      ASSERT_TRUE(validate(inst, &error)) << ins.mnemonic << ": " << error;
      uint8_t packet[kPacketBytes];
      encode(inst, packet);
      Instruction back;
      ASSERT_TRUE(decode(packet, back, &error)) << ins.mnemonic << ": " << error;
      ASSERT_EQ(inst, back) << ins.mnemonic;
    }
  }
}

TEST(IsaCodec, OpcodeTablesAreConsistent) {
  EXPECT_EQ(instructions().size(), kNumOpcodes);
  std::set<uint32_t> opcodes;
  std::set<std::string> mnemonics;
  for (const InstrInfo &ins : instructions()) {
    EXPECT_TRUE(opcodes.insert(static_cast<uint32_t>(ins.opcode)).second);
    EXPECT_TRUE(mnemonics.insert(ins.mnemonic).second);
    EXPECT_EQ(findMnemonic(ins.mnemonic), &ins);
    EXPECT_EQ(findOpcode(static_cast<uint32_t>(ins.opcode)), &ins);
  }
  EXPECT_EQ(findMnemonic("no_such_op"), nullptr);
}

TEST(IsaCodec, EveryReservedBitIsRejected) {
  std::mt19937_64 rng(7);
  for (const InstrInfo &ins : instructions()) {
    uint8_t packet[kPacketBytes];
    encode(randomInstruction(ins, rng), packet);
    for (unsigned bit = 32; bit < kPacketBytes * 8; ++bit) {
      if ((ins.usedBits[bit / 64] >> (bit % 64)) & 1)
        continue;
      uint8_t bad[kPacketBytes];
      std::copy(std::begin(packet), std::end(packet), bad);
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      Instruction out;
      std::string error;
      ASSERT_FALSE(decode(bad, out, &error)) << ins.mnemonic << " bit " << bit;
      EXPECT_NE(error.find("reserved bit"), std::string::npos) << error;
    }
  }
}

TEST(IsaCodec, UnknownOpcodesAreRejected) {
  std::mt19937_64 rng(99);
  uint8_t packet[kPacketBytes] = {};
  int rejected = 0;
  for (uint32_t opcode = 0; opcode < 0x10000; ++opcode) {
    if (findOpcode(opcode))
      continue;
    packet[0] = static_cast<uint8_t>(opcode);
    packet[1] = static_cast<uint8_t>(opcode >> 8);
    Instruction out;
    std::string error;
    ASSERT_FALSE(decode(packet, out, &error));
    EXPECT_NE(error.find("unknown opcode"), std::string::npos);
    ++rejected;
  }
  EXPECT_EQ(rejected, 0x10000 - static_cast<int>(kNumOpcodes));
  for (int i = 0; i < 10000; ++i) {
    uint32_t opcode = static_cast<uint32_t>(rng()) | 0x10000u;
    packet[0] = static_cast<uint8_t>(opcode);
    packet[1] = static_cast<uint8_t>(opcode >> 8);
    packet[2] = static_cast<uint8_t>(opcode >> 16);
    packet[3] = static_cast<uint8_t>(opcode >> 24);
    Instruction out;
    EXPECT_FALSE(decode(packet, out));
  }
}

TEST(IsaCodec, RandomBytesNeverCrashAndAcceptedPacketsReencode) {
  std::mt19937_64 rng(2024);
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    uint8_t packet[kPacketBytes];
    for (uint8_t &b : packet)
      b = static_cast<uint8_t>(rng());
    // Keep the opcode valid most of the time so operand checks are reached.
    if (i % 4) {
      const InstrInfo &ins = instructions()[rng() % instructions().size()];
      uint32_t op = static_cast<uint32_t>(ins.opcode);
      for (unsigned b = 0; b < 4; ++b)
        packet[b] = static_cast<uint8_t>(op >> (8 * b));
      // Clear reserved bits some of the time to exercise range checks.
      if (i % 2)
        for (unsigned bit = 0; bit < kPacketBytes * 8; ++bit)
          if (!((ins.usedBits[bit / 64] >> (bit % 64)) & 1))
            packet[bit / 8] &= static_cast<uint8_t>(~(1u << (bit % 8)));
    }
    Instruction out;
    std::string error;
    if (decode(packet, out, &error)) {
      ++accepted;
      uint8_t again[kPacketBytes];
      encode(out, again);
      ASSERT_TRUE(std::equal(std::begin(packet), std::end(packet), std::begin(again)));
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(accepted, 0);
}

TEST(IsaCodec, OutOfRangeOperandsAreRejected) {
  // Every operand with a range: one past each end must fail validation and decode.
  for (const InstrInfo &ins : instructions()) {
    for (uint32_t i = 0; i < ins.numOperands; ++i) {
      const OperandInfo &op = ins.operands[i];
      if (!op.hasRange)
        continue;
      int64_t lowest = op.kind == OperandKind::I32 ? -(int64_t(1) << (op.bitWidth - 1)) : 0;
      uint64_t mask = (uint64_t(1) << op.bitWidth) - 1;
      for (int64_t bad : {op.min - 1, op.max + 1}) {
        int64_t highest = op.kind == OperandKind::I32 ? (int64_t(1) << (op.bitWidth - 1)) - 1
                                                      : static_cast<int64_t>(mask);
        if (bad < lowest || bad > highest)
          continue; // not representable in the slot: nothing to test
        Instruction inst = makeInstruction(ins.opcode);
        for (uint32_t j = 0; j < ins.numOperands; ++j)
          if (!ins.operands[j].optional && ins.operands[j].hasRange)
            inst.operands[j] = static_cast<uint64_t>(ins.operands[j].min) & mask;
        inst.operands[i] = static_cast<uint64_t>(bad) & mask;
        std::string error;
        EXPECT_FALSE(validate(inst, &error)) << ins.mnemonic << "." << op.name << " = " << bad;
        EXPECT_NE(error.find(op.name), std::string::npos) << error;
        uint8_t packet[kPacketBytes];
        encode(inst, packet);
        Instruction out;
        EXPECT_FALSE(decode(packet, out));
      }
    }
  }
}

TEST(IsaCodec, MisalignedAddressesAreRejected) {
  int checked = 0;
  for (const InstrInfo &ins : instructions())
    for (uint32_t i = 0; i < ins.numOperands; ++i) {
      if (ins.operands[i].kind != OperandKind::Addr || ins.operands[i].align == 1)
        continue;
      Instruction inst = makeInstruction(ins.opcode);
      for (uint32_t j = 0; j < ins.numOperands; ++j)
        if (ins.operands[j].hasRange)
          inst.operands[j] = static_cast<uint64_t>(ins.operands[j].min) & 0xffffffffu;
      inst.operands[i] = 0x1000 + ins.operands[i].align / 2;
      std::string error;
      EXPECT_FALSE(validate(inst, &error));
      EXPECT_NE(error.find("aligned"), std::string::npos) << error;
      ++checked;
    }
  EXPECT_GT(checked, 0);
}

TEST(IsaCodec, TypedStructsAgreeWithGenericCodec) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 1000; ++trial) {
    Instruction inst = randomInstruction(info(Opcode::MATMUL), rng);
    uint8_t packet[kPacketBytes];
    encode(inst, packet);
    inst::Matmul typed = inst::Matmul::fromPacket(packet);
    EXPECT_EQ(typed.toInstruction(), inst);
    uint8_t again[kPacketBytes];
    typed.toPacket(again);
    ASSERT_TRUE(std::equal(std::begin(packet), std::end(packet), std::begin(again)));
  }
  inst::Softmax sm = inst::Softmax::fromPacket([] {
    static uint8_t p[kPacketBytes];
    encode(makeInstruction(Opcode::SOFTMAX), p);
    return p;
  }());
  EXPECT_EQ(sm.scale, 1.0f); // the default from the .td
  EXPECT_FALSE(sm.causal);
  EXPECT_EQ(sm.dtype, DType::f32);
}

} // namespace
