// Every fault class stops the stream at the faulting packet with a precise
// description, and never takes the host down.
#include "npu/sim/iss.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using namespace npu;
using ::testing::HasSubstr;

struct Outcome {
  sim::RunResult result;
  std::string description;
};

// Runs NOP, NOP, `bad` and returns how it stopped.
Outcome runWith(const isa::Packet &bad) {
  mem::PhysicalMemory memory;
  sim::Iss iss(memory, sim::Mode::Both);
  const isa::Packet nop = isa::packetOf(isa::inst::Nop{});
  const std::vector<isa::Packet> stream = {nop, nop, bad, nop};
  Outcome o{iss.run(stream), ""};
  if (o.result.fault)
    o.description = o.result.fault->describe();
  // The simulator stays usable after a fault.
  EXPECT_EQ(iss.run(std::vector<isa::Packet>{nop}).reason, sim::StopReason::EndOfStream);
  return o;
}

void expectFault(const Outcome &o, mem::FaultCode code, const std::string &detail) {
  ASSERT_EQ(o.result.reason, sim::StopReason::Fault);
  ASSERT_TRUE(o.result.fault);
  EXPECT_EQ(o.result.fault->code, code) << o.description;
  EXPECT_EQ(o.result.fault->packetIndex, 2) << o.description;
  EXPECT_EQ(o.result.packetsExecuted, 2u);
  EXPECT_THAT(o.description, HasSubstr(detail));
}

TEST(IssFaults, UnmappedAddress) {
  isa::inst::Copy copy;
  copy.dst = 0x1000'0000;
  copy.src = 0x7fff'0000'0000;
  copy.bytes = 16;
  expectFault(runWith(isa::packetOf(copy)), mem::FaultCode::Unmapped, "0x7fff00000000");
}

TEST(IssFaults, WriteToTheCsrWindowIsAPermissionFault) {
  isa::inst::Fill fill;
  fill.dst = 0x3000'0000;
  fill.count = 4;
  expectFault(runWith(isa::packetOf(fill)), mem::FaultCode::Permission, "fill");
}

TEST(IssFaults, AccessRunningPastItsRegion) {
  isa::inst::Copy copy;
  copy.dst = 0x1000'1000;
  copy.src = 0x0fff'fff0;
  copy.bytes = 32;
  expectFault(runWith(isa::packetOf(copy)), mem::FaultCode::OutOfRegion, "copy");
}

TEST(IssFaults, MisalignedOperand) {
  isa::Instruction inst = isa::makeInstruction(isa::Opcode::EXP);
  inst.operands[0] = 0x1000'0002; // dst of a 4-byte-aligned f32 operation
  inst.operands[1] = 0x1000'1000;
  inst.operands[2] = 4;
  isa::Packet p;
  isa::encode(inst, p);
  expectFault(runWith(p), mem::FaultCode::Misaligned, "not aligned to 4 bytes");
}

TEST(IssFaults, ZeroSizeIsAnInvalidOperand) {
  isa::inst::Exp exp;
  exp.dst = 0x1000'0000;
  exp.src = 0x1000'1000;
  exp.n = 0;
  expectFault(runWith(isa::packetOf(exp)), mem::FaultCode::InvalidOperand,
              "'n' = 0 is outside [1,");
}

TEST(IssFaults, PitchShorterThanTheRow) {
  isa::inst::Matmul mm;
  mm.c = 0x1000'0000;
  mm.a = 0x1001'0000;
  mm.b = 0x1002'0000;
  mm.m = mm.k = mm.n = 8;
  mm.lda = 4;
  expectFault(runWith(isa::packetOf(mm)), mem::FaultCode::InvalidOperand,
              "lda = 4 is less than the stored row length 8");
}

TEST(IssFaults, UnknownOpcode) {
  isa::Packet p{};
  p[0] = 0xee;
  expectFault(runWith(p), mem::FaultCode::UnknownOpcode, "unknown opcode 0x000000ee");
}

TEST(IssFaults, ReservedBitSet) {
  isa::Packet p = isa::packetOf(isa::inst::Nop{});
  p[20] = 1; // a byte of src0, which NOP does not use
  expectFault(runWith(p), mem::FaultCode::ReservedBits, "reserved bit");
}

TEST(IssFaults, OverlappingOperands) {
  isa::inst::Copy copy;
  copy.dst = 0x1000'0010;
  copy.src = 0x1000'0000;
  copy.bytes = 64;
  expectFault(runWith(isa::packetOf(copy)), mem::FaultCode::Overlap, "dst and src overlap");

  isa::inst::Matmul mm;
  mm.a = 0x1000'0000;
  mm.c = 0x1000'0100; // inside A's 16x16 floats
  mm.b = 0x1002'0000;
  mm.m = mm.k = mm.n = 16;
  expectFault(runWith(isa::packetOf(mm)), mem::FaultCode::Overlap, "c and a overlap");
}

TEST(IssFaults, EmbeddingIndexOutOfRange) {
  mem::PhysicalMemory memory;
  const int32_t indices[] = {0, 3, 9};
  memory.write(0x1000'0000, indices, sizeof indices);
  isa::inst::Embedding e;
  e.indices = 0x1000'0000;
  e.table = 0x1001'0000;
  e.dst = 0x1002'0000;
  e.count = 3;
  e.dim = 4;
  e.rows = 8;
  sim::Iss iss(memory);
  const std::vector<isa::Packet> stream = {isa::packetOf(e)};
  const sim::RunResult r = iss.run(stream);
  ASSERT_TRUE(r.fault);
  EXPECT_EQ(r.fault->code, mem::FaultCode::IndexOutOfRange);
  EXPECT_EQ(r.fault->address, 0x1000'0008u);
  EXPECT_THAT(r.fault->describe(), HasSubstr("index 9 at position 2 is outside [0, 8)"));
}

TEST(IssFaults, HaltStopsTheStream) {
  mem::PhysicalMemory memory;
  sim::Iss iss(memory);
  const std::vector<isa::Packet> stream = {isa::packetOf(isa::inst::Nop{}),
                                           isa::packetOf(isa::inst::Halt{}), isa::Packet{0xee}};
  const sim::RunResult r = iss.run(stream);
  EXPECT_EQ(r.reason, sim::StopReason::Halt);
  EXPECT_EQ(r.packetsExecuted, 2u);
}

} // namespace
