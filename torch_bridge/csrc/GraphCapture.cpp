#include "GraphCapture.h"

#include "Allocator.h"
#include "Device.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace npu::bridge {

struct CaptureState {
  std::shared_ptr<GraphPool> pool = std::make_shared<GraphPool>();
  std::vector<isa::Packet> packets;
  std::unordered_map<uint64_t, uint64_t> allocatedAt; // address -> packet index
  uint64_t explicitFlushes = 0;
};

namespace {

thread_local std::unique_ptr<CaptureState> t_capture;

// Where the opcode sits in every packet (the .td's packet field "opcode").
const isa::PacketFieldInfo &opcodeField() {
  static const isa::PacketFieldInfo &field = [&]() -> const isa::PacketFieldInfo & {
    for (const isa::PacketFieldInfo &f : isa::packetFields())
      if (std::string_view(f.name) == "opcode")
        return f;
    TORCH_CHECK(false, "the ISA tables have no packet field 'opcode'");
  }();
  return field;
}

uint64_t readBits(const isa::Packet &packet, unsigned offset, unsigned width) {
  TORCH_CHECK(offset % 8 == 0 && width % 8 == 0 && width <= 64,
              "graph replay: packet field at bit ", offset, " of ", width,
              " bits is not a whole number of bytes");
  uint64_t value = 0;
  std::memcpy(&value, packet.data() + offset / 8, width / 8); // little-endian host and packet
  return value;
}

const isa::InstrInfo &instructionOf(const isa::Packet &packet) {
  const isa::PacketFieldInfo &field = opcodeField();
  const uint64_t opcode = readBits(packet, field.bitOffset, field.bitWidth);
  const isa::InstrInfo *info = isa::findOpcode(static_cast<uint32_t>(opcode));
  TORCH_CHECK(info, "graph replay: a recorded packet has the unknown opcode ", opcode);
  return *info;
}

uint64_t storageBase(const at::Tensor &t) {
  return reinterpret_cast<uint64_t>(t.storage().data());
}

} // namespace

GraphPool *capturePool() noexcept {
  return t_capture ? t_capture->pool.get() : nullptr;
}

void noteCaptureAllocation(uint64_t address) {
  if (t_capture)
    t_capture->allocatedAt[address] = t_capture->packets.size() + pendingPacketCount();
}

void noteFlush(const std::vector<isa::Packet> &packets, bool explicitFlush) {
  if (!t_capture)
    return;
  if (explicitFlush)
    ++t_capture->explicitFlushes;
  t_capture->packets.insert(t_capture->packets.end(), packets.begin(), packets.end());
}

void beginGraphCapture() {
  TORCH_CHECK(!t_capture, "an npu graph capture is already running on this thread");
  // Packets built before belong to no graph.
  flush();
  t_capture = std::make_unique<CaptureState>();
}

std::pair<uint64_t, uint64_t> graphCaptureCounters() {
  TORCH_CHECK(t_capture, "no npu graph capture is running on this thread");
  return {t_capture->packets.size() + pendingPacketCount(), t_capture->explicitFlushes};
}

std::unique_ptr<GraphStream> endGraphCapture() {
  TORCH_CHECK(t_capture, "no npu graph capture is running on this thread");
  flush();
  return std::make_unique<GraphStream>(std::move(t_capture));
}

GraphStream::GraphStream(std::unique_ptr<CaptureState> state)
    : packets_(std::move(state->packets)), pool_(std::move(state->pool)),
      allocatedAt_(std::move(state->allocatedAt)), explicitFlushes_(state->explicitFlushes) {}

GraphStream::~GraphStream() {
  allocator().releasePool(*pool_);
}

bool GraphStream::owns(uint64_t address) const {
  return pool_->blocks.contains(address);
}

void GraphStream::bind(const std::vector<at::Tensor> &inputs,
                       const std::vector<at::Tensor> &outputs) {
  TORCH_CHECK(!bound_, "graph replay: the stream is bound already");
  std::vector<Region> regions;
  // Views of one storage share its slot; a storage of no bytes has no address.
  auto slotOf = [&](const at::Tensor &t, bool output) -> size_t {
    const uint64_t base = storageBase(t);
    if (base == 0)
      return SIZE_MAX;
    for (size_t slot = 0; slot < capturedBases_.size(); ++slot)
      if (capturedBases_[slot] == base)
        return slot;
    const uint64_t end = base + t.storage().nbytes();
    for (const Region &r : regions)
      TORCH_CHECK(end <= r.begin || base >= r.end, "graph replay: the storages of the graph's ",
                  "inputs and outputs overlap without being the same storage");
    uint64_t firstPacket = 0;
    if (output) {
      TORCH_CHECK(owns(base), "graph replay: an output's storage is no allocation of the capture");
      firstPacket = allocatedAt_.at(base);
    }
    regions.push_back({base, end, firstPacket, capturedBases_.size()});
    capturedBases_.push_back(base);
    return capturedBases_.size() - 1;
  };
  for (const at::Tensor &t : inputs)
    inputSlots_.push_back(slotOf(t, false));
  for (const at::Tensor &t : outputs)
    outputSlots_.push_back(slotOf(t, true));

  std::sort(regions.begin(), regions.end(),
            [](const Region &a, const Region &b) { return a.begin < b.begin; });
  for (size_t index = 0; index < packets_.size(); ++index) {
    const isa::Packet &packet = packets_[index];
    for (const isa::OperandInfo &op : instructionOf(packet).operandList()) {
      if (op.kind != isa::OperandKind::Addr)
        continue;
      const uint64_t address = readBits(packet, op.bitOffset, op.bitWidth);
      auto after = std::upper_bound(regions.begin(), regions.end(), address,
                                    [](uint64_t a, const Region &r) { return a < r.begin; });
      if (after == regions.begin())
        continue;
      const Region &region = *std::prev(after);
      if (address < region.end && index >= region.firstPacket)
        patches_.push_back(
            {static_cast<uint32_t>(index), static_cast<uint32_t>(op.bitOffset / 8), region.slot});
    }
  }
  bound_ = true;
}

std::vector<uint64_t> GraphStream::bases(const std::vector<at::Tensor> &inputs,
                                         const std::vector<at::Tensor> &outputs) const {
  TORCH_CHECK(inputs.size() == inputSlots_.size() && outputs.size() == outputSlots_.size(),
              "graph replay: the graph was captured with ", inputSlots_.size(), " inputs and ",
              outputSlots_.size(), " outputs, given ", inputs.size(), " and ", outputs.size());
  std::vector<uint64_t> now(capturedBases_.size(), 0);
  auto place = [&](const at::Tensor &t, size_t slot) {
    if (slot == SIZE_MAX)
      return;
    const uint64_t base = storageBase(t);
    TORCH_CHECK(now[slot] == 0 || now[slot] == base, "graph replay: tensors that shared a ",
                "storage in the capture have different storages now");
    now[slot] = base;
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    place(inputs[i], inputSlots_[i]);
  for (size_t i = 0; i < outputs.size(); ++i)
    place(outputs[i], outputSlots_[i]);
  return now;
}

void GraphStream::replay(const std::vector<at::Tensor> &inputs,
                         const std::vector<at::Tensor> &outputs) {
  TORCH_CHECK(bound_, "graph replay: the stream is not bound");
  TORCH_CHECK(pool_->liveBlocks == 0, "graph replay: ", pool_->liveBlocks,
              " tensor(s) allocated during the capture are still alive, and the replay would "
              "overwrite them");
  const std::vector<uint64_t> now = bases(inputs, outputs);
  std::vector<isa::Packet> &pending = pendingPackets();
  flush();
  const size_t first = pending.size();
  pending.insert(pending.end(), packets_.begin(), packets_.end());
  for (const Patch &patch : patches_) {
    uint8_t *field = pending[first + patch.packet].data() + patch.byteOffset;
    uint64_t address = 0;
    std::memcpy(&address, field, sizeof address);
    address = address - capturedBases_[patch.slot] + now[patch.slot];
    std::memcpy(field, &address, sizeof address);
  }
  flush();
}

} // namespace npu::bridge
