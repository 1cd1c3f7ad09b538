// The cycles a memory request of many bursts loses to the port's
// HW_AXI_OUTSTANDING bursts in flight (rtl/npu_mem_port.sv), burst by burst
// as the request issues them. Internal to libnpu_iss: the cycle model
// (timing.cpp) splits requests and times a matrix panel's request with
// these.
#pragma once

#include "dma_timing.h"
#include "npu/isa/isa.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace npu::sim {

// The bursts of `beats` beats from the one at `address` in order, as the
// memory port splits a run (npu_mem_bursts.sv): at most HW_AXI_MAX_BURST
// beats each and never across a 4 KiB page.
template <class Burst> void forEachBurst(uint64_t address, uint64_t beats, Burst &&burst) {
  constexpr uint64_t kBeat = isa::hw::kAxiDataBytes;
  for (uint64_t beat = address / kBeat * kBeat; beats;) {
    const uint64_t take = burstBeats(beat, beats);
    burst(take);
    beats -= take;
    beat += take * kBeat;
  }
}

// When the last of `bursts` (beat counts, in order) completes with at most
// `limit` in flight: a read burst's beats follow its address by the latency
// and the previous burst's beats; a write burst's address follows the
// previous burst's last beat, and its response the last beat by the
// latency. The reference OutstandingStall is tested against (it needs the
// whole request at once).
inline uint64_t burstsEnd(std::span<const uint64_t> bursts, uint64_t latency, uint64_t beat,
                          bool write, size_t limit) {
  std::vector<uint64_t> end(bursts.size());
  uint64_t address = 0, last = 0;
  for (size_t i = 0; i < bursts.size(); ++i) {
    const uint64_t slotFree = i >= limit ? end[i - limit] + (write ? 1 : 0) : 0;
    if (write) {
      address = std::max(last + 1, slotFree);
      last = std::max(address + 1, last + beat) + (bursts[i] - 1) * beat;
      end[i] = last + latency;
    } else {
      address = std::max(i ? address + 1 : 1, slotFree);
      last = std::max(address + latency, last) + bursts[i] * beat;
      end[i] = last;
    }
  }
  return bursts.empty() ? 0 : end.back();
}

// burstsEnd with the limit minus without it, one burst at a time and without
// storing the request: only the ends of the last HW_AXI_OUTSTANDING bursts
// can free a slot. While no more bursts than the limit have been added both
// timelines are the same (no slot is ever waited for), so the stall is zero.
class OutstandingStall {
public:
  OutstandingStall(uint64_t latency, uint64_t beat, bool write)
      : latency_(latency), beat_(beat), write_(write) {}

  void add(uint64_t beats) {
    const size_t slot = count_ % kLimit;
    const uint64_t slotFree = count_ >= kLimit ? ends_[slot] + (write_ ? 1 : 0) : 0;
    ends_[slot] = limited_.add(beats, slotFree, *this);
    unlimited_.add(beats, 0, *this);
    ++count_;
  }
  uint64_t stall() const { return count_ ? limited_.end - unlimited_.end : 0; }

private:
  static constexpr size_t kLimit = isa::hw::kAxiOutstanding;
  struct Timeline {
    uint64_t address = 0, last = 0, end = 0;
    uint64_t add(uint64_t beats, uint64_t slotFree, const OutstandingStall &s) {
      if (s.write_) {
        address = std::max(last + 1, slotFree);
        last = std::max(address + 1, last + s.beat_) + (beats - 1) * s.beat_;
        end = last + s.latency_;
      } else {
        address = std::max(s.count_ ? address + 1 : 1, slotFree);
        last = std::max(address + s.latency_, last) + beats * s.beat_;
        end = last;
      }
      return end;
    }
  };
  uint64_t latency_, beat_;
  bool write_;
  uint64_t count_ = 0;
  Timeline limited_, unlimited_;
  std::array<uint64_t, kLimit> ends_{};
};

} // namespace npu::sim
