// Reduces a diverging stream to a small one that still diverges the same
// way (same divergenceSignature): delta debugging over the packets before
// the divergent one, then over each packet's sizes, flags, enums and
// scalars, then over the data segments (dropped whole, then zeroed in
// halves). Every candidate is run from a fresh device, so the result
// reproduces with `npu-sim --backend cosim` when it has no faulting packets
// before the divergent one, and with npu-regress --replay always.
#pragma once

#include "npu/bin/object.h"
#include "npu/verify/runner.h"

#include <cstdint>
#include <functional>
#include <string>

namespace npu::verify {

// Runs a candidate stream; runStream on a backend, normally.
using StreamRunner = std::function<RunResult(const bin::Object &)>;

struct MinimiseOptions {
  uint32_t maxRuns = 400; // candidate runs at most
};

struct MinimiseResult {
  bin::Object object;
  RunResult run;     // of the minimised stream
  uint32_t runs = 0; // candidates tried
  size_t packetsBefore = 0, dataBytesBefore = 0;
  size_t dataBytes() const;
};

// `failing` must diverge with `failingRun.signature` when `run` runs it.
MinimiseResult minimise(const bin::Object &failing, const RunResult &failingRun,
                        const StreamRunner &run, const MinimiseOptions &options = {});

} // namespace npu::verify
