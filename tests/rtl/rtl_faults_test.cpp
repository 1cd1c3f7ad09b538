// The RTL enforces what the ISS enforces, before a packet's engine starts,
// and describes each fault with the ISS's words: for every fault class of
// tests/unit/sim/fault_cases.h, the ISS and the RTL stop at the same packet
// with string-equal lines and identical memory; through the runtime, the
// rtl and cosim backends report exactly what the iss backend reports; and
// co-simulation finds a write only one side made.
#include "fault_cases.h"
#include "npu/rt/backend.h"
#include "npu/rt/runtime.h"
#include "npu/sim/iss.h"
#include "npu_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace npu;
using ::testing::HasSubstr;

constexpr uint64_t kRing = 0x2000'0000;
constexpr uint64_t kArena = 0x1000'0000, kArenaBytes = 0x3'0000;

// Puts `stream` in the ring at kRing and rings the doorbell.
void startRing(rtl::Device &device, mem::PhysicalMemory &memory,
               const std::vector<isa::Packet> &stream) {
  for (size_t i = 0; i < stream.size(); ++i)
    memory.write(kRing + 64 * i, stream[i].data(), 64);
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRing));
  device.writeCsr(RING_ENTRIES, 4);
  device.writeCsr(RING_TAIL, static_cast<uint32_t>(stream.size()));
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
  using namespace isa::csr;
  const uint64_t start = device.cycle();
  startRing(device, rtlMemory, stream);
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
                         test::FaultCaseName());

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

// The fault registers themselves agree: a driver reading ERROR_CODE,
// FAULT_PACKET, FAULT_ADDR, FAULT_OPERAND and FAULT_LENGTH sees the same
// values on the iss backend's register model and on the RTL.
TEST(RtlFaultRegisters, EqualOnTheIssAndTheRtlBackends) {
  using namespace isa::csr;
  for (const test::FaultCase &c : test::faultCases()) {
    std::vector<uint32_t> values[2];
    int side = 0;
    for (const char *name : {"iss", "rtl"}) {
      rt::BackendOptions options;
      options.addressMap = test::faultCaseMap();
      std::unique_ptr<rt::Backend> backend = rt::createBackend(name, options);
      for (const auto &[address, bytes] : c.data)
        backend->writeMemory(address, bytes.data(), bytes.size());
      const isa::Packet nop = isa::packetOf(isa::inst::Nop{});
      const isa::Packet stream[] = {nop, nop, c.packet};
      backend->writeMemory(kRing, stream, sizeof stream);
      backend->writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRing));
      backend->writeCsr(RING_ENTRIES, 4);
      backend->writeCsr(RING_TAIL, 3);
      backend->waitIdle();
      for (uint32_t reg :
           {STATUS, ERROR_CODE, FAULT_PACKET_LO, FAULT_PACKET_HI, FAULT_ADDR_LO, FAULT_ADDR_HI,
            FAULT_OPERAND, FAULT_LENGTH_LO, FAULT_LENGTH_HI, RING_HEAD})
        values[side].push_back(backend->readCsr(reg));
      EXPECT_EQ(backend->deviceFault().describe(), c.text) << name << ": " << c.name;
      ++side;
    }
    EXPECT_EQ(values[0], values[1]) << c.name;
    EXPECT_EQ(values[1][0], STATUS_FAULT) << c.name;
  }
}

// The harness programs the region table from the address map, and RESET
// keeps it: every region with what the engines may do there.
TEST(RtlRegionTable, ProgrammedFromTheMapAndKeptByReset) {
  using namespace isa::csr;
  const mem::AddressMap map = test::faultCaseMap();
  mem::PhysicalMemory memory(map);
  rtl::Device device(memory, rtl::DeviceOptions{});
  device.writeCsr(CONTROL, CONTROL_RESET);
  for (uint32_t e = 0; e < isa::hw::kRegionEntries; ++e) {
    device.writeCsr(REGION_SELECT, e);
    EXPECT_EQ(device.readCsr(REGION_SELECT), e);
    const mem::Region *region = e < map.regions.size() ? &map.regions[e] : nullptr;
    const uint64_t base = device.readCsr(REGION_BASE_LO) | uint64_t(device.readCsr(REGION_BASE_HI))
                                                               << 32;
    const uint64_t size = device.readCsr(REGION_SIZE_LO) | uint64_t(device.readCsr(REGION_SIZE_HI))
                                                               << 32;
    EXPECT_EQ(base, region ? region->base : 0) << e;
    EXPECT_EQ(size, region ? region->size : 0) << e;
    const uint32_t access = region ? (region->engineReadable() ? REGION_ACCESS_READ : 0u) |
                                         (region->engineWritable() ? REGION_ACCESS_WRITE : 0u)
                                   : 0u;
    EXPECT_EQ(device.readCsr(REGION_ACCESS), access) << e;
  }
  device.writeCsr(REGION_SELECT, isa::hw::kRegionEntries + 1); // selects modulo the entries
  EXPECT_EQ(device.readCsr(REGION_SELECT), 1u);

  mem::AddressMap crowded = mem::AddressMap::defaults();
  for (uint64_t i = 0; crowded.regions.size() <= isa::hw::kRegionEntries; ++i)
    crowded.regions.push_back(
        {.name = "extra" + std::to_string(i), .base = 0x6000'0000 + i * 4096, .size = 4096});
  mem::PhysicalMemory crowdedMemory(crowded);
  try {
    rtl::Device tooMany(crowdedMemory, rtl::DeviceOptions{});
    ADD_FAILURE() << "a map larger than the region table was accepted";
  } catch (const std::invalid_argument &e) {
    EXPECT_THAT(e.what(),
                HasSubstr("the address map has 9 regions; the RTL's region table holds 8"));
  }
}

// Region entries are 64-bit: a base and a size past 4 GiB keep both words
// (the address maps of the streams are smaller, so only this test sees them).
TEST(RtlRegionTable, EntriesPastFourGiBKeepTheirHighWords) {
  using namespace isa::csr;
  mem::PhysicalMemory memory(test::faultCaseMap());
  rtl::Device device(memory, rtl::DeviceOptions{});
  for (uint32_t e = 0; e < isa::hw::kRegionEntries; ++e) {
    device.writeCsr(REGION_SELECT, e);
    device.writeCsr(REGION_BASE_LO, 0x1000 * (e + 1));
    device.writeCsr(REGION_BASE_HI, 0x10 + e);
    device.writeCsr(REGION_SIZE_LO, 0x2000 * (e + 1));
    device.writeCsr(REGION_SIZE_HI, 0x3 + e);
  }
  for (uint32_t e = 0; e < isa::hw::kRegionEntries; ++e) {
    device.writeCsr(REGION_SELECT, e);
    EXPECT_EQ(device.readCsr(REGION_BASE_LO), 0x1000 * (e + 1)) << e;
    EXPECT_EQ(device.readCsr(REGION_BASE_HI), 0x10 + e) << e;
    EXPECT_EQ(device.readCsr(REGION_SIZE_LO), 0x2000 * (e + 1)) << e;
    EXPECT_EQ(device.readCsr(REGION_SIZE_HI), 0x3 + e) << e;
  }
}

// A range that ends exactly at 2^64 is valid: the RTL moves it like the ISS.
TEST(RtlTopOfMemory, ARangeEndingAt2To64) {
  mem::PhysicalMemory issMemory(test::faultCaseMap()), rtlMemory(test::faultCaseMap());
  isa::inst::Fill fill;
  fill.dst = 0xffff'ffff'ffff'ff00;
  fill.count = 64;
  fill.value = 0x5a5a'1234;
  isa::inst::Copy copy;
  copy.dst = 0x1000'0000;
  copy.src = 0xffff'ffff'ffff'ffc4;
  copy.bytes = 60;
  const std::vector<isa::Packet> stream = {isa::packetOf(fill), isa::packetOf(copy)};
  sim::Iss iss(issMemory, sim::Mode::Func);
  ASSERT_FALSE(iss.run(stream).fault);
  rtl::Device device(rtlMemory, rtl::DeviceOptions{});
  using namespace isa::csr;
  startRing(device, rtlMemory, stream);
  device.runUntilIdle();
  ASSERT_EQ(device.readCsr(STATUS) & STATUS_FAULT, 0u) << device.fault().describe();
  EXPECT_EQ(device.readCsr(RING_HEAD), 2u);
  for (uint64_t at : {uint64_t(0x1000'0000), uint64_t(0xffff'ffff'ffff'f000)}) {
    std::vector<uint8_t> a(4096), b(4096);
    issMemory.read(at, a.data(), a.size());
    rtlMemory.read(at, b.data(), b.size());
    EXPECT_TRUE(a == b) << std::hex << at;
  }
  std::vector<uint8_t> low(64);
  rtlMemory.read(0, low.data(), low.size());
  EXPECT_EQ(low, std::vector<uint8_t>(64)) << "a write wrapped to address 0";
}

// A burst the interconnect refuses although the region table allows it (a
// bus error, which no stream can provoke: the harness injects it): the
// engine stops issuing, takes the data and responses of every burst in
// flight, and faults with the code the slave returned; after RESET the
// device runs the next stream as if nothing had happened. For a refused
// write of the DMA and of the vector engine, and a refused read of an
// EMBEDDING's indices and of a MATMUL's A.
TEST(RtlFaults, AnInterconnectErrorDrainsWhatIsInFlightThenFaults) {
  constexpr uint64_t kRefused = kArena + 0x1'0000, kClean = kArena + 0x2'0000;
  isa::inst::Copy copy;
  copy.dst = kRefused - 0x1000;
  copy.src = kClean;
  copy.bytes = 0x4000;
  isa::inst::Add add;
  add.dst = kRefused - 0x800;
  add.a = add.b = kClean;
  add.rows = 4;
  add.cols = 1024;
  isa::inst::Embedding embedding;
  embedding.dst = kClean;
  embedding.table = kClean + 0x8000;
  embedding.indices = kRefused - 0x200;
  embedding.count = 512;
  embedding.dim = 4;
  embedding.rows = 8;
  isa::inst::Matmul matmul;
  matmul.c = kClean;
  matmul.a = kRefused - 0x400;
  matmul.b = kClean + 0x8000;
  matmul.m = 64;
  matmul.k = 64;
  matmul.n = 16;
  const std::pair<const char *, isa::Packet> cases[] = {
      {"copy, a refused write", isa::packetOf(copy)},
      {"add, a refused write", isa::packetOf(add)},
      {"embedding, a refused index read", isa::packetOf(embedding)},
      {"matmul, a refused read of a", isa::packetOf(matmul)}};
  for (const auto &[name, packet] : cases) {
    mem::PhysicalMemory memory(test::faultCaseMap());
    rtl::DeviceOptions options;
    options.refusedBase = kRefused;
    options.refusedBytes = 0x1000;
    rtl::Device device(memory, options);
    using namespace isa::csr;
    startRing(device, memory, {packet});
    device.runUntilIdle();
    ASSERT_TRUE(device.readCsr(STATUS) & STATUS_FAULT) << name;
    EXPECT_EQ(device.readCsr(ERROR_CODE), uint32_t(mem::FaultCode::Unmapped)) << name;
    EXPECT_EQ(device.readCsr(RING_HEAD), 0u) << name;
    EXPECT_EQ(device.burstsInFlight(), 0u) << name << ": the engine left bursts in flight";

    device.writeCsr(CONTROL, CONTROL_RESET);
    isa::inst::Fill fill;
    fill.dst = kClean + 0x1'0000;
    fill.count = 2048;
    fill.value = 0x3f80'0000;
    isa::inst::Copy after;
    after.dst = kClean + 0x1'4000;
    after.src = fill.dst;
    after.bytes = 8192;
    startRing(device, memory, {isa::packetOf(fill), isa::packetOf(after)});
    device.runUntilIdle();
    ASSERT_EQ(device.readCsr(STATUS) & STATUS_FAULT, 0u) << name << ": " << device.fault().describe();
    EXPECT_EQ(device.readCsr(RING_HEAD), 2u) << name;
    std::vector<uint32_t> copied(2048);
    memory.read(after.dst, copied.data(), 8192);
    EXPECT_EQ(copied, std::vector<uint32_t>(2048, 0x3f80'0000u)) << name;
    EXPECT_EQ(device.burstsInFlight(), 0u) << name;
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
