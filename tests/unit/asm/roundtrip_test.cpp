// Property tests: printed instructions, packets and whole containers
// assemble back to the same bytes.
#include "npu/asm/assembler.h"
#include "npu/asm/disassembler.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace {

using namespace npu;
using namespace npu::as;
using isa::OperandInfo;
using isa::OperandKind;

// Interesting f32 patterns: zeros, infinities, NaNs with payloads,
// denormals, extremes; otherwise random bits.
uint32_t randomF32Bits(std::mt19937_64 &rng) {
  static constexpr uint32_t kSpecial[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000,
                                          0x7fc00000, 0xffc00000, 0x7f800001, 0x00000001,
                                          0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff,
                                          0x3f800000, 0x4b800001, 0x5f000000, 0xdf000001};
  if (rng() % 4 == 0)
    return kSpecial[rng() % std::size(kSpecial)];
  return static_cast<uint32_t>(rng());
}

uint64_t randomOperand(const OperandInfo &op, std::mt19937_64 &rng) {
  const uint64_t mask = op.bitWidth >= 64 ? ~uint64_t(0) : (uint64_t(1) << op.bitWidth) - 1;
  switch (op.kind) {
  case OperandKind::Enum: {
    const std::vector<uint32_t> values = isa::acceptedValues(op);
    return values[rng() % values.size()];
  }
  case OperandKind::Flag: return rng() & 1;
  case OperandKind::F32: return randomF32Bits(rng);
  case OperandKind::Addr: return (rng() >> (rng() % 64)) & mask & ~uint64_t(op.align - 1);
  case OperandKind::U32:
  case OperandKind::I32: {
    int64_t lo = op.hasRange ? op.min : 0, hi = op.hasRange ? op.max : int64_t(mask);
    int64_t v;
    switch (rng() % 4) {
    case 0: v = lo; break;
    case 1: v = hi; break;
    default: v = lo + static_cast<int64_t>(rng() % (static_cast<uint64_t>(hi - lo) + 1));
    }
    return static_cast<uint64_t>(v) & mask;
  }
  case OperandKind::Bits32: return rng() & mask;
  }
  return 0;
}

TEST(AsmRoundTrip, RandomValidInstructionsOfEveryOpcode) {
  std::mt19937_64 rng(20240611);
  for (const isa::InstrInfo &ins : isa::instructions()) {
    std::vector<isa::Instruction> insts;
    std::string source;
    for (int trial = 0; trial < 2000; ++trial) {
      isa::Instruction inst;
      inst.opcode = ins.opcode;
      for (uint32_t i = 0; i < ins.numOperands; ++i)
        inst.operands[i] = randomOperand(ins.operands[i], rng);
      ASSERT_TRUE(isa::validate(inst));
      insts.push_back(inst);
      source += formatInstruction(inst) + "\n";
    }
    bin::Object obj = test::assembleOk(source);
    ASSERT_EQ(obj.text.size(), insts.size()) << ins.mnemonic;
    for (size_t i = 0; i < insts.size(); ++i) {
      bin::Packet expected;
      isa::encode(insts[i], expected);
      ASSERT_EQ(obj.text[i], expected) << formatInstruction(insts[i]);
    }
  }
}

TEST(AsmRoundTrip, ArbitraryPackets) {
  std::mt19937_64 rng(99);
  std::vector<bin::Packet> packets;
  for (int trial = 0; trial < 5000; ++trial) {
    bin::Packet p{};
    switch (trial % 3) {
    case 0: // fully random
      for (auto &b : p)
        b = static_cast<uint8_t>(rng());
      break;
    case 1: { // a valid instruction, sometimes with one bit flipped
      const auto all = isa::instructions();
      const isa::InstrInfo &ins = all[rng() % all.size()];
      isa::Instruction inst;
      inst.opcode = ins.opcode;
      for (uint32_t i = 0; i < ins.numOperands; ++i)
        inst.operands[i] = randomOperand(ins.operands[i], rng);
      isa::encode(inst, p);
      if (rng() % 2)
        p[rng() % p.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    }
    default: // a known opcode with random fields
      for (auto &b : p)
        b = rng() % 4 ? 0 : static_cast<uint8_t>(rng());
      const auto all = isa::instructions();
      const uint32_t opcode = static_cast<uint32_t>(all[rng() % all.size()].opcode);
      std::memcpy(p.data(), &opcode, 4);
    }
    packets.push_back(p);
  }
  std::string source;
  for (const bin::Packet &p : packets)
    source += formatPacket(p) + "\n";
  bin::Object obj = test::assembleOk(source);
  ASSERT_EQ(obj.text.size(), packets.size());
  for (size_t i = 0; i < packets.size(); ++i)
    ASSERT_EQ(obj.text[i], packets[i]) << formatPacket(packets[i]);
}

TEST(AsmRoundTrip, F32Formatting) {
  EXPECT_EQ(formatF32(0x3f800000), "1.0");
  EXPECT_EQ(formatF32(0x80000000), "-0.0");
  EXPECT_EQ(formatF32(0x7f800000), "inf");
  EXPECT_EQ(formatF32(0xff800000), "-inf");
  EXPECT_EQ(formatF32(0x7fc00000), "f32bits(0x7fc00000)");
  EXPECT_EQ(formatF32(0x3dcccccd), "0.1");
  std::mt19937_64 rng(5);
  std::string source = ".data 0\n";
  std::vector<uint32_t> bits;
  for (int i = 0; i < 20000; ++i) {
    bits.push_back(randomF32Bits(rng));
    source += ".float " + formatF32(bits.back()) + "\n";
  }
  bin::Object obj = test::assembleOk(source);
  ASSERT_EQ(obj.data.size(), 1u);
  for (size_t i = 0; i < bits.size(); ++i) {
    uint32_t got;
    std::memcpy(&got, &obj.data[0].bytes[4 * i], 4);
    ASSERT_EQ(got, bits[i]) << formatF32(bits[i]);
  }
}

// objdump output (both modes) of the examples re-assembles: the text
// section always, the whole container with --source.
class ExampleRoundTrip : public ::testing::TestWithParam<const char *> {};

TEST_P(ExampleRoundTrip, DisassemblyReassembles) {
  const std::string path = std::string(NPU_SOURCE_DIR) + "/examples/" + GetParam();
  AssembleResult original = assembleFile(path);
  ASSERT_TRUE(original.ok()) << (original.diagnostics.empty()
                                     ? std::string()
                                     : formatDiagnostic(original.diagnostics[0]));
  ASSERT_FALSE(original.object.text.empty());
  ASSERT_FALSE(original.object.checks.empty());
  for (bool full : {false, true}) {
    DumpOptions dump;
    dump.fullContents = full;
    dump.rawWords = !full;
    const std::string text = formatObject(original.object, dump);
    bin::Object again = test::assembleOk(text);
    EXPECT_EQ(again.text, original.object.text);
    if (full) {
      EXPECT_EQ(bin::write(again), bin::write(original.object));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleRoundTrip,
                         ::testing::Values("gemm.npuasm", "softmax.npuasm"));

} // namespace
