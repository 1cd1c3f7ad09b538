#include "capture.h"

#include "npu/rt/runtime.h"

#include <algorithm>
#include <cstring>

namespace npu::rt {

std::vector<isa::Packet> copyPackets(uint64_t dst, uint64_t src, uint64_t bytes) {
  // COPY moves at most 2^32-1 bytes per packet.
  constexpr uint64_t kChunk = 0x80000000u;
  std::vector<isa::Packet> packets;
  for (uint64_t done = 0; done < bytes; done += kChunk) {
    isa::inst::Copy copy;
    copy.dst = dst + done;
    copy.src = src + done;
    copy.bytes = static_cast<uint32_t>(std::min(kChunk, bytes - done));
    copy.toPacket(packets.emplace_back().data());
  }
  return packets;
}

TraceRecorder::TraceRecorder(std::string path, uint64_t stagingBase, uint64_t stagingSize)
    : path_(std::move(path)), stagingBase_(stagingBase), stagingSize_(stagingSize) {
  object_.metadata.emplace_back("producer", "libnpu_rt trace capture");
}

void TraceRecorder::addInitialData(uint64_t address, std::vector<uint8_t> bytes) {
  if (!bytes.empty())
    object_.data.push_back({address, std::move(bytes)});
}

void TraceRecorder::copyFromStaging(uint64_t dst, uint64_t stagingAddress, uint64_t bytes) {
  for (const isa::Packet &p : copyPackets(dst, stagingAddress, bytes))
    object_.text.push_back(p);
}

void TraceRecorder::hostWrite(uint64_t address, const void *src, uint64_t bytes) {
  if (bytes == 0)
    return;
  if (stagingUsed_ + bytes > stagingSize_)
    throw Error(ErrorCode::Io, "trace capture: host writes exceed the " +
                                   std::to_string(stagingSize_ >> 20) + " MiB staging region");
  const uint64_t staging = stagingBase_ + stagingUsed_;
  const auto *b = static_cast<const uint8_t *>(src);
  object_.data.push_back({staging, std::vector<uint8_t>(b, b + bytes)});
  // Keep segments 64-byte aligned so COPYs are bus-friendly.
  stagingUsed_ += (bytes + 63) & ~uint64_t(63);
  copyFromStaging(address, staging, bytes);
}

void TraceRecorder::hostFill(uint64_t address, uint8_t value, uint64_t bytes) {
  if (bytes % 4 == 0 && address % 4 == 0 && bytes / 4 <= UINT32_MAX && bytes) {
    isa::inst::Fill fill;
    fill.dst = address;
    fill.value = 0x01010101u * value;
    fill.count = static_cast<uint32_t>(bytes / 4);
    object_.text.push_back(isa::packetOf(fill));
    return;
  }
  hostWrite(address, std::vector<uint8_t>(bytes, value).data(), bytes);
}

void TraceRecorder::packets(std::span<const isa::Packet> packets) {
  object_.text.insert(object_.text.end(), packets.begin(), packets.end());
}

void TraceRecorder::hostRead(uint64_t address, uint64_t bytes) {
  if (bytes == 0)
    return;
  uint64_t start = address, end = address + bytes;
  // Merge with every overlapping or touching range.
  auto it = readBack_.upper_bound(start);
  if (it != readBack_.begin() && std::prev(it)->second >= start)
    --it;
  while (it != readBack_.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = readBack_.erase(it);
  }
  readBack_[start] = end;
}

void TraceRecorder::finish(Backend &backend) {
  object_.text.push_back(isa::packetOf(isa::inst::Halt{}));
  for (const auto &[start, end] : readBack_) {
    bin::CheckRegion check;
    check.address = start;
    check.expected.resize(end - start);
    backend.readMemory(start, check.expected.data(), end - start);
    object_.checks.push_back(std::move(check));
  }
  object_.symbols.push_back({"trace_end", bin::Symbol::Kind::Packet, object_.text.size() - 1});
  try {
    bin::writeFile(path_, object_);
  } catch (const std::exception &e) {
    throw Error(ErrorCode::Io, std::string("trace capture: ") + e.what());
  }
}

} // namespace npu::rt
