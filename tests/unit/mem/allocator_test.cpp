#include "npu/mem/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace npu::mem {
namespace {

constexpr uint64_t kBase = 0x1000'0000;
constexpr uint64_t kMiB = uint64_t(1) << 20;
using FreeResult = DeviceAllocator::FreeResult;

auto asTuple(const DeviceAllocator::Stats &s) {
  return std::tuple(s.capacity, s.allocatedBytes, s.peakAllocatedBytes, s.freeBytes,
                    s.largestFreeBlock, s.liveAllocations, s.totalAllocations, s.totalFrees,
                    s.fragmentation, s.failedAllocations);
}

TEST(DeviceAllocatorTest, ListsLiveAllocationsInAddressOrder) {
  DeviceAllocator allocator(kBase, kMiB);
  uint64_t a = *allocator.allocate(100), b = *allocator.allocate(10), c = *allocator.allocate(64);
  ASSERT_EQ(allocator.free(b), DeviceAllocator::FreeResult::Ok);
  std::vector<DeviceAllocator::Block> live = allocator.liveAllocations();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].address, a);
  EXPECT_EQ(live[0].size, 128u);
  EXPECT_EQ(live[1].address, c);
  EXPECT_EQ(live[1].size, 64u);
}

TEST(DeviceAllocatorTest, RoundsSizesUpToTheAlignment) {
  DeviceAllocator allocator(kBase, kMiB);
  EXPECT_EQ(allocator.allocate(1), kBase);
  EXPECT_EQ(allocator.allocate(65), kBase + 64);
  std::optional<uint64_t> empty = allocator.allocate(0);
  EXPECT_EQ(empty, kBase + 192);
  EXPECT_EQ(allocator.findAllocation(*empty)->size, 64u) << "0 bytes takes one alignment unit";
  EXPECT_EQ(allocator.findAllocation(kBase + 64)->size, 128u);
  EXPECT_EQ(allocator.stats().allocatedBytes, 256u);

  DeviceAllocator pages(0, kMiB, 4096);
  for (uint64_t bytes : {1u, 4095u, 4096u, 4097u, 10000u}) {
    std::optional<uint64_t> address = pages.allocate(bytes);
    ASSERT_TRUE(address);
    EXPECT_EQ(*address % 4096, 0u);
    EXPECT_EQ(pages.findAllocation(*address)->size, (bytes + 4095) / 4096 * 4096);
  }
}

TEST(DeviceAllocatorTest, ConstructorChecksItsArguments) {
  EXPECT_THROW(DeviceAllocator(0, kMiB, 0), std::invalid_argument);
  EXPECT_THROW(DeviceAllocator(0, kMiB, 48), std::invalid_argument);
  EXPECT_THROW(DeviceAllocator(32, kMiB, 64), std::invalid_argument);
  EXPECT_THROW(DeviceAllocator(UINT64_MAX - 63, 128, 64), std::invalid_argument);
  EXPECT_EQ(DeviceAllocator(0, 1000, 64).stats().capacity, 960u);

  // A region ending exactly at 2^64 is usable up to its last byte.
  DeviceAllocator top(UINT64_MAX - 127, 128, 64);
  EXPECT_EQ(top.allocate(64), UINT64_MAX - 127);
  EXPECT_EQ(top.allocate(64), UINT64_MAX - 63);
  EXPECT_EQ(top.findAllocation(UINT64_MAX)->address, UINT64_MAX - 63);
  EXPECT_EQ(top.allocate(1), std::nullopt);

  DeviceAllocator empty(0, 0);
  EXPECT_EQ(empty.allocate(0), std::nullopt);
  EXPECT_EQ(empty.stats().largestFreeBlock, 0u);
  EXPECT_EQ(empty.stats().fragmentation, 0.0);
}

TEST(DeviceAllocatorTest, FreeingInAnyOrderCoalescesBackToOneBlock) {
  const std::vector<uint64_t> sizes = {64, 1000, 4096, 64, 300, 128 * 1024, 64, 7777};
  std::vector<std::vector<size_t>> orders;
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  orders.push_back(order); // forward
  orders.emplace_back(order.rbegin(), order.rend());
  orders.push_back({0, 2, 4, 6, 1, 3, 5, 7}); // every gap is bridged last
  orders.push_back({1, 3, 5, 7, 0, 2, 4, 6});
  std::mt19937 random(42);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(order.begin(), order.end(), random);
    orders.push_back(order);
  }
  for (const auto &freeOrder : orders) {
    DeviceAllocator allocator(kBase, kMiB);
    std::vector<uint64_t> addresses;
    for (uint64_t size : sizes)
      addresses.push_back(*allocator.allocate(size));
    for (size_t index : freeOrder)
      ASSERT_EQ(allocator.free(addresses[index]), FreeResult::Ok);
    DeviceAllocator::Stats stats = allocator.stats();
    EXPECT_EQ(stats.largestFreeBlock, kMiB);
    EXPECT_EQ(stats.freeBytes, kMiB);
    EXPECT_EQ(stats.fragmentation, 0.0);
    EXPECT_EQ(allocator.allocate(kMiB), kBase) << "the whole capacity is one block again";
  }
}

TEST(DeviceAllocatorTest, FreeMergesWithBothNeighbours) {
  DeviceAllocator allocator(0, 1024);
  uint64_t a = *allocator.allocate(256), b = *allocator.allocate(256);
  uint64_t c = *allocator.allocate(256), d = *allocator.allocate(256);
  allocator.free(a);
  allocator.free(c);
  DeviceAllocator::Stats split = allocator.stats();
  EXPECT_EQ(split.freeBytes, 512u);
  EXPECT_EQ(split.largestFreeBlock, 256u);
  EXPECT_DOUBLE_EQ(split.fragmentation, 0.5);
  allocator.free(b);
  EXPECT_EQ(allocator.stats().largestFreeBlock, 768u);
  EXPECT_EQ(allocator.allocate(768), 0u);
  allocator.free(0);
  allocator.free(d);
  EXPECT_EQ(allocator.stats().largestFreeBlock, 1024u);
}

TEST(DeviceAllocatorTest, PicksTheBestFittingBlock) {
  DeviceAllocator allocator(0, 4096);
  uint64_t a = *allocator.allocate(128);
  uint64_t guard1 = *allocator.allocate(64);
  uint64_t b = *allocator.allocate(64);
  uint64_t guard2 = *allocator.allocate(64);
  allocator.free(a); // free now: 128 at 0, 64 at 192, the rest after guard2
  allocator.free(b);
  EXPECT_EQ(allocator.allocate(64), b) << "the exact 64-byte hole, not the first fit";
  EXPECT_EQ(allocator.allocate(100), a);
  EXPECT_EQ(allocator.allocate(64), guard2 + 64);
  EXPECT_EQ(guard1, 128u);
}

TEST(DeviceAllocatorTest, OutOfMemoryReturnsNulloptAndStaysUsable) {
  DeviceAllocator allocator(kBase, 4096);
  EXPECT_EQ(allocator.allocate(4097), std::nullopt);
  EXPECT_EQ(allocator.allocate(UINT64_MAX), std::nullopt) << "no overflow while rounding";
  std::vector<uint64_t> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(*allocator.allocate(1024));
  EXPECT_EQ(allocator.allocate(1), std::nullopt);
  allocator.free(blocks[0]);
  allocator.free(blocks[2]);
  EXPECT_EQ(allocator.allocate(2048), std::nullopt) << "2 KiB free but fragmented";
  EXPECT_EQ(allocator.allocate(1024), blocks[0]);
  DeviceAllocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.failedAllocations, 4u);
  EXPECT_EQ(stats.totalAllocations, 5u);
  EXPECT_EQ(stats.allocatedBytes, 3072u);
}

TEST(DeviceAllocatorTest, BadFreesChangeNothing) {
  DeviceAllocator allocator(kBase, kMiB);
  uint64_t a = *allocator.allocate(256);
  uint64_t b = *allocator.allocate(256);
  ASSERT_EQ(allocator.free(a), FreeResult::Ok);
  auto before = asTuple(allocator.stats());
  EXPECT_EQ(allocator.free(a), FreeResult::NotAllocated) << "double free";
  EXPECT_EQ(allocator.free(b + 64), FreeResult::NotAllocated) << "interior pointer";
  EXPECT_EQ(allocator.free(b + 256), FreeResult::NotAllocated) << "free space";
  EXPECT_EQ(allocator.free(0), FreeResult::NotAllocated) << "below the region";
  EXPECT_EQ(allocator.free(kBase + kMiB), FreeResult::NotAllocated) << "past the region";
  EXPECT_EQ(allocator.free(UINT64_MAX), FreeResult::NotAllocated);
  EXPECT_EQ(asTuple(allocator.stats()), before);
  EXPECT_EQ(allocator.free(b), FreeResult::Ok);
}

TEST(DeviceAllocatorTest, FindAllocationCoversExactlyTheBlock) {
  DeviceAllocator allocator(kBase, kMiB);
  uint64_t a = *allocator.allocate(100); // 128 bytes
  uint64_t b = *allocator.allocate(64);
  auto block = allocator.findAllocation(a + 77);
  ASSERT_TRUE(block);
  EXPECT_EQ(block->address, a);
  EXPECT_EQ(block->size, 128u);
  EXPECT_EQ(allocator.findAllocation(a + 127)->address, a);
  EXPECT_EQ(allocator.findAllocation(a + 128)->address, b);
  EXPECT_EQ(allocator.findAllocation(b + 64), std::nullopt);
  EXPECT_EQ(allocator.findAllocation(kBase - 1), std::nullopt);
  EXPECT_EQ(allocator.findAllocation(0), std::nullopt);
  allocator.free(a);
  EXPECT_EQ(allocator.findAllocation(a), std::nullopt);
}

TEST(DeviceAllocatorTest, StatsTrackPeakAndTotals) {
  DeviceAllocator allocator(kBase, kMiB);
  uint64_t a = *allocator.allocate(1000); // 1024
  uint64_t b = *allocator.allocate(2048);
  allocator.allocate(64);
  allocator.free(b);
  DeviceAllocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.capacity, kMiB);
  EXPECT_EQ(stats.allocatedBytes, 1088u);
  EXPECT_EQ(stats.peakAllocatedBytes, 3136u);
  EXPECT_EQ(stats.freeBytes, kMiB - 1088);
  EXPECT_EQ(stats.liveAllocations, 2u);
  EXPECT_EQ(stats.totalAllocations, 3u);
  EXPECT_EQ(stats.totalFrees, 1u);
  EXPECT_EQ(stats.largestFreeBlock, kMiB - 1024 - 2048 - 64);
  EXPECT_DOUBLE_EQ(stats.fragmentation,
                   1.0 - double(stats.largestFreeBlock) / double(stats.freeBytes));
  allocator.resetPeak();
  EXPECT_EQ(allocator.stats().peakAllocatedBytes, 1088u);
  allocator.free(a);
  EXPECT_EQ(allocator.stats().peakAllocatedBytes, 1088u);
  allocator.allocate(4096);
  EXPECT_EQ(allocator.stats().peakAllocatedBytes, 4160u);
}

// Largest gap between live allocations of a reference model in which free
// space is exactly the complement of the live blocks.
uint64_t largestGap(const std::map<uint64_t, uint64_t> &live, uint64_t base, uint64_t capacity) {
  uint64_t largest = 0, cursor = base;
  for (auto [address, size] : live) {
    largest = std::max(largest, address - cursor);
    cursor = address + size;
  }
  return std::max(largest, base + capacity - cursor);
}

TEST(DeviceAllocatorTest, RandomOperationsMatchAReferenceModel) {
  constexpr uint64_t kCapacity = kMiB;
  constexpr uint64_t kAlignment = 64;
  DeviceAllocator allocator(kBase, kCapacity, kAlignment);
  std::map<uint64_t, uint64_t> live; // address -> rounded size
  uint64_t allocated = 0, allocations = 0, frees = 0, failures = 0;
  std::mt19937_64 random(20240611);
  auto uniform = [&](uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(random);
  };

  for (int op = 0; op < 100'000; ++op) {
    uint64_t choice = uniform(0, 99);
    if (choice < 50) {
      uint64_t bytes = choice < 35   ? uniform(0, 1024)
                       : choice < 47 ? uniform(1025, 32 * 1024)
                                     : uniform(32 * 1024, 256 * 1024);
      uint64_t rounded = std::max<uint64_t>(bytes + kAlignment - 1, kAlignment) & ~(kAlignment - 1);
      std::optional<uint64_t> address = allocator.allocate(bytes);
      if (!address) {
        ++failures;
        ASSERT_LT(largestGap(live, kBase, kCapacity), rounded) << "op " << op << ": spurious OOM";
        continue;
      }
      ASSERT_EQ(*address % kAlignment, 0u);
      ASSERT_GE(*address, kBase);
      ASSERT_LE(*address + rounded, kBase + kCapacity);
      auto next = live.lower_bound(*address);
      if (next != live.end()) {
        ASSERT_LE(*address + rounded, next->first) << "op " << op << ": overlaps the next block";
      }
      if (next != live.begin()) {
        ASSERT_LE(std::prev(next)->first + std::prev(next)->second, *address)
            << "op " << op << ": overlaps the previous block";
      }
      live.emplace(*address, rounded);
      allocated += rounded;
      ++allocations;
    } else if (choice < 85) {
      if (live.empty())
        continue;
      auto victim = live.lower_bound(uniform(kBase, kBase + kCapacity));
      if (victim == live.end())
        victim = live.begin();
      ASSERT_EQ(allocator.free(victim->first), FreeResult::Ok);
      allocated -= victim->second;
      live.erase(victim);
      ++frees;
    } else if (choice < 95) {
      uint64_t address = uniform(kBase - 4096, kBase + kCapacity + 4096);
      if (live.contains(address))
        continue;
      ASSERT_EQ(allocator.free(address), FreeResult::NotAllocated) << "op " << op;
    } else {
      uint64_t address = uniform(kBase, kBase + kCapacity - 1);
      std::optional<DeviceAllocator::Block> found = allocator.findAllocation(address);
      auto after = live.upper_bound(address);
      bool inside =
          after != live.begin() && address - std::prev(after)->first < std::prev(after)->second;
      ASSERT_EQ(found.has_value(), inside) << "op " << op;
      if (inside) {
        ASSERT_EQ(found->address, std::prev(after)->first);
        ASSERT_EQ(found->size, std::prev(after)->second);
      }
    }

    DeviceAllocator::Stats stats = allocator.stats();
    ASSERT_EQ(stats.allocatedBytes, allocated) << "op " << op;
    ASSERT_EQ(stats.freeBytes, kCapacity - allocated);
    ASSERT_EQ(stats.liveAllocations, live.size());
    ASSERT_EQ(stats.totalAllocations, allocations);
    ASSERT_EQ(stats.totalFrees, frees);
    ASSERT_EQ(stats.failedAllocations, failures);
    ASSERT_GE(stats.peakAllocatedBytes, allocated);
    if (op % 1000 == 0) {
      ASSERT_EQ(stats.largestFreeBlock, largestGap(live, kBase, kCapacity)) << "op " << op;
    }
  }
  EXPECT_GT(failures, 100u) << "the workload should exercise OOM";
  EXPECT_GT(frees, 10'000u);
  for (auto [address, size] : live)
    ASSERT_EQ(allocator.free(address), FreeResult::Ok);
  EXPECT_EQ(allocator.stats().largestFreeBlock, kCapacity);
  EXPECT_EQ(allocator.stats().allocatedBytes, 0u);
}

} // namespace
} // namespace npu::mem
