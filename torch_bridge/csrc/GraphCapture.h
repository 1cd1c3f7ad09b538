// Graph capture and replay, the device half of torch.compile(backend="npu")
// (npu_bridge/compile.py, docs/pytorch.md "torch.compile").
//
// While a capture runs on a thread, every packet that thread submits is also
// recorded, and its allocations come from a pool the captured graph owns: a
// block freed during the capture is reused by a later allocation of the
// capture (liveness), and after it stays reserved for the replays. A replay
// submits the recorded packets again, in one runtime submission, with the
// address fields (found through the generated ISA tables) that point into
// the capture's inputs or outputs moved to this call's tensors.
#pragma once

#include "npu/isa/isa.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace npu::bridge {

// Device blocks owned by one captured graph.
struct GraphPool {
  std::unordered_map<uint64_t, std::vector<uint64_t>> free; // block size -> addresses
  std::unordered_map<uint64_t, uint64_t> blocks;            // address -> block size
  uint64_t liveBlocks = 0;
  uint64_t bytes = 0;
};

// --- Hooks of the allocator and of flush() ------------------------------------

// The pool of the capture running on this thread, or nullptr.
GraphPool *capturePool() noexcept;
// An allocation of the running capture at `address`: packets from the next
// one built on may use it.
void noteCaptureAllocation(uint64_t address);
// flush() is submitting `packets`; `explicitFlush` unless it was called
// through flushDeviceWork(): a host copy or a wait for the device may
// follow, which a replay could not repeat.
void noteFlush(const std::vector<isa::Packet> &packets, bool explicitFlush);
// flush() for a caller that only submits device work, with no host access
// after it (an op as it ends, a storage resize): a capture records it as
// replayable. Defined in Device.cpp.
void flushDeviceWork();

// --- Capture ----------------------------------------------------------------------

struct CaptureState;

// The recorded packets of one capture and the pool its allocations came
// from. A replay needs every tensor of the capture freed (their blocks are
// the pool's again).
class GraphStream {
public:
  explicit GraphStream(std::unique_ptr<CaptureState> state);
  ~GraphStream();
  GraphStream(const GraphStream &) = delete;
  GraphStream &operator=(const GraphStream &) = delete;

  // Finds the address fields to patch at a replay: those pointing into the
  // storage of an input, or into the storage of an output (an allocation of
  // the pool) from the packet of its allocation on.
  void bind(const std::vector<at::Tensor> &inputs, const std::vector<at::Tensor> &outputs);
  // Submits the packets once, in one submission, with inputs and outputs
  // (storages laid out as bind's) at their addresses of this call.
  void replay(const std::vector<at::Tensor> &inputs, const std::vector<at::Tensor> &outputs);
  // Whether `address` is a block of this graph's pool.
  bool owns(uint64_t address) const;

  size_t packetCount() const { return packets_.size(); }
  size_t patchCount() const { return patches_.size(); }
  uint64_t poolBytes() const { return pool_->bytes; }
  // Packets the capture submitted not at the end of an op (see noteFlush).
  uint64_t explicitFlushes() const { return explicitFlushes_; }

private:
  struct Region {
    uint64_t begin, end;  // captured byte range
    uint64_t firstPacket; // packets before it addressed another occupant
    size_t slot;          // index into the replay's base addresses
  };
  struct Patch {
    uint32_t packet, byteOffset;
    size_t slot;
  };
  std::vector<uint64_t> bases(const std::vector<at::Tensor> &inputs,
                              const std::vector<at::Tensor> &outputs) const;

  std::vector<isa::Packet> packets_;
  std::shared_ptr<GraphPool> pool_;
  std::unordered_map<uint64_t, uint64_t> allocatedAt_; // address -> packet index
  uint64_t explicitFlushes_;
  std::vector<uint64_t> capturedBases_; // per slot
  std::vector<size_t> inputSlots_, outputSlots_;
  std::vector<Patch> patches_;
  bool bound_ = false;
};

// Starts a capture on this thread (one at a time).
void beginGraphCapture();
// (packets recorded, explicit flushes) of the running capture.
std::pair<uint64_t, uint64_t> graphCaptureCounters();
// Ends the capture: its packets and pool.
std::unique_ptr<GraphStream> endGraphCapture();

} // namespace npu::bridge
