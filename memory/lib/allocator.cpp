#include "npu/mem/allocator.h"

#include "npu/mem/hex.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <stdexcept>

namespace npu::mem {

DeviceAllocator::DeviceAllocator(uint64_t base, uint64_t size, uint64_t alignment)
    : base_(base), alignment_(alignment), capacity_(size & ~(alignment - 1)) {
  if (!std::has_single_bit(alignment))
    throw std::invalid_argument("device allocator: alignment " + std::to_string(alignment) +
                                " is not a power of two");
  if (base % alignment != 0)
    throw std::invalid_argument("device allocator: base " + fmt::hex(base) +
                                " is not a multiple of the alignment " + std::to_string(alignment));
  if (size != 0 && size - 1 > UINT64_MAX - base)
    throw std::invalid_argument("device allocator: base " + fmt::hex(base) + " + size " +
                                fmt::hex(size) + " runs past 2^64");
  if (capacity_ != 0)
    insertFreeBlock(0, capacity_);
}

std::optional<uint64_t> DeviceAllocator::allocate(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  if (bytes == 0)
    bytes = alignment_;
  // Checked first so that rounding up cannot overflow: capacity_ is a
  // multiple of the alignment below 2^64.
  if (bytes > capacity_) {
    ++failedAllocations_;
    return std::nullopt;
  }
  uint64_t rounded = (bytes + alignment_ - 1) & ~(alignment_ - 1);
  auto best = freeBySize_.lower_bound({rounded, 0});
  if (best == freeBySize_.end()) {
    ++failedAllocations_;
    return std::nullopt;
  }
  auto [blockSize, offset] = *best;
  freeBySize_.erase(best);
  freeByOffset_.erase(offset);
  if (blockSize > rounded) {
    freeByOffset_.emplace(offset + rounded, blockSize - rounded);
    freeBySize_.emplace(blockSize - rounded, offset + rounded);
  }
  live_.emplace(offset, rounded);
  allocatedBytes_ += rounded;
  peakAllocatedBytes_ = std::max(peakAllocatedBytes_, allocatedBytes_);
  ++totalAllocations_;
  return base_ + offset;
}

DeviceAllocator::FreeResult DeviceAllocator::free(uint64_t address) {
  std::lock_guard lock(mutex_);
  if (address < base_)
    return FreeResult::NotAllocated;
  auto allocation = live_.find(address - base_);
  if (allocation == live_.end())
    return FreeResult::NotAllocated;
  auto [offset, size] = *allocation;
  live_.erase(allocation);
  allocatedBytes_ -= size;
  ++totalFrees_;
  insertFreeBlock(offset, size);
  return FreeResult::Ok;
}

// Adds a block to both free indexes, merged with the free neighbours it
// touches, so that free blocks are always maximal.
void DeviceAllocator::insertFreeBlock(uint64_t offset, uint64_t size) {
  auto next = freeByOffset_.lower_bound(offset);
  if (next != freeByOffset_.end() && next->first == offset + size) {
    size += next->second;
    freeBySize_.erase({next->second, next->first});
    next = freeByOffset_.erase(next);
  }
  if (next != freeByOffset_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      offset = previous->first;
      size += previous->second;
      freeBySize_.erase({previous->second, previous->first});
      freeByOffset_.erase(previous);
    }
  }
  freeByOffset_.emplace_hint(next, offset, size);
  freeBySize_.emplace(size, offset);
}

std::optional<DeviceAllocator::Block> DeviceAllocator::findAllocation(uint64_t address) const {
  std::lock_guard lock(mutex_);
  if (address < base_)
    return std::nullopt;
  uint64_t offset = address - base_;
  auto after = live_.upper_bound(offset);
  if (after == live_.begin())
    return std::nullopt;
  auto [start, size] = *std::prev(after);
  if (offset - start >= size)
    return std::nullopt;
  return Block{base_ + start, size};
}

std::vector<DeviceAllocator::Block> DeviceAllocator::liveAllocations() const {
  std::lock_guard lock(mutex_);
  std::vector<Block> blocks;
  blocks.reserve(live_.size());
  for (const auto &[offset, size] : live_)
    blocks.push_back({base_ + offset, size});
  return blocks;
}

DeviceAllocator::Stats DeviceAllocator::stats() const {
  std::lock_guard lock(mutex_);
  uint64_t freeBytes = capacity_ - allocatedBytes_;
  uint64_t largest = freeBySize_.empty() ? 0 : freeBySize_.rbegin()->first;
  return Stats{
      .capacity = capacity_,
      .allocatedBytes = allocatedBytes_,
      .peakAllocatedBytes = peakAllocatedBytes_,
      .freeBytes = freeBytes,
      .largestFreeBlock = largest,
      .liveAllocations = live_.size(),
      .totalAllocations = totalAllocations_,
      .totalFrees = totalFrees_,
      .fragmentation = freeBytes == 0 ? 0.0 : 1.0 - double(largest) / double(freeBytes),
      .failedAllocations = failedAllocations_,
  };
}

void DeviceAllocator::resetPeak() {
  std::lock_guard lock(mutex_);
  peakAllocatedBytes_ = allocatedBytes_;
}

} // namespace npu::mem
