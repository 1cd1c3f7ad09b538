#include "Allocator.h"

#include "Device.h"
#include "GraphCapture.h"

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

namespace npu::bridge {

namespace {
// Requests are rounded to this granule so that tensors of nearly equal size
// share cached blocks.
constexpr uint64_t kGranule = 512;

// Blocks freed by this thread while it had packets not yet submitted: if
// another thread reused one before those packets ran, they would read its
// data. They join the cache when the packets are submitted.
thread_local std::vector<uint64_t> t_deferred;

// A free block of `size` from `blocks` (block size -> addresses), or 0.
uint64_t takeBlock(std::unordered_map<uint64_t, std::vector<uint64_t>> &blocks, uint64_t size) {
  const auto it = blocks.find(size);
  if (it == blocks.end() || it->second.empty())
    return 0;
  const uint64_t address = it->second.back();
  it->second.pop_back();
  return address;
}
} // namespace

uint64_t DeviceAllocator::blockSize(uint64_t bytes) {
  return (bytes + kGranule - 1) / kGranule * kGranule;
}

c10::DataPtr DeviceAllocator::allocate(size_t bytes) {
  const c10::Device device(c10::DeviceType::PrivateUse1, 0);
  if (bytes == 0)
    return {nullptr, nullptr, &releaseBlock, device};
  const uint64_t size = blockSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  // A capture's allocations reuse the blocks its graph freed before taking new ones.
  GraphPool *pool = capturePool();
  uint64_t address = pool ? takeBlock(pool->free, size) : 0;
  if (address != 0) {
    ++stats_.cacheHits;
  } else if ((address = takeBlock(cache_, size)) != 0) {
    --stats_.cachedBlocks;
    ++stats_.cacheHits;
  } else {
    try {
      address = runtime().malloc(size);
    } catch (const rt::Error &first) {
      if (first.code() != rt::ErrorCode::OutOfMemory)
        raise(first);
      // Cached blocks may be what stands in the way.
      ++stats_.retries;
      releaseCacheLocked();
      try {
        address = runtime().malloc(size);
      } catch (const rt::Error &e) {
        ++stats_.ooms;
        TORCH_CHECK_WITH(
            OutOfMemoryError, false, "NPU out of memory: tried to allocate ", bytes, " bytes; ",
            stats_.allocatedBytes.current, " bytes are held by live tensors, of a device heap of ",
            runtime().memoryStats().reservedBytes,
            " bytes (its 'device' region is NPU_MEMORY_SIZE=", deviceMemorySize(),
            ": raise it, e.g. NPU_MEMORY_SIZE=32G, before the device starts). Runtime: ", e.what());
      }
    }
    stats_.reservedBytes.increase(size);
    stats_.reservedBlocks.increase(1);
  }
  if (pool) {
    if (pool->blocks.emplace(address, size).second) {
      pool->bytes += size;
      pools_.emplace(address, pool);
    }
    ++pool->liveBlocks;
    noteCaptureAllocation(address);
  }
  live_.emplace(address, Block{size, bytes});
  stats_.liveBlocks.increase(1);
  ++stats_.allocations;
  stats_.allocatedBytes.increase(size);
  stats_.requestedBytes.increase(bytes);
  void *pointer = reinterpret_cast<void *>(address);
  return {pointer, pointer, &releaseBlock, device};
}

void DeviceAllocator::releaseBlock(void *address) {
  if (!address)
    return;
  if (hasPendingPackets())
    t_deferred.push_back(reinterpret_cast<uint64_t>(address));
  else
    allocator().release(reinterpret_cast<uint64_t>(address));
}

void DeviceAllocator::releaseDeferred() {
  while (!t_deferred.empty()) {
    const uint64_t address = t_deferred.back();
    t_deferred.pop_back();
    release(address);
  }
}

void DeviceAllocator::release(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(address);
  if (it == live_.end())
    return; // a block of a runtime that a backend switch replaced
  const Block block = it->second;
  live_.erase(it);
  stats_.liveBlocks.decrease(1);
  ++stats_.frees;
  stats_.allocatedBytes.decrease(block.size);
  stats_.requestedBytes.decrease(block.requested);
  if (const auto owner = pools_.find(address); owner != pools_.end()) {
    owner->second->free[block.size].push_back(address);
    --owner->second->liveBlocks;
    return;
  }
  cache_[block.size].push_back(address);
  ++stats_.cachedBlocks;
}

void DeviceAllocator::releasePool(GraphPool &pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &[address, size] : pool.blocks)
    pools_.erase(address);
  for (auto &[size, addresses] : pool.free) {
    std::vector<uint64_t> &cached = cache_[size];
    cached.insert(cached.end(), addresses.begin(), addresses.end());
    stats_.cachedBlocks += addresses.size();
  }
  pool.free.clear();
}

void DeviceAllocator::copy_data(void *dest, const void *src, size_t count) const {
  if (count == 0)
    return;
  flush();
  deviceCall([&] {
    runtime().memcpyDeviceToDevice(reinterpret_cast<uint64_t>(dest),
                                   reinterpret_cast<uint64_t>(src), count);
  });
}

DeviceAllocator::Stats DeviceAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceAllocator::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat *stat : stats_.counters())
    stat->reset_peak();
}

c10::CachingDeviceAllocator::DeviceStats DeviceAllocator::getDeviceStats(c10::DeviceIndex) {
  const Stats s = stats();
  c10::CachingDeviceAllocator::DeviceStats out;
  // Every block is of one pool: the aggregate entry holds it all.
  constexpr size_t kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  out.allocation[kAll] = s.liveBlocks;
  out.active[kAll] = s.liveBlocks;
  out.segment[kAll] = s.reservedBlocks;
  out.allocated_bytes[kAll] = s.allocatedBytes;
  out.active_bytes[kAll] = s.allocatedBytes;
  out.requested_bytes[kAll] = s.requestedBytes;
  out.reserved_bytes[kAll] = s.reservedBytes;
  out.num_alloc_retries = static_cast<int64_t>(s.retries);
  out.num_ooms = static_cast<int64_t>(s.ooms);
  return out;
}

void DeviceAllocator::resetAccumulatedStats(c10::DeviceIndex) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat *stat : stats_.counters())
    stat->reset_accumulated();
  stats_.allocations = stats_.cacheHits = stats_.frees = stats_.retries = stats_.ooms = 0;
}

void DeviceAllocator::resetPeakStats(c10::DeviceIndex) {
  resetPeak();
}

std::pair<size_t, size_t> DeviceAllocator::getMemoryInfo(c10::DeviceIndex) {
  const rt::MemoryStats r = deviceCall([] { return runtime().memoryStats(); });
  return {r.reservedBytes - r.allocatedBytes, r.reservedBytes};
}

void DeviceAllocator::releaseCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCacheLocked();
}

void DeviceAllocator::releaseCacheLocked() {
  flush();
  for (auto &[size, addresses] : cache_) {
    for (uint64_t address : addresses) {
      runtime().free(address);
      stats_.reservedBytes.decrease(size);
      stats_.reservedBlocks.decrease(1);
    }
  }
  cache_.clear();
  stats_.cachedBlocks = 0;
}

DeviceAllocator &allocator() {
  static DeviceAllocator *instance = new DeviceAllocator; // outlives every tensor
  return *instance;
}

} // namespace npu::bridge

namespace {
const bool g_registered = [] {
  c10::SetAllocator(c10::DeviceType::PrivateUse1, &npu::bridge::allocator());
  return true;
}();
} // namespace
