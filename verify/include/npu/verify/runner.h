// Runs a stream packet by packet on a backend of the runtime (normally
// cosim: the ISS and the RTL in lockstep), the way a regression needs it: a
// packet that faults in both models the same way is an outcome, not the
// end of the stream (the device is reset and the next packet runs); a
// divergence ends the stream and is the failure. Samples coverage from
// every executed packet and compares outcomes with the generator's intent.
#pragma once

#include "npu/bin/object.h"
#include "npu/mem/fault.h"
#include "npu/verify/coverage.h"
#include "npu/verify/generator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npu::verify {

struct RunOptions {
  // A runtime backend (cosim: the ISS against the RTL; iss or rtl alone), or
  // "reference": the ISS against the slow reference model of the ISA.
  std::string backend = "cosim";
};

struct RunResult {
  bool diverged = false;
  uint64_t divergentPacket = 0;
  std::string diagnostic; // the backend's report of the divergence
  // The divergent packet's mnemonic and the kind of difference ("memory",
  // or both outcomes), which a minimised stream must keep.
  std::string signature;
  // What the generator meant the divergent packet to do (given intents).
  mem::FaultCode divergentIntent = mem::FaultCode::None;
  uint64_t packetsExecuted = 0;         // completed or faulted alike
  std::vector<mem::FaultCode> outcomes; // per executed packet
  uint64_t deviceCycles = 0;
  // Packets whose outcome differs from what the generator meant (both
  // models agree, so this is not a divergence: the footprint model, the
  // generator or the ISA's prose disagrees with the models).
  std::vector<std::string> unexpected;
};

// Runs `object` from a fresh device. `intents` (optional, one per packet)
// enable the intent check; `coverage` (optional) is sampled.
RunResult runStream(const bin::Object &object, const RunOptions &options,
                    const std::vector<PacketIntent> *intents = nullptr,
                    Coverage *coverage = nullptr);

// "<mnemonic>: memory", "<mnemonic>: read outside the operands" or
// "<mnemonic>: ISS <outcome>, RTL <outcome>" from a divergence report (the
// RTL's side named "reference" against the reference model).
std::string divergenceSignature(const std::string &mnemonic, const std::string &diagnostic);

} // namespace npu::verify
