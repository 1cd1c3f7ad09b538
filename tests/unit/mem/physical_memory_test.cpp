#include "npu/mem/physical_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <set>
#include <span>
#include <system_error>

#include <unistd.h>

namespace npu::mem {
namespace {

using ::testing::HasSubstr;
using Runs = std::vector<std::pair<uint64_t, uint64_t>>;

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;
const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

// The fault that action raises (code None if it raises none).
template <typename Action> Fault faultOf(Action action) {
  try {
    action();
  } catch (const DeviceFault &error) {
    return error.fault();
  }
  return Fault{};
}

PhysicalMemory::RegionStats statsOf(const std::vector<PhysicalMemory::RegionStats> &all,
                                    const std::string &name) {
  for (const auto &entry : all) {
    if (entry.name == name)
      return entry;
  }
  throw std::logic_error("no stats for " + name);
}

TEST(PhysicalMemoryTest, FirstAndLastByteOfEveryMemoryRegion) {
  PhysicalMemory memory;
  for (const Region &region : memory.map().regions) {
    if (region.kind != Region::Kind::Memory)
      continue;
    uint64_t last = region.base + region.size - 1;
    memory.write(region.base, "\x11", 1);
    memory.write(last, "\x22", 1);
    uint8_t first = 0, end = 0;
    memory.read(region.base, &first, 1);
    memory.read(last, &end, 1);
    EXPECT_EQ(first, 0x11) << region.name;
    EXPECT_EQ(end, 0x22) << region.name;
    // The whole region is one contiguous host span.
    uint8_t *span = memory.hostSpan(region.base, region.size, Access::Read);
    EXPECT_EQ(span[0], 0x11);
    EXPECT_EQ(span[region.size - 1], 0x22);

    Fault past = memory.check(last, 2, Access::Read);
    EXPECT_EQ(past.code, FaultCode::OutOfRegion) << region.name;
    EXPECT_THAT(past.region, HasSubstr("region '" + region.name + "'"));
    EXPECT_EQ(past.detail, "runs 1 byte past its end") << region.name;
  }
}

TEST(PhysicalMemoryTest, OnePastTheEndIsUnmappedWhenNothingFollows) {
  PhysicalMemory memory;
  EXPECT_EQ(memory.check(0x2010'0000, 1, Access::Read).code, FaultCode::Unmapped);
  EXPECT_EQ(memory.check(0x200F'FFFF, 1, Access::Read).code, FaultCode::None);
  EXPECT_EQ(memory.check(0x3000'1000, 4, Access::Write).code, FaultCode::Unmapped);
}

TEST(PhysicalMemoryTest, RangeStraddlingTwoAdjacentRegionsIsOutOfRegion) {
  PhysicalMemory memory;
  std::array<uint8_t, 32> bytes{};
  Fault fault = faultOf([&] { memory.write(0x0FFF'FFF0, bytes.data(), bytes.size()); });
  EXPECT_EQ(fault.code, FaultCode::OutOfRegion);
  EXPECT_EQ(fault.address, 0x0FFF'FFF0u);
  EXPECT_EQ(fault.length, 32u);
  EXPECT_EQ(fault.access, Access::Write);
  EXPECT_EQ(fault.region, "region 'weights' 0x0-0xfffffff");
  EXPECT_EQ(fault.detail, "runs 16 bytes past its end");
  EXPECT_EQ(fault.describe(), "out-of-region write of 32 bytes at 0x0ffffff0 (region 'weights' "
                              "0x0-0xfffffff): runs 16 bytes past its end");
}

TEST(PhysicalMemoryTest, UnmappedFaultCarriesEverything) {
  PhysicalMemory memory;
  std::array<uint8_t, 64> buffer{};
  try {
    memory.read(0x4000'0000, buffer.data(), buffer.size());
    FAIL() << "no fault";
  } catch (const DeviceFault &error) {
    const Fault &fault = error.fault();
    EXPECT_EQ(fault.code, FaultCode::Unmapped);
    EXPECT_EQ(fault.address, 0x4000'0000u);
    EXPECT_EQ(fault.length, 64u);
    EXPECT_EQ(fault.access, Access::Read);
    EXPECT_EQ(fault.packetIndex, -1);
    EXPECT_STREQ(error.what(), "unmapped read of 64 bytes at 0x40000000 (no region)");
  }
}

TEST(PhysicalMemoryTest, AddressPlusLengthNear2To64NeverWraps) {
  AddressMap map;
  map.regions.push_back({.name = "top", .base = 0xFFFF'FFFF'FFFF'F000, .size = 4096});
  map.regions.push_back({.name = "low", .base = 0, .size = 4096});
  PhysicalMemory memory(map);
  memory.write(UINT64_MAX, "\x5A", 1);
  uint8_t value = 0;
  memory.read(UINT64_MAX, &value, 1);
  EXPECT_EQ(value, 0x5A);
  EXPECT_EQ(memory.check(0xFFFF'FFFF'FFFF'F000, 4096, Access::Write).code, FaultCode::None);
  // These ranges would wrap to the start of "low" if computed as address + length.
  EXPECT_EQ(memory.check(UINT64_MAX, 2, Access::Read).code, FaultCode::OutOfRegion);
  EXPECT_EQ(memory.check(0xFFFF'FFFF'FFFF'F000, UINT64_MAX, Access::Read).code,
            FaultCode::OutOfRegion);
  EXPECT_EQ(memory.check(0, UINT64_MAX, Access::Read).code, FaultCode::OutOfRegion);
  Fault fault = faultOf([&] { memory.hostSpan(0xFFFF'FFFF'FFFF'FFF0, 0x20, Access::Read); });
  EXPECT_EQ(fault.code, FaultCode::OutOfRegion);
  EXPECT_EQ(fault.region, "region 'top' 0xfffffffffffff000-0xffffffffffffffff");
  EXPECT_EQ(fault.detail, "runs 16 bytes past its end");

  PhysicalMemory defaults;
  EXPECT_EQ(defaults.check(UINT64_MAX, 1, Access::Read).code, FaultCode::Unmapped);
  EXPECT_EQ(defaults.check(0x0FFF'FFFF, UINT64_MAX, Access::Read).code, FaultCode::OutOfRegion);
}

TEST(PhysicalMemoryTest, ZeroLengthAccessesAreCheckedButCountNothing) {
  PhysicalMemory memory;
  EXPECT_NE(memory.hostSpan(0x1000'0000, 0, Access::Read), nullptr);
  memory.read(0x1000'0000, nullptr, 0);
  memory.write(0x0FFF'FFFF, nullptr, 0);
  memory.fill(0x2000'0000, 0xFF, 0);
  for (const auto &entry : memory.stats()) {
    EXPECT_EQ(entry.bytesRead, 0u) << entry.name;
    EXPECT_EQ(entry.bytesWritten, 0u) << entry.name;
  }
  EXPECT_EQ(faultOf([&] { memory.hostSpan(0x4000'0000, 0, Access::Read); }).code,
            FaultCode::Unmapped);
  EXPECT_EQ(faultOf([&] { memory.read(0x2010'0000, nullptr, 0); }).code, FaultCode::Unmapped);
  EXPECT_EQ(faultOf([&] { memory.write(0x3000'0000, nullptr, 0); }).code, FaultCode::Permission);
}

AddressMap permissionMap() {
  return AddressMap::fromJson(R"({"regions": [
      {"name": "rom", "base": 0, "size": "64K", "access": "r"},
      {"name": "sink", "base": "64K", "size": "64K", "access": "w"},
      {"name": "regs", "base": "1M", "size": "4K", "kind": "csr"}]})",
                              "permissions.json");
}

TEST(PhysicalMemoryTest, RegionPermissionsAreEnforced) {
  PhysicalMemory memory(permissionMap());
  uint32_t word = 7;
  EXPECT_NO_THROW(memory.read(0, &word, 4));
  EXPECT_NO_THROW(memory.write(0x10000, &word, 4));

  Fault write = faultOf([&] { memory.write(0x100, &word, 4); });
  EXPECT_EQ(write.code, FaultCode::Permission);
  EXPECT_EQ(write.region, "region 'rom' 0x0-0xffff, read-only");
  EXPECT_EQ(faultOf([&] { memory.fill(0, 0, 1); }).code, FaultCode::Permission);
  EXPECT_EQ(faultOf([&] { memory.hostSpan(0, 4, Access::Read | Access::Write); }).code,
            FaultCode::Permission);

  Fault read = faultOf([&] { memory.read(0x10000, &word, 4); });
  EXPECT_EQ(read.code, FaultCode::Permission);
  EXPECT_EQ(read.region, "region 'sink' 0x10000-0x1ffff, write-only");
  EXPECT_EQ(faultOf([&] { memory.hostSpan(0x10000, 4, Access::Read | Access::Write); }).code,
            FaultCode::Permission);
  EXPECT_EQ(memory.check(0x10000, 4, Access::Read | Access::Write).access,
            Access::Read | Access::Write);

  for (const auto &entry : memory.stats()) {
    if (entry.name == "rom") {
      EXPECT_EQ(entry.bytesRead, 4u);
    } else if (entry.name == "sink") {
      EXPECT_EQ(entry.bytesWritten, 4u);
    }
    EXPECT_EQ(entry.bytesRead + entry.bytesWritten, entry.name == "regs" ? 0u : 4u);
  }
}

TEST(PhysicalMemoryTest, CsrWindowIsNotMemory) {
  PhysicalMemory memory;
  uint32_t word = 0;
  for (Access access : {Access::Read, Access::Write, Access::Read | Access::Write}) {
    Fault fault = faultOf([&] { memory.hostSpan(0x3000'0000, 4, access); });
    EXPECT_EQ(fault.code, FaultCode::Permission);
    EXPECT_EQ(fault.region, "region 'csr' 0x30000000-0x30000fff, the CSR window");
  }
  EXPECT_THROW(memory.read(0x3000'0FFC, &word, 4), DeviceFault);
  PhysicalMemory::RegionStats csr = statsOf(memory.stats(), "csr");
  EXPECT_EQ(csr.residentBytes, 0u);
  EXPECT_EQ(csr.bytesRead, 0u);
}

TEST(PhysicalMemoryTest, CountersArePerRegionAndResettable) {
  PhysicalMemory memory;
  std::vector<uint8_t> bytes(100, 1);
  memory.write(0x10, bytes.data(), 100);
  memory.read(0x1000'0000, bytes.data(), 50);
  memory.read(0x1000'0100, bytes.data(), 30);
  memory.hostSpan(0x2000'0000, 10, Access::Read | Access::Write);
  memory.fill(0x2000'0100, 0xAB, 7);
  EXPECT_THROW(memory.write(0x0FFF'FFF0, bytes.data(), 100), DeviceFault);

  auto stats = memory.stats();
  ASSERT_EQ(stats.size(), 5u);
  EXPECT_EQ(stats[0].name, "weights");
  EXPECT_EQ(stats[0].base, 0u);
  EXPECT_EQ(stats[0].size, 256 * kMiB);
  EXPECT_EQ(stats[0].bytesRead, 0u);
  EXPECT_EQ(stats[0].bytesWritten, 100u) << "the faulting write is not counted";
  EXPECT_EQ(stats[1].name, "activations");
  EXPECT_EQ(stats[1].bytesRead, 80u);
  EXPECT_EQ(stats[1].bytesWritten, 0u);
  EXPECT_EQ(stats[2].name, "ring");
  EXPECT_EQ(stats[2].bytesRead, 10u);
  EXPECT_EQ(stats[2].bytesWritten, 17u);

  memory.resetCounters();
  for (const auto &entry : memory.stats()) {
    EXPECT_EQ(entry.bytesRead, 0u);
    EXPECT_EQ(entry.bytesWritten, 0u);
  }
  uint8_t value = 0;
  memory.read(0x2000'0106, &value, 1);
  EXPECT_EQ(value, 0xAB) << "resetting counters keeps contents";
}

TEST(PhysicalMemoryTest, SixteenGiBRegionCostsOnlyWhatIsTouched) {
  PhysicalMemory memory(AddressMap::fromJson(R"({"regions": [
      {"name": "huge", "base": "0x1_0000_0000", "size": "16G"},
      {"name": "small", "base": 0, "size": "1M"}]})",
                                             "huge.json"));
  const uint64_t address = 0x1'0000'0000 + 8 * kGiB + 123;
  for (const auto &entry : memory.stats())
    EXPECT_EQ(entry.residentBytes, 0u) << entry.name;
  memory.write(address, "\x42", 1);
  uint8_t value = 0;
  memory.read(address, &value, 1);
  EXPECT_EQ(value, 0x42);

  auto stats = memory.stats();
  PhysicalMemory::RegionStats huge = statsOf(stats, "huge");
  EXPECT_EQ(huge.size, 16 * kGiB);
  EXPECT_GE(huge.residentBytes, kPage);
  EXPECT_LE(huge.residentBytes, 4 * kPage);
  EXPECT_EQ(statsOf(stats, "small").residentBytes, 0u);
  EXPECT_EQ(memory.touchedRanges(), (Runs{{address & ~(kPage - 1), kPage}}));
}

TEST(PhysicalMemoryTest, ClearZeroesAndReleasesEverything) {
  PhysicalMemory memory;
  std::vector<uint8_t> pattern(3 * kPage + 17);
  std::iota(pattern.begin(), pattern.end(), uint8_t{1});
  memory.write(0x1000'0000 + 5, pattern.data(), pattern.size());
  memory.fill(0x0FFF'FFF0, 0xEE, 16);
  memory.clear();

  EXPECT_TRUE(memory.touchedRanges().empty());
  for (const auto &entry : memory.stats())
    EXPECT_EQ(entry.residentBytes, 0u) << entry.name;
  std::vector<uint8_t> back(pattern.size(), 0xFF);
  memory.read(0x1000'0000 + 5, back.data(), back.size());
  EXPECT_EQ(back, std::vector<uint8_t>(pattern.size(), 0));
  EXPECT_EQ(statsOf(memory.stats(), "weights").bytesWritten, 16u) << "counters survive clear()";
}

TEST(PhysicalMemoryTest, TouchedRangesAreMergedPerRegionAndOrdered) {
  PhysicalMemory memory;
  memory.fill(0x2000'0000 + 5 * kPage, 1, 1);     // ring
  memory.fill(0x1000'0000 + 2 * kPage - 1, 1, 2); // activations, pages 1 and 2
  memory.fill(0x1000'0000 + 3 * kPage, 1, kPage); // activations page 3: joins the run
  memory.fill(0x0FFF'FFFF, 1, 1);                 // last page of weights
  memory.fill(0x1000'0000, 1, 1);                 // first page of activations
  Runs expected = {
      {0x1000'0000 - kPage, kPage},
      {0x1000'0000, 4 * kPage},
      {0x2000'0000 + 5 * kPage, kPage},
  };
  // Activations pages 0..3 are one run; weights' last page stays separate
  // although it is adjacent, because runs never span two regions.
  EXPECT_EQ(memory.touchedRanges(), expected);
  for (auto [address, length] : memory.touchedRanges())
    EXPECT_EQ(memory.check(address, length, Access::Read).code, FaultCode::None);
}

TEST(PhysicalMemoryTest, RoundTripsDataThroughHostSpans) {
  PhysicalMemory memory;
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), 0.5f);
  memory.write(0x1000'0040, values.data(), values.size() * sizeof(float));
  auto *span = reinterpret_cast<float *>(
      memory.hostSpan(0x1000'0040, values.size() * sizeof(float), Access::Read | Access::Write));
  for (float &value : std::span(span, values.size()))
    value *= 2;
  std::vector<float> back(values.size());
  memory.read(0x1000'0040, back.data(), back.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(back[i], values[i] * 2);
}

TEST(PhysicalMemoryTest, ConstructorValidatesTheMap) {
  AddressMap map = AddressMap::defaults();
  map.applyOverride("ring=0x1000_0000:1M");
  EXPECT_THROW(PhysicalMemory{map}, std::invalid_argument);
}

TEST(PhysicalMemoryTest, ARegionTheHostCannotReserveIsAnError) {
  AddressMap map;
  map.regions.push_back({.name = "galactic", .base = 0, .size = uint64_t(1) << 62});
  try {
    PhysicalMemory memory(map);
    FAIL() << "a 4 EiB reservation succeeded";
  } catch (const std::system_error &error) {
    EXPECT_THAT(error.what(), HasSubstr("bytes for region 'galactic'"));
  }
}

TEST(PhysicalMemoryTest, MovedMemoryKeepsContentsAndCounters) {
  PhysicalMemory original;
  original.write(0x100, "\x99", 1);
  PhysicalMemory moved(std::move(original));
  uint8_t value = 0;
  moved.read(0x100, &value, 1);
  EXPECT_EQ(value, 0x99);
  EXPECT_EQ(moved.stats().at(0).bytesWritten, 1u);
}

// One line: instruction and operand, what happened to which bytes, the
// region, the packet, why.
TEST(FaultTest, DescribeFormats) {
  Fault fault;
  fault.code = FaultCode::OutOfRegion;
  fault.address = 0x0fff'f000;
  fault.length = 8192;
  fault.access = Access::Write;
  fault.packetIndex = 3;
  fault.instruction = "SILU";
  fault.operand = "dst";
  fault.region = "region 'weights' 0x0-0xfffffff";
  fault.detail = "runs 4096 bytes past its end";
  EXPECT_EQ(fault.describe(), "SILU dst: out-of-region write of 8192 bytes at 0x0ffff000 (region "
                              "'weights' 0x0-0xfffffff) at packet 3: runs 4096 bytes past its end");
  fault.code = FaultCode::Unmapped;
  fault.address = 0x4000'0000;
  fault.length = 1;
  fault.access = Access::Read | Access::Write;
  fault.packetIndex = -1;
  fault.instruction.clear();
  fault.region = "no region";
  fault.detail.clear();
  EXPECT_EQ(fault.describe(), "unmapped read-modify-write of 1 byte at 0x40000000 (no region)");
  fault.code = FaultCode::Permission;
  EXPECT_EQ(fault.describe(), "forbidden read-modify-write of 1 byte at 0x40000000 (no region)");
  Fault overlap;
  overlap.code = FaultCode::Overlap;
  overlap.address = 0x1000'0010;
  overlap.length = 48;
  overlap.packetIndex = 0;
  overlap.instruction = "COPY";
  overlap.operand = "dst";
  overlap.otherOperand = "src";
  EXPECT_EQ(overlap.describe(), "COPY dst: overlap of 48 bytes with src at 0x10000010 at packet 0");
  Fault opcode;
  opcode.code = FaultCode::UnknownOpcode;
  opcode.packetIndex = 12;
  opcode.detail = "0x00000077";
  EXPECT_EQ(opcode.describe(), "unknown opcode at packet 12: 0x00000077");
  EXPECT_EQ(Fault{}.describe(), "no fault");
  DeviceFault error(opcode);
  EXPECT_EQ(error.what(), opcode.describe());
  EXPECT_EQ(error.fault().packetIndex, 12);
}

TEST(FaultTest, CodeNamesAreDistinct) {
  std::set<std::string> names;
  for (uint32_t code = 0; code <= static_cast<uint32_t>(FaultCode::Divergence); ++code)
    EXPECT_TRUE(names.insert(faultCodeName(static_cast<FaultCode>(code))).second) << code;
  EXPECT_STREQ(faultCodeName(FaultCode::OutOfRegion), "out-of-region");
  EXPECT_STREQ(faultCodeName(static_cast<FaultCode>(999)), "unknown");
  EXPECT_STREQ(accessName(Access::Write), "write");
}

} // namespace
} // namespace npu::mem
