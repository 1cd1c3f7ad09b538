// The rtl and cosim backends through the runtime: selection by name and by
// $NPU_BACKEND, results equal to the ISS backend's, statistics and records,
// faults with their stream index and disassembly, recovery by reset, the
// cosim divergence report, and hang detection.
#include "npu/rt/backend.h"
#include "npu/rt/runtime.h"
#include "npu_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace {

using namespace npu;
using ::testing::HasSubstr;

rt::RuntimeOptions on(const char *backend) {
  rt::RuntimeOptions o;
  o.backend = backend;
  return o;
}

// SOFTMAX then SILU over a 13 x 21 matrix of random values; returns the result.
std::vector<float> softmaxSilu(rt::Runtime &runtime) {
  constexpr uint32_t rows = 13, cols = 21;
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(rows * cols);
  for (float &v : x)
    v = normal(rng);
  const uint64_t buffer = runtime.malloc(x.size() * 4);
  runtime.memcpyHostToDevice(buffer, x.data(), x.size() * 4);
  isa::inst::Softmax sm;
  sm.rows = rows;
  sm.cols = cols;
  sm.scale = 0.5f;
  sm.causal = true;
  sm.src = sm.dst = buffer;
  isa::inst::Silu silu;
  silu.n = rows * cols;
  silu.src = silu.dst = buffer;
  const isa::Packet stream[] = {isa::packetOf(sm), isa::packetOf(silu)};
  runtime.submit(stream);
  runtime.synchronize();
  runtime.memcpyDeviceToHost(x.data(), buffer, x.size() * 4);
  return x;
}

TEST(RtlBackend, ComputesWhatTheIssComputesAndCountsItsCycles) {
  rt::Runtime iss(on("iss")), rtl(on("rtl"));
  EXPECT_EQ(rtl.backendName(), "rtl");
  rtl.setRecording(true);
  const std::vector<float> a = softmaxSilu(iss), b = softmaxSilu(rtl);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
  const sim::Stats stats = rtl.deviceStats();
  EXPECT_EQ(stats.packets, 2u);
  EXPECT_GT(stats.cycles, 0u);
  EXPECT_EQ(rtl.deviceCycles(), stats.cycles);
  const std::vector<sim::PacketRecord> records = rtl.takeRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].opcode, isa::Opcode::SOFTMAX);
  EXPECT_EQ(records[1].opcode, isa::Opcode::SILU);
  EXPECT_EQ(records[1].index, 1u);
  EXPECT_LT(records[0].startCycle, records[0].endCycle);
  EXPECT_EQ(records[0].endCycle, records[1].startCycle);
  EXPECT_EQ(records[1].endCycle, stats.cycles);
  EXPECT_GT(records[0].bytesRead, 0u);
}

TEST(RtlBackend, SelectedByTheEnvironment) {
  ::setenv("NPU_BACKEND", "rtl", 1);
  rt::Runtime runtime;
  ::unsetenv("NPU_BACKEND");
  EXPECT_EQ(runtime.backendName(), "rtl");
}

TEST(RtlBackend, FaultNamesTheStreamIndexAndRecoversAfterReset) {
  rt::Runtime runtime(on("rtl"));
  const uint64_t buffer = runtime.malloc(256);
  isa::inst::Fill fill;
  fill.count = 16;
  fill.value = 0x3f800000;
  fill.dst = buffer;
  isa::inst::Exp bad;
  bad.n = 16;
  bad.src = buffer;
  bad.dst = 0x4000'0000; // unmapped
  const isa::Packet stream[] = {isa::packetOf(fill), isa::packetOf(fill), isa::packetOf(bad),
                                isa::packetOf(fill)};
  runtime.submit(stream);
  EXPECT_THROW(runtime.synchronize(), rt::Error);
  const auto fault = runtime.lastFault();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->fault.code, mem::FaultCode::Unmapped);
  EXPECT_EQ(fault->fault.address, 0x4000'0000u);
  EXPECT_EQ(fault->streamIndex, 2u);
  EXPECT_THAT(fault->disassembly, HasSubstr("exp"));
  runtime.reset();
  const isa::Packet again[] = {isa::packetOf(fill)};
  runtime.submit(again);
  EXPECT_NO_THROW(runtime.synchronize());
}

// An index out of range reads as on the ISS: the index, its position and
// the table's rows, for EMBEDDING (i64) and EMBEDDING_BWD (i32).
TEST(RtlBackend, IndexFaultNamesTheIndexAndTheRows) {
  rt::Runtime runtime(on("rtl"));
  const uint64_t table = runtime.malloc(11 * 6 * 4), out = runtime.malloc(3 * 6 * 4);
  const uint64_t indices = runtime.malloc(64);
  const int64_t wide[] = {1, 99, 2};
  runtime.memcpyHostToDevice(indices, wide, sizeof wide);
  isa::inst::Embedding e;
  e.dst = out;
  e.table = table;
  e.indices = indices;
  e.count = 3;
  e.dim = 6;
  e.rows = 11;
  e.itype = isa::IndexType::i64;
  const isa::Packet forward[] = {isa::packetOf(e)};
  runtime.submit(forward);
  try {
    runtime.synchronize();
    FAIL() << "no fault";
  } catch (const rt::Error &error) {
    EXPECT_THAT(error.what(), HasSubstr("index 99 at position 1 is outside [0, 11)"));
  }
  runtime.reset();
  const int32_t narrow[] = {0, 3, -4};
  runtime.memcpyHostToDevice(indices, narrow, sizeof narrow);
  isa::inst::EmbeddingBwd b;
  b.dtable = table;
  b.dy = out;
  b.indices = indices;
  b.count = 3;
  b.dim = 6;
  b.rows = 11;
  const isa::Packet backward[] = {isa::packetOf(b)};
  runtime.submit(backward);
  try {
    runtime.synchronize();
    FAIL() << "no fault";
  } catch (const rt::Error &error) {
    EXPECT_THAT(error.what(), HasSubstr("index -4 at position 2 is outside [0, 11)"));
  }
}

TEST(CosimBackend, RunsBothModelsAndReportsCyclesSideBySide) {
  rt::Runtime iss(on("iss")), cosim(on("cosim"));
  const std::vector<float> a = softmaxSilu(iss), b = softmaxSilu(cosim);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
  const std::string summary = cosim.backendSummary();
  EXPECT_THAT(summary, HasSubstr("cosim cycles: iss "));
  EXPECT_THAT(summary, HasSubstr("softmax"));
  EXPECT_THAT(summary, HasSubstr("silu"));
}

// RMSNORM_BWD whose weight gradient aliases the weight. The ISS would read
// the original weight for every row, the RTL its running gradient, so the
// ISA forbids the alias: both models fault Overlap and agree.
isa::inst::RmsnormBwd rmsnormBwdOn(rt::Runtime &runtime) {
  constexpr uint32_t rows = 3, cols = 10;
  std::vector<float> x(rows * cols), ones(cols, 1.0f), rstd(rows, 0.5f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  const uint64_t bx = runtime.malloc(x.size() * 4), bdy = runtime.malloc(x.size() * 4),
                 bw = runtime.malloc(cols * 4), br = runtime.malloc(rows * 4);
  runtime.memcpyHostToDevice(bx, x.data(), x.size() * 4);
  runtime.memcpyHostToDevice(bdy, x.data(), x.size() * 4);
  runtime.memcpyHostToDevice(bw, ones.data(), cols * 4);
  runtime.memcpyHostToDevice(br, rstd.data(), rows * 4);
  isa::inst::RmsnormBwd op;
  op.rows = rows;
  op.cols = cols;
  op.use_weight = true;
  op.write_dweight = true;
  op.x = bx;
  op.dy = bdy;
  op.dx = runtime.malloc(x.size() * 4);
  op.weight = bw;
  op.dweight = runtime.malloc(cols * 4);
  op.rstd = br;
  return op;
}

TEST(CosimBackend, AWeightGradientOnTheWeightIsAnOverlapFaultOfBothModels) {
  rt::Runtime cosim(on("cosim"));
  isa::inst::RmsnormBwd op = rmsnormBwdOn(cosim);
  op.dweight = op.weight;
  const isa::Packet stream[] = {isa::packetOf(op)};
  cosim.submit(stream);
  EXPECT_THROW(cosim.synchronize(), rt::Error);
  const auto fault = cosim.lastFault();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->fault.code, mem::FaultCode::Overlap) << fault->describe();
  EXPECT_THAT(fault->describe(), HasSubstr("RMSNORM_BWD dweight"));
}

// The harness drops the RTL's first written beat of packet 0 (its fault
// injection for checkers): cosim stops at that packet with the address, both
// values and their distance in ulp.
TEST(CosimBackend, StopsAtTheFirstDivergenceWithAddressValuesAndUlp) {
  ::setenv("NPU_RTL_DROP_WRITE_AT_PACKET", "0", 1);
  rt::Runtime cosim(on("cosim"));
  ::unsetenv("NPU_RTL_DROP_WRITE_AT_PACKET");
  const isa::Packet stream[] = {isa::packetOf(rmsnormBwdOn(cosim))};
  cosim.submit(stream);
  EXPECT_THROW(cosim.synchronize(), rt::Error);
  const auto fault = cosim.lastFault();
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->fault.code, mem::FaultCode::Divergence);
  EXPECT_EQ(fault->streamIndex, 0u);
  EXPECT_THAT(fault->describe(), HasSubstr("stream packet 0 (rmsnorm_bwd"));
  EXPECT_THAT(fault->describe(), HasSubstr("ISS/RTL divergence at packet 0: memory differs at 0x"));
  EXPECT_THAT(fault->fault.detail, HasSubstr("ulp"));
}

// AdamW writes exp_avg and then exp_avg_sq beat after beat: with exp_avg
// ending exactly where the 'weights' region ends and exp_avg_sq starting
// the next region, the RTL's written ranges meet across the boundary. The
// comparison reads them region by region, and the packet completes.
TEST(CosimBackend, WritesMeetingAtARegionBoundaryAreComparedRegionByRegion) {
  rt::Runtime cosim(on("cosim"));
  constexpr uint32_t n = 8;
  const mem::Region *weights = mem::AddressMap::defaults().byName("weights");
  ASSERT_NE(weights, nullptr);
  const uint64_t regionEnd = weights->base + weights->size;
  std::vector<float> values(n, 0.5f), hyper = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.1f, 0.03f, 0};
  isa::inst::Adamw op;
  op.n = n;
  op.exp_avg_sq = cosim.malloc(n * 4);
  ASSERT_EQ(op.exp_avg_sq, regionEnd) << "the allocator's first block starts the next region";
  op.param = cosim.malloc(n * 4);
  op.grad = cosim.malloc(n * 4);
  op.hyper = cosim.malloc(hyper.size() * 4);
  op.exp_avg = regionEnd - n * 4;
  for (uint64_t address : {op.param, op.grad, op.exp_avg, op.exp_avg_sq})
    cosim.writePhysical(address, values.data(), n * 4);
  cosim.memcpyHostToDevice(op.hyper, hyper.data(), hyper.size() * 4);
  const isa::Packet stream[] = {isa::packetOf(op)};
  cosim.submit(stream);
  EXPECT_NO_THROW(cosim.synchronize());
  EXPECT_FALSE(cosim.lastFault()) << cosim.lastFault()->describe();
}

// Puts `packet` into a ring of 4 at 0x2000'0000 and rings the doorbell.
void ringOne(rtl::Device &device, mem::PhysicalMemory &memory, const isa::Packet &packet) {
  memory.write(0x2000'0000, packet.data(), packet.size());
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, 0x2000'0000);
  device.writeCsr(RING_ENTRIES, 4);
  device.writeCsr(RING_TAIL, 1);
}

// The command processor fetches a slot at any alignment (docs/rtl.md): a
// ring base 8 bytes past a beat boundary puts every 64-byte slot across
// three beats, which the fetch must stage and shift back into one packet.
// The co-simulation compares every register a driver reads with the RTL's
// after each packet, so the backends modelled in C++ must hold the region
// table the RTL's boot programming leaves (they once read it as zeros).
TEST(CosimBackend, EveryBackendReadsTheSameRegionTable) {
  using namespace isa::csr;
  const rt::BackendOptions options;
  std::vector<std::unique_ptr<rt::Backend>> backends;
  for (const char *name : {"iss", "rtl", "cosim"})
    backends.push_back(rt::createBackend(name, options));
  ASSERT_GT(options.addressMap.regions.size(), 2u);
  for (uint32_t e = 0; e < isa::hw::kRegionEntries; ++e) {
    std::vector<uint32_t> expected;
    for (const auto &backend : backends) {
      backend->writeCsr(REGION_SELECT, e);
      const std::vector<uint32_t> values{
          backend->readCsr(REGION_BASE_LO), backend->readCsr(REGION_BASE_HI),
          backend->readCsr(REGION_SIZE_LO), backend->readCsr(REGION_SIZE_HI),
          backend->readCsr(REGION_ACCESS)};
      if (expected.empty())
        expected = values;
      EXPECT_EQ(values, expected) << backend->name() << ", entry " << e;
    }
    if (e < options.addressMap.regions.size()) {
      const mem::Region &r = options.addressMap.regions[e];
      EXPECT_EQ(expected[0] | uint64_t(expected[1]) << 32, r.base) << e;
      EXPECT_EQ(expected[2] | uint64_t(expected[3]) << 32, r.size) << e;
    } else {
      EXPECT_EQ(expected, std::vector<uint32_t>(5, 0u)) << e;
    }
  }
}

// From reset every engine is idle: nothing reads or writes memory before
// the first doorbell, however long the device is clocked (the CSR accesses
// clock it). The streams cannot see this: the co-simulation tracks accesses
// from the first packet on.
TEST(RtlDevice, NoEngineTouchesMemoryBeforeTheFirstPacket) {
  mem::PhysicalMemory memory;
  rtl::Device device(memory);
  using namespace isa::csr;
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(device.readCsr(STATUS), 0u) << "read " << i;
  const rtl::AxiCounts &counts = device.axiCounts();
  EXPECT_EQ(counts.arHandshakes, 0u);
  EXPECT_EQ(counts.awHandshakes, 0u);
  EXPECT_EQ(counts.wHandshakes, 0u);
  EXPECT_EQ(device.burstsInFlight(), 0u);
}

TEST(RtlDevice, RingAtAnUnalignedBaseRunsItsPackets) {
  mem::PhysicalMemory memory;
  rtl::Device device(memory);
  constexpr uint64_t ring = 0x2000'0000 + 8, buffer = 0x1000'0000;
  constexpr uint32_t packets = 3;
  for (uint32_t i = 0; i < packets; ++i) {
    isa::inst::Fill fill;
    fill.count = 8;
    fill.value = 0x100u * (i + 1) + i;
    fill.dst = buffer + 64u * i;
    const isa::Packet p = isa::packetOf(fill);
    memory.write(ring + uint64_t(i) * isa::kPacketBytes, p.data(), p.size());
  }
  using namespace isa::csr;
  device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(ring));
  device.writeCsr(RING_ENTRIES, 4);
  device.writeCsr(RING_TAIL, packets);
  device.runUntilIdle();
  EXPECT_EQ(device.readCsr(STATUS), 0u);
  EXPECT_EQ(device.readCsr(RING_HEAD), packets);
  for (uint32_t i = 0; i < packets; ++i) {
    uint32_t first = 0, last = 0;
    memory.read(buffer + 64u * i, &first, 4);
    memory.read(buffer + 64u * i + 28, &last, 4);
    EXPECT_EQ(first, 0x100u * (i + 1) + i) << "packet " << i;
    EXPECT_EQ(last, 0x100u * (i + 1) + i) << "packet " << i;
  }
}

// The written ranges and read bursts co-simulation compares are kept only
// while tracking is on: a long run of the rtl backend accumulates none.
TEST(RtlDevice, AccessesAreTrackedOnlyWhenAsked) {
  mem::PhysicalMemory memory;
  rtl::Device device(memory);
  isa::inst::Copy copy;
  copy.bytes = 64;
  copy.src = 0x1000'0000;
  copy.dst = 0x1000'1000;
  ringOne(device, memory, isa::packetOf(copy));
  device.runUntilIdle();
  EXPECT_TRUE(device.takeWrittenRanges().empty());
  EXPECT_TRUE(device.takeReadBursts().empty());
  device.setAccessTracking(true);
  using namespace isa::csr;
  memory.write(0x2000'0000 + isa::kPacketBytes, isa::packetOf(copy).data(), isa::kPacketBytes);
  device.writeCsr(RING_TAIL, 2); // the same packet again, from slot 1
  device.runUntilIdle();
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(device.takeWrittenRanges(), (Ranges{{0x1000'1000, 64}}));
  const Ranges reads = device.takeReadBursts();
  EXPECT_EQ(rtl::beatOutsideOperands(isa::packetOf(copy), memory.map(),
                                     0x2000'0000 + isa::kPacketBytes, reads),
            std::nullopt);
  EXPECT_FALSE(reads.empty());
}

// Co-simulation's check of the RTL's reads: a beat is needed when it holds
// a byte of the ring slot or of an operand the packet reads; a beat past the
// source, or one of the write-only destination, is not; a packet that fails
// its checks is not judged.
TEST(RtlDevice, BeatOutsideOperandsFindsReadsPastTheOperands) {
  const mem::AddressMap map = mem::AddressMap::defaults();
  constexpr uint64_t slot = 0x2000'0000, src = 0x1000'0000, dst = 0x1000'1000;
  isa::inst::Copy copy;
  copy.bytes = 40; // two beats of 32, the second partly
  copy.src = src;
  copy.dst = dst;
  const isa::Packet packet = isa::packetOf(copy);
  using Bursts = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(rtl::beatOutsideOperands(packet, map, slot, Bursts{{slot, 64}, {src, 64}}),
            std::nullopt);
  EXPECT_EQ(rtl::beatOutsideOperands(packet, map, slot, Bursts{{slot, 64}, {src, 96}}),
            std::optional<uint64_t>(src + 64));
  EXPECT_EQ(rtl::beatOutsideOperands(packet, map, slot, Bursts{{dst, 32}}),
            std::optional<uint64_t>(dst));
  EXPECT_EQ(rtl::beatOutsideOperands(packet, map, slot, Bursts{{slot + 64, 32}}),
            std::optional<uint64_t>(slot + 64));
  copy.src = 0x7fff'0000'0000; // unmapped: the packet faults
  EXPECT_EQ(rtl::beatOutsideOperands(isa::packetOf(copy), map, slot, Bursts{{dst, 32}}),
            std::nullopt);
}

// A memory that answers long after the hang budget: the device reports a
// Timeout with the packet in flight and works again after the reset.
TEST(RtlDevice, HangIsDetectedAndReported) {
  mem::PhysicalMemory memory;
  rtl::DeviceOptions options;
  options.memoryLatency = 1'000'000;
  options.hangCycles = 2000;
  rtl::Device device(memory, options);
  isa::inst::Copy copy;
  copy.bytes = 64;
  copy.src = 0x1000'0000;
  copy.dst = 0x1000'1000;
  const isa::Packet p = isa::packetOf(copy);
  ringOne(device, memory, p);
  try {
    device.runUntilIdle();
    FAIL() << "no hang detected";
  } catch (const rtl::HangError &e) {
    EXPECT_EQ(e.fault().code, mem::FaultCode::Timeout);
    EXPECT_EQ(e.fault().packetIndex, 0);
    EXPECT_THAT(e.fault().detail, HasSubstr("RTL hang: no progress for 2000 cycles"));
    EXPECT_THAT(e.fault().detail, HasSubstr("fetching packet 0; states: command fetch (2)"));
  }
  // After the reset the ring registers are back to zero.
  EXPECT_EQ(device.readCsr(isa::csr::RING_ENTRIES), 0u);
  EXPECT_EQ(device.readCsr(isa::csr::STATUS), 0u);
}

// A CSR access is bounded by the hang budget too: a slave that never
// answers would otherwise clock the host forever. An AXI4-Lite write takes
// two cycles (AW/W, then B), so a budget of one cycle stops the first write
// of the reset's region-table programming, in the constructor.
TEST(RtlDevice, CsrAccessOutlivingTheHangBudgetIsAHang) {
  mem::PhysicalMemory memory;
  rtl::DeviceOptions options;
  options.hangCycles = 1;
  try {
    rtl::Device device(memory, options);
    FAIL() << "no hang detected";
  } catch (const rtl::HangError &e) {
    EXPECT_EQ(e.fault().code, mem::FaultCode::Timeout);
    char selectWrite[64]; // REGION_SELECT, the first register the reset programs
    std::snprintf(selectWrite, sizeof selectWrite, "the AXI4-Lite write of CSR 0x%03x",
                  isa::csr::REGION_SELECT);
    EXPECT_THAT(e.fault().detail, HasSubstr(std::string("RTL hang: ") + selectWrite +
                                            " got no BVALID for 1 cycles at cycle "));
  }
  options.hangCycles = 2;
  rtl::Device device(memory, options);
  EXPECT_EQ(device.readCsr(isa::csr::STATUS), 0u);
}

// A budget shorter than an engine's work between two completed memory
// requests (a matrix panel's compute steps, a vector chunk's micro-program
// steps): the engine in flight makes no progress, the detector fires and
// the report names the packet and the engine states.
TEST(RtlDevice, HangReportNamesThePacketAndTheEngineStates) {
  isa::inst::Matmul mm;
  mm.m = mm.n = 32; // one block of tiles: a panel computes for 256 cycles
  mm.k = 32;
  mm.a = 0x1000'0000;
  mm.b = 0x1000'1000;
  mm.c = 0x1000'2000;
  isa::inst::Silu silu;
  silu.n = 64;
  silu.src = 0x1000'0000;
  silu.dst = 0x1000'1000;
  const std::pair<isa::Packet, const char *> cases[] = {
      {isa::packetOf(mm), "in packet 0 (matmul); states: command execute (9), dma 0, matrix "},
      {isa::packetOf(silu), "in packet 0 (silu); states: command execute (9), dma 0, matrix 0, "
                            "vector "}};
  for (const auto &[packet, report] : cases) {
    mem::PhysicalMemory memory;
    rtl::DeviceOptions options;
    options.memoryLatency = 1;
    options.hangCycles = 30;
    rtl::Device device(memory, options);
    ringOne(device, memory, packet);
    try {
      device.runUntilIdle();
      ADD_FAILURE() << "no hang detected: " << report;
    } catch (const rtl::HangError &e) {
      EXPECT_EQ(e.fault().packetIndex, 0);
      EXPECT_THAT(e.fault().detail, HasSubstr(report));
    }
  }
}

} // namespace
