// What the remote backend's client and npu-server share: the limits of the
// protocol and the conversions between npu::rt::Backend's types and their
// protobuf messages (npu_remote.proto).
#pragma once

#include "npu_remote.pb.h"

#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/profile.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace npu::remote {

// Memory moves in chunks of at most this many bytes, one message each; the
// largest message either side accepts leaves room for the envelope.
inline constexpr uint64_t kMaxChunkBytes = uint64_t(1) << 20;
inline constexpr int kMaxMessageBytes = int(kMaxChunkBytes) + 64 * 1024;
// The metadata key of the shared token.
inline constexpr std::string_view kTokenKey = "npu-token";

Fault toProto(const mem::Fault &fault);
mem::Fault fromProto(const Fault &fault);
Stats toProto(const sim::Stats &stats);
sim::Stats fromProto(const Stats &stats);
Records toProto(const std::vector<sim::PacketRecord> &records);
std::vector<sim::PacketRecord> fromProto(const Records &records);
MemoryStatsReply toProto(const std::vector<mem::PhysicalMemory::RegionStats> &regions);
std::vector<mem::PhysicalMemory::RegionStats> fromProto(const MemoryStatsReply &reply);

// Equal strings in a time that does not depend on where they differ.
bool tokensEqual(std::string_view a, std::string_view b);

} // namespace npu::remote
