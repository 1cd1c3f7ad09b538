// Every fault class stops the stream at the faulting packet with its one-line
// description (fault_cases.h, which the RTL's tests share), before the packet
// wrote anything, and never takes the host down.
#include "fault_cases.h"
#include "npu/sim/checks.h"
#include "npu/sim/iss.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace npu;

class IssFaults : public ::testing::TestWithParam<test::FaultCase> {};

// NOP, NOP, the case's packet, NOP: the stream stops at packet 2 with the
// case's line, and the memory the packet's checks admitted is untouched
// (an index fault excepted: it writes the rows before the bad index).
TEST_P(IssFaults, StopAtThePacketWithItsLine) {
  const test::FaultCase &c = GetParam();
  mem::PhysicalMemory memory(test::faultCaseMap());
  for (const auto &[address, bytes] : c.data)
    memory.write(address, bytes.data(), bytes.size());
  std::vector<uint8_t> before(0x3'0000);
  memory.read(0x1000'0000, before.data(), before.size());
  sim::Iss iss(memory, sim::Mode::Both);
  const isa::Packet nop = isa::packetOf(isa::inst::Nop{});
  const std::vector<isa::Packet> stream = {nop, nop, c.packet, nop};
  const sim::RunResult result = iss.run(stream);
  ASSERT_EQ(result.reason, sim::StopReason::Fault) << c.name;
  ASSERT_TRUE(result.fault);
  EXPECT_EQ(result.fault->code, c.code) << c.name;
  EXPECT_EQ(result.fault->packetIndex, 2) << c.name;
  EXPECT_EQ(result.packetsExecuted, 2u);
  EXPECT_EQ(result.fault->describe(), c.text) << c.name;
  if (c.code != mem::FaultCode::IndexOutOfRange) {
    std::vector<uint8_t> after(before.size());
    memory.read(0x1000'0000, after.data(), after.size());
    EXPECT_EQ(before, after) << c.name << ": the faulting packet wrote";
  }
  // The simulator stays usable after a fault.
  EXPECT_EQ(iss.run(std::vector<isa::Packet>{nop}).reason, sim::StopReason::EndOfStream);
}

INSTANTIATE_TEST_SUITE_P(EveryClass, IssFaults, ::testing::ValuesIn(test::faultCases()),
                         test::FaultCaseName());

// checkPacket reports every operand's checked range of a packet that passes.
TEST(IssChecks, RangesOfAPassingPacket) {
  isa::inst::Matmul mm;
  mm.c = 0x1000'0000;
  mm.a = 0x1001'0000;
  mm.b = 0x1002'0000;
  mm.m = 3;
  mm.k = 5;
  mm.n = 7;
  mm.ldc = 9;
  mm.transa = true; // A stored 5 x 3
  mm.acc = true;
  sim::OperandRanges ranges;
  const isa::Packet p = isa::packetOf(mm);
  ASSERT_EQ(sim::checkPacket(p, mem::AddressMap::defaults(), ranges).code, mem::FaultCode::None);
  EXPECT_TRUE(ranges[0].accessed);
  EXPECT_EQ(ranges[0].bytes, uint64_t((2 * 9 + 7) * 4));
  EXPECT_EQ(ranges[0].access, mem::Access::Read | mem::Access::Write);
  EXPECT_EQ(ranges[1].bytes, uint64_t(5 * 3 * 4));
  EXPECT_EQ(ranges[1].access, mem::Access::Read);
  EXPECT_EQ(ranges[2].bytes, uint64_t(5 * 7 * 4));

  isa::inst::CopyStrided view; // a transposed 3 x 2 view of 1-byte elements, from its last
  view.dst = 0x1000'0000;
  view.src = 0x1001'0005;
  view.size0 = view.size1 = 1;
  view.size2 = 3;
  view.size3 = 2;
  view.stride2 = -1;
  view.stride3 = -3;
  view.esize = isa::ElemSize::byte;
  ASSERT_EQ(sim::checkPacket(isa::packetOf(view), mem::AddressMap::defaults(), ranges).code,
            mem::FaultCode::None);
  EXPECT_EQ(ranges[0].bytes, 6u);
  EXPECT_EQ(ranges[1].address, 0x1001'0000u);
  EXPECT_EQ(ranges[1].bytes, 6u);
}

// An operand whose condition flag is clear is not checked at all.
TEST(IssChecks, OperandsOutsideTheirConditionAreNotChecked) {
  mem::PhysicalMemory memory;
  sim::Iss iss(memory);
  isa::inst::Rmsnorm norm;
  norm.dst = 0x1000'0000;
  norm.src = 0x1000'1000;
  norm.weight = 0x6000'0000; // unmapped
  norm.rstd = 0x6000'0000;
  norm.rows = 2;
  norm.cols = 4;
  EXPECT_NO_THROW(iss.step(isa::packetOf(norm), 0));
}

TEST(IssFaultsStream, HaltStopsTheStream) {
  mem::PhysicalMemory memory;
  sim::Iss iss(memory);
  const std::vector<isa::Packet> stream = {isa::packetOf(isa::inst::Nop{}),
                                           isa::packetOf(isa::inst::Halt{}), isa::Packet{0xee}};
  const sim::RunResult r = iss.run(stream);
  EXPECT_EQ(r.reason, sim::StopReason::Halt);
  EXPECT_EQ(r.packetsExecuted, 2u);
}

} // namespace
