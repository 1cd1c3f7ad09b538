// The device allocator behind every npu tensor. Storage data pointers are
// NPU physical addresses (never dereferenced on the host). Freed blocks are
// cached by size and reused: handing a block back to the runtime waits for
// the device to drain, whereas reuse is safe without waiting because the
// stream executes in order and host copies synchronise first.
#pragma once

#include <c10/core/Allocator.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace npu::bridge {

class DeviceAllocator final : public c10::Allocator {
public:
  struct Stats {
    uint64_t allocatedBytes = 0; // held by live tensors (block sizes)
    uint64_t peakAllocatedBytes = 0;
    uint64_t reservedBytes = 0; // allocated plus cached, all taken from the runtime
    uint64_t liveBlocks = 0;
    uint64_t cachedBlocks = 0;
    uint64_t allocations = 0;
    uint64_t cacheHits = 0;
    uint64_t frees = 0;
    uint64_t ooms = 0;
  };

  c10::DataPtr allocate(size_t bytes) override;
  c10::DeleterFnPtr raw_deleter() const override { return &releaseBlock; }
  void copy_data(void *dest, const void *src, size_t count) const override;

  Stats stats() const;
  void resetPeak();
  // Returns every cached block to the runtime.
  void releaseCache();
  // Caches the blocks this thread freed while it had unsubmitted packets
  // (which may still read them); called right after those are submitted.
  void releaseDeferred();
  // The block size an allocation of `bytes` occupies.
  static uint64_t blockSize(uint64_t bytes);

private:
  static void releaseBlock(void *address);
  void release(uint64_t address);
  void releaseCacheLocked();

  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, uint64_t> live_;               // address -> block size
  std::unordered_map<uint64_t, std::vector<uint64_t>> cache_; // block size -> addresses
  Stats stats_;
};

DeviceAllocator &allocator();

} // namespace npu::bridge
