// The RTL enforces what the ISS enforces, before a packet's engine starts,
// and describes each fault with the ISS's words: for every fault class of
// tests/unit/sim/fault_cases.h, the ISS and the RTL stop at the same packet
// with string-equal lines and identical memory; through the runtime, the
// rtl and cosim backends report exactly what the iss backend reports; and
// co-simulation finds a write only one side made.
#include "fault_cases.h"
#include "npu/rt/runtime.h"
#include "npu/sim/iss.h"
#include "npu_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace npu;
using ::testing::HasSubstr;

constexpr uint64_t kRing = 0x2000'0000;
constexpr uint64_t kArena = 0x1000'0000, kArenaBytes = 0x3'0000;

std::string caseName(const ::testing::TestParamInfo<test::FaultCase> &info) {
  std::string name;
  for (char ch : std::string(info.param.name))
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

class RtlFaultText : public ::testing::TestWithParam<test::FaultCase> {};

// NOP, NOP, the case's packet through the RTL's ring; the same stream on the
// ISS. Both stop at packet 2 with the case's line, the RTL before its
// engine moved a byte (within a few hundred cycles, whatever the operand
// sizes), and both memories end identical.
TEST_P(RtlFaultText, TheIssLineForEveryClass) {
  const test::FaultCase &c = GetParam();
  mem::PhysicalMemory issMemory(test::faultCaseMap()), rtlMemory(test::faultCaseMap());
  for (const auto &[address, bytes] : c.data) {
    issMemory.write(address, bytes.data(), bytes.size());
    rtlMemory.write(address, bytes.data(), bytes.size());
  }
  const isa::Packet nop = isa::packetOf(isa::inst::Nop{});
  const std::vector<isa::Packet> stream = {nop, nop, c.packet};

  sim::Iss iss(issMemory, sim::Mode::Func);
  const sim::RunResult issRun = iss.run(stream);
  ASSERT_TRUE(issRun.fault) << c.name;

  rtl::Device device(rtlMemory, rtl::DeviceOptions{});
  for (size_t i = 0; i < stream.size(); ++i)
    rtlMemory.write(kRing + 64 * i, stream[i].data(), 64);
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRing));
  device.writeCsr(RING_ENTRIES, 4);
  const uint64_t start = device.cycle();
  device.writeCsr(RING_TAIL, static_cast<uint32_t>(stream.size()));
  device.runUntilIdle();
  EXPECT_LT(device.cycle() - start, 1000u) << c.name << ": the fault came late";
  ASSERT_TRUE(device.readCsr(STATUS) & STATUS_FAULT) << c.name;
  EXPECT_EQ(device.readCsr(RING_HEAD), 2u);
  const mem::Fault fault = device.fault();

  EXPECT_EQ(fault.describe(), issRun.fault->describe()) << c.name;
  EXPECT_EQ(fault.describe(), c.text) << c.name;
  EXPECT_EQ(fault.code, c.code);
  EXPECT_EQ(fault.packetIndex, 2);
  EXPECT_EQ(fault.address, issRun.fault->address);
  if (c.code != mem::FaultCode::UnknownOpcode) {
    EXPECT_FALSE(fault.instruction.empty()) << c.name;
    EXPECT_THAT(
        fault.describe(),
        HasSubstr(fault.instruction + (fault.operand.empty() ? ":" : " " + fault.operand + ":")));
  }
  if (fault.code == mem::FaultCode::Unmapped || fault.code == mem::FaultCode::Permission ||
      fault.code == mem::FaultCode::OutOfRegion) {
    char bytes[64];
    std::snprintf(bytes, sizeof bytes, " of %" PRIu64 " bytes at 0x", fault.length);
    EXPECT_THAT(fault.describe(), HasSubstr(bytes)) << c.name;
    EXPECT_FALSE(fault.region.empty()) << c.name;
  }

  std::vector<uint8_t> a(kArenaBytes), b(kArenaBytes);
  issMemory.read(kArena, a.data(), a.size());
  rtlMemory.read(kArena, b.data(), b.size());
  EXPECT_TRUE(a == b) << c.name << ": the memories differ after the fault";
}

INSTANTIATE_TEST_SUITE_P(EveryClass, RtlFaultText, ::testing::ValuesIn(test::faultCases()),
                         caseName);

rt::RuntimeOptions on(const char *backend) {
  rt::RuntimeOptions o;
  o.backend = backend;
  o.backendOptions.addressMap = test::faultCaseMap();
  return o;
}

// What the runtime reports for `packet` after two fills, on one backend.
std::string reportOf(const char *backend, const isa::Packet &packet) {
  rt::Runtime runtime(on(backend));
  isa::inst::Fill fill;
  fill.dst = 0x1000'0000;
  fill.count = 8;
  const isa::Packet stream[] = {isa::packetOf(fill), isa::packetOf(fill), packet};
  runtime.submit(stream);
  try {
    runtime.synchronize();
  } catch (const rt::Error &e) {
    return e.what();
  }
  return "no fault";
}

// The whole runtime message, stream index and disassembly included, is the
// same on every backend.
TEST(RtlFaultReport, EveryBackendSaysTheSame) {
  for (const test::FaultCase &c : test::faultCases()) {
    if (!c.data.empty())
      continue; // the runtime's allocator owns the arena; index faults are covered above
    const std::string iss = reportOf("iss", c.packet);
    EXPECT_THAT(iss, HasSubstr("stream packet 2")) << c.name;
    EXPECT_THAT(iss, HasSubstr(c.text)) << c.name;
    EXPECT_EQ(reportOf("rtl", c.packet), iss) << c.name;
    EXPECT_EQ(reportOf("cosim", c.packet), iss) << c.name;
  }
}

// Above its full-compare limit cosim compares the union of both write sets:
// a write the RTL never made (the harness drops the first written beat of
// packet 1) is found at packet 1 with its address.
TEST(CosimUnion, AWriteOnlyTheIssMadeIsFound) {
  ::setenv("NPU_RTL_DROP_WRITE_AT_PACKET", "1", 1);
  rt::RuntimeOptions options;
  options.backend = "cosim";
  rt::Runtime cosim(options);
  ::unsetenv("NPU_RTL_DROP_WRITE_AT_PACKET");
  // More resident memory than the limit below which every page is compared.
  const uint64_t bulk = cosim.malloc(17u << 20);
  cosim.memset(bulk, 1, 17u << 20);
  const uint64_t a = cosim.malloc(256), b = cosim.malloc(256);
  isa::inst::Fill first, second;
  first.dst = a;
  first.count = 16;
  first.value = 0x11111111;
  second.dst = b;
  second.count = 16;
  second.value = 0x22222222;
  const isa::Packet stream[] = {isa::packetOf(first), isa::packetOf(second)};
  cosim.submit(stream);
  EXPECT_THROW(cosim.synchronize(), rt::Error);
  const auto fault = cosim.lastFault();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->fault.code, mem::FaultCode::Divergence);
  EXPECT_EQ(fault->streamIndex, 1u);
  char address[32];
  std::snprintf(address, sizeof address, "memory differs at 0x%" PRIx64 ":", b);
  EXPECT_THAT(fault->describe(), HasSubstr(address));
  EXPECT_THAT(fault->describe(), HasSubstr("ISS 0x22222222"));
}

} // namespace
