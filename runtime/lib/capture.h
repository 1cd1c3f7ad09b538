// Trace capture: turns everything the runtime does into one self-contained
// .npubin. Host writes become COPY packets from staged data segments (so
// they replay in stream order), read-back ranges become check regions
// holding their final contents. Internal to libnpu_rt.
#pragma once

#include "npu/bin/object.h"
#include "npu/rt/backend.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace npu::rt {

// COPY packets moving `bytes` from src to dst (one per 2 GiB).
std::vector<isa::Packet> copyPackets(uint64_t dst, uint64_t src, uint64_t bytes);

class TraceRecorder {
public:
  // `initial` is the state live allocations already hold when capture begins.
  TraceRecorder(std::string path, uint64_t stagingBase, uint64_t stagingSize);

  void addInitialData(uint64_t address, std::vector<uint8_t> bytes);
  void hostWrite(uint64_t address, const void *src, uint64_t bytes);
  void hostFill(uint64_t address, uint8_t value, uint64_t bytes);
  void packets(std::span<const isa::Packet> packets);
  void hostRead(uint64_t address, uint64_t bytes);

  // Writes the container; `backend` supplies the final contents of every
  // range the host read back.
  void finish(Backend &backend);
  const std::string &path() const { return path_; }

private:
  void copyFromStaging(uint64_t dst, uint64_t stagingAddress, uint64_t bytes);

  std::string path_;
  uint64_t stagingBase_;
  uint64_t stagingSize_;
  uint64_t stagingUsed_ = 0;
  bin::Object object_;
  std::map<uint64_t, uint64_t> readBack_; // start -> end, merged
};

} // namespace npu::rt
