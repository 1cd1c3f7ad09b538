// The Verilated npu_top as a device: its AXI4 master served from a
// npu::mem::PhysicalMemory with configurable latency and wait states, its
// AXI4-Lite register window driven by readCsr/writeCsr, a clock that runs
// until the device is idle, hang detection, per-packet records and an
// optional VCD waveform over a cycle window.
#pragma once

#include "npu/mem/fault.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/profile.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::rtl {

struct DeviceOptions {
  // Cycles from an accepted read or write burst to its first data beat or
  // its response (isa/hardware.td MemLatency by default).
  unsigned memoryLatency = 20;
  // Percentage of cycles in which the memory withholds a ready or valid
  // signal (wait states and back-pressure), from a seeded generator.
  unsigned stallPercent = 0;
  uint64_t stallSeed = 1;
  // A run stops with a Timeout fault when neither a packet completes nor a
  // memory beat moves for this many cycles.
  uint64_t hangCycles = 2'000'000;
  // VCD waveform of cycles [waveformStart, waveformStop) when the path is set.
  std::string waveformPath;
  uint64_t waveformStart = 0;
  uint64_t waveformStop = UINT64_MAX;

  // The defaults, overridden by NPU_RTL_LATENCY, NPU_RTL_STALL_PERCENT,
  // NPU_RTL_STALL_SEED, NPU_RTL_HANG_CYCLES, NPU_RTL_VCD,
  // NPU_RTL_VCD_START and NPU_RTL_VCD_STOP.
  static DeviceOptions fromEnvironment();
};

// The device stopped making progress. fault() carries code Timeout and the
// index of the packet in flight; what() the progress report.
class HangError : public mem::DeviceFault {
public:
  using mem::DeviceFault::DeviceFault;
};

class Device {
public:
  Device(mem::PhysicalMemory &memory, const DeviceOptions &options = DeviceOptions::fromEnvironment());
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  uint32_t readCsr(uint32_t offset);
  void writeCsr(uint32_t offset, uint32_t value);

  // Clocks the device until it has no packet to run (ring empty, halted or
  // faulted). Throws HangError if it stops making progress; the device is
  // then reset (as after power-up, ring registers included).
  void runUntilIdle();

  // Records of the packets completed since the last call (faulting packets
  // have none), when recording is on.
  void setRecording(bool enabled) { recording_ = enabled; }
  std::vector<sim::PacketRecord> takeRecords();
  // Cycles of the last completed packet, and totals since the last RESET.
  const sim::Stats &stats() const { return stats_; }
  void resetStats() { stats_ = sim::Stats{}; }

  uint64_t cycle() const { return cycle_; } // clock cycles since construction
  unsigned modelThreads() const; // Verilator threads of the model

  // The byte ranges the device wrote since the last call, in write order
  // (adjacent ranges merged), for co-simulation.
  std::vector<std::pair<uint64_t, uint64_t>> takeWrittenRanges();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool recording_ = false;
  std::vector<sim::PacketRecord> records_;
  sim::Stats stats_;
  uint64_t cycle_ = 0;

  void tick();
  void hardReset();
};

} // namespace npu::rtl
