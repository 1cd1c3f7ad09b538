// The runtime's device allocator over one region (normally "activations").
// It hands out device addresses only; it never touches PhysicalMemory.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace npu::mem {

// Best fit over an address-ordered free list with immediate coalescing:
// allocate, free and findAllocation are O(log n) in the number of blocks.
// Among equally good free blocks the lowest address wins and an allocation
// takes the low end of its block, so a sequence of calls always produces the
// same addresses. Every request is rounded up to a multiple of the
// alignment, and the rounded size is what the statistics count.
//
// Thread-safe: every member function may be called concurrently (one
// internal mutex).
class DeviceAllocator {
public:
  // alignment must be a power of two, base a multiple of it and
  // [base, base + size) must not run past 2^64 (std::invalid_argument). The
  // capacity is size rounded down to the alignment.
  DeviceAllocator(uint64_t base, uint64_t size, uint64_t alignment = 64);

  // nullopt when no free block fits (OOM); the allocator stays usable.
  // 0 bytes allocates one alignment unit, so each allocation has a distinct
  // address.
  std::optional<uint64_t> allocate(uint64_t bytes);

  // NotAllocated: a double free or an address that is not the start of a
  // live allocation; the state is then unchanged.
  enum class FreeResult { Ok, NotAllocated };
  FreeResult free(uint64_t address);

  struct Block {
    uint64_t address, size; // size is the rounded size
  };
  // The live allocation containing address, if any.
  std::optional<Block> findAllocation(uint64_t address) const;
  // Every live allocation, in address order.
  std::vector<Block> liveAllocations() const;

  struct Stats {
    uint64_t capacity, allocatedBytes, peakAllocatedBytes, freeBytes, largestFreeBlock,
        liveAllocations, totalAllocations, totalFrees;
    double fragmentation;       // 1 - largestFreeBlock / freeBytes; 0 when nothing is free
    uint64_t failedAllocations; // allocate() calls that returned nullopt
  };
  Stats stats() const;
  // Restarts peak tracking from the current allocatedBytes.
  void resetPeak();

  uint64_t base() const { return base_; }
  uint64_t alignment() const { return alignment_; }

private:
  void insertFreeBlock(uint64_t offset, uint64_t size);

  const uint64_t base_;
  const uint64_t alignment_;
  const uint64_t capacity_;

  mutable std::mutex mutex_;
  // Blocks are kept as offsets from base_ so that no sum can overflow.
  std::map<uint64_t, uint64_t> freeByOffset_;          // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> freeBySize_; // (size, offset), for best fit
  std::map<uint64_t, uint64_t> live_;                  // offset -> rounded size
  uint64_t allocatedBytes_ = 0;
  uint64_t peakAllocatedBytes_ = 0;
  uint64_t totalAllocations_ = 0;
  uint64_t totalFrees_ = 0;
  uint64_t failedAllocations_ = 0;
};

} // namespace npu::mem
