// Several threads sharing one PhysicalMemory and one DeviceAllocator, the
// way the runtime's host thread and PyTorch's autograd thread do. Meant to be
// run under ThreadSanitizer too (configure with -DNPU_TSAN=ON).
#include "npu/mem/allocator.h"
#include "npu/mem/physical_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <random>
#include <thread>
#include <vector>

namespace npu::mem {
namespace {

constexpr int kThreads = 4;
constexpr int kOpsPerThread = 10'000;
constexpr uint64_t kHeapBase = 0x1000'0000; // start of "activations"
constexpr uint64_t kHeapSize = 256 * 1024;  // small, so that threads contend and hit OOM

struct Tally {
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
  uint64_t faults = 0;
  uint64_t outOfMemory = 0;
  std::string firstError;
};

struct Block {
  uint64_t address;
  uint64_t size;
  uint8_t pattern;
};

// One thread's work: every block it owns holds `pattern` in all its bytes,
// which it checks before freeing; any corruption by another thread (or a
// block handed out twice) shows up as a mismatch.
void worker(int seed, PhysicalMemory &memory, DeviceAllocator &allocator, std::latch &start,
            Tally &tally) {
  std::mt19937_64 random(seed);
  auto uniform = [&](uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(random);
  };
  std::vector<Block> owned;
  std::vector<uint8_t> buffer;
  auto fail = [&](const std::string &message) {
    if (tally.firstError.empty())
      tally.firstError = "thread " + std::to_string(seed) + ": " + message;
  };
  auto verifyAndFree = [&](size_t index) {
    Block block = owned[index];
    buffer.assign(block.size, 0);
    memory.read(block.address, buffer.data(), block.size);
    tally.bytesRead += block.size;
    for (uint8_t byte : buffer) {
      if (byte != block.pattern) {
        fail("block at " + std::to_string(block.address) + " was overwritten");
        break;
      }
    }
    if (allocator.free(block.address) != DeviceAllocator::FreeResult::Ok)
      fail("free of a live block failed");
    owned[index] = owned.back();
    owned.pop_back();
  };

  start.arrive_and_wait();
  for (int op = 0; op < kOpsPerThread; ++op) {
    uint64_t choice = uniform(0, 99);
    if (choice < 35) {
      uint64_t bytes = uniform(0, 4096);
      std::optional<uint64_t> address = allocator.allocate(bytes);
      if (!address) {
        ++tally.outOfMemory;
        if (!owned.empty())
          verifyAndFree(uniform(0, owned.size() - 1));
        continue;
      }
      uint64_t size = allocator.findAllocation(*address)->size;
      auto pattern = static_cast<uint8_t>(uniform(0, 255));
      memory.fill(*address, pattern, size);
      tally.bytesWritten += size;
      owned.push_back({*address, size, pattern});
    } else if (choice < 65) {
      if (!owned.empty())
        verifyAndFree(uniform(0, owned.size() - 1));
    } else if (choice < 85) {
      if (owned.empty())
        continue;
      // Read-modify-write through a host span, the ISS kernels' path.
      Block &block = owned[uniform(0, owned.size() - 1)];
      uint8_t *span = memory.hostSpan(block.address, block.size, Access::Read | Access::Write);
      for (uint64_t i = 0; i < block.size; ++i)
        span[i] = static_cast<uint8_t>(span[i] + 1);
      ++block.pattern;
      tally.bytesRead += block.size;
      tally.bytesWritten += block.size;
    } else if (choice < 95) {
      // Concurrent probes and bookkeeping reads.
      uint64_t probe = uniform(0, 0x4000'0000);
      bool mapped = memory.map().find(probe) != nullptr;
      if ((memory.check(probe, uniform(0, 8192), Access::Read).code == FaultCode::Unmapped) ==
          mapped)
        fail("check() disagrees with the address map");
      if (!owned.empty()) {
        const Block &block = owned[uniform(0, owned.size() - 1)];
        auto found = allocator.findAllocation(block.address + uniform(0, block.size - 1));
        if (!found || found->address != block.address)
          fail("findAllocation lost a live block");
      }
      DeviceAllocator::Stats stats = allocator.stats();
      if (stats.allocatedBytes + stats.freeBytes != stats.capacity)
        fail("inconsistent allocator stats");
    } else if (choice < 99) {
      try {
        uint32_t word = 0;
        memory.write(0x3000'0000 + uniform(0, 1023) * 4, &word, 4);
        fail("CSR window write did not fault");
      } catch (const DeviceFault &fault) {
        if (fault.fault().code != FaultCode::Permission)
          fail(std::string("CSR window write raised ") + faultCodeName(fault.fault().code));
        ++tally.faults;
      }
    } else {
      memory.stats();
    }
  }
  while (!owned.empty())
    verifyAndFree(owned.size() - 1);
}

TEST(ConcurrencyTest, ThreadsShareMemoryAndAllocator) {
  PhysicalMemory memory;
  DeviceAllocator allocator(kHeapBase, kHeapSize);
  const DeviceAllocator::Stats baseline = allocator.stats();

  std::vector<Tally> tallies(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t + 1, std::ref(memory), std::ref(allocator), std::ref(start),
                         std::ref(tallies[t]));
  for (std::thread &thread : threads)
    thread.join();

  uint64_t bytesRead = 0, bytesWritten = 0, faults = 0, outOfMemory = 0;
  for (const Tally &tally : tallies) {
    EXPECT_EQ(tally.firstError, "");
    bytesRead += tally.bytesRead;
    bytesWritten += tally.bytesWritten;
    faults += tally.faults;
    outOfMemory += tally.outOfMemory;
  }
  EXPECT_GT(faults, 0u);

  DeviceAllocator::Stats after = allocator.stats();
  EXPECT_EQ(after.allocatedBytes, baseline.allocatedBytes);
  EXPECT_EQ(after.liveAllocations, 0u);
  EXPECT_EQ(after.largestFreeBlock, baseline.largestFreeBlock);
  EXPECT_EQ(after.fragmentation, 0.0);
  EXPECT_EQ(after.totalAllocations, after.totalFrees);
  EXPECT_EQ(after.failedAllocations, outOfMemory);

  // Every counted byte is accounted for, in the right region, nothing else.
  for (const auto &region : memory.stats()) {
    if (region.name == "activations") {
      EXPECT_EQ(region.bytesRead, bytesRead);
      EXPECT_EQ(region.bytesWritten, bytesWritten);
    } else {
      EXPECT_EQ(region.bytesRead + region.bytesWritten, 0u) << region.name;
    }
  }
}

} // namespace
} // namespace npu::mem
