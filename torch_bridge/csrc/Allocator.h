// The device allocator behind every npu tensor. Storage data pointers are
// NPU physical addresses (never dereferenced on the host). Freed blocks are
// cached by size and reused: handing a block back to the runtime waits for
// the device to drain, whereas reuse is safe without waiting because the
// stream executes in order and host copies synchronise first.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace npu::bridge {

struct GraphPool;

// A c10::DeviceAllocator, so that torch.accelerator's memory functions
// (memory_allocated, memory_stats, empty_cache, ...) reach it as they reach
// CUDA's caching allocator.
class DeviceAllocator final : public c10::DeviceAllocator {
public:
  using Stat = c10::CachingAllocator::Stat;
  struct Stats {
    Stat allocatedBytes; // held by live tensors (block sizes)
    Stat requestedBytes; // what the tensors asked for
    Stat reservedBytes;  // allocated plus cached, all taken from the runtime
    Stat liveBlocks;
    Stat reservedBlocks; // blocks taken from the runtime
    uint64_t cachedBlocks = 0;
    uint64_t allocations = 0;
    uint64_t cacheHits = 0;
    uint64_t frees = 0;
    uint64_t retries = 0; // allocations that emptied the cache to fit
    uint64_t ooms = 0;
    std::array<Stat *, 5> counters() {
      return {&allocatedBytes, &requestedBytes, &reservedBytes, &liveBlocks, &reservedBlocks};
    }
  };

  c10::DataPtr allocate(size_t bytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return &releaseBlock; }
  void copy_data(void *dest, const void *src, size_t count) const override;

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override { releaseCache(); }
  // One in-order stream: a block freed after its last use is free for
  // every later packet.
  void recordStream(const c10::DataPtr &, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;
  // (free, total): the runtime heap's unallocated bytes and its capacity.
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override;

  Stats stats() const;
  void resetPeak();
  // Returns every cached block to the runtime.
  void releaseCache();
  // Caches the blocks this thread freed while it had unsubmitted packets
  // (which may still read them); called right after those are submitted.
  void releaseDeferred();
  // The block size an allocation of `bytes` occupies.
  static uint64_t blockSize(uint64_t bytes);
  // Gives the blocks of a graph's pool (GraphCapture.h) back: the free ones
  // to the cache, the live ones to the cache once freed.
  void releasePool(GraphPool &pool);

private:
  struct Block {
    uint64_t size, requested;
  };
  static void releaseBlock(void *address);
  void release(uint64_t address);
  void releaseCacheLocked();

  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Block> live_;                  // address -> block
  std::unordered_map<uint64_t, std::vector<uint64_t>> cache_; // block size -> addresses
  std::unordered_map<uint64_t, GraphPool *> pools_;           // address -> owning pool
  Stats stats_;
};

DeviceAllocator &allocator();

} // namespace npu::bridge
