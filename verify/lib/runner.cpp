#include "npu/verify/runner.h"

#include "npu/rt/runtime.h"
#include "npu/verify/footprint.h"

namespace npu::verify {

namespace {

std::string opcodeText(uint32_t word) {
  const isa::InstrInfo *info = isa::findOpcode(word);
  return info ? info->mnemonic : "opcode " + std::to_string(word);
}

// Both models faulting with the injected class, or completing when
// nothing was injected. A range that starts in a region and runs past it
// faults OutOfRegion; one that starts outside every region Unmapped (the
// generator's placement of an out-of-region range may start it in a gap).
bool asIntended(mem::FaultCode intended, mem::FaultCode outcome) {
  return intended == outcome ||
         (intended == mem::FaultCode::OutOfRegion && outcome == mem::FaultCode::Unmapped);
}

} // namespace

std::string divergenceSignature(const std::string &mnemonic, const std::string &diagnostic) {
  const std::string outcome = "outcome differs: ";
  const size_t at = diagnostic.find(outcome);
  if (at == std::string::npos)
    return mnemonic + (diagnostic.find("the RTL read the beat at ") != std::string::npos
                           ? ": read outside the operands"
                           : ": memory");
  // "ISS fault overlap at 0x..., RTL completed": keep the classes, drop addresses.
  std::string text = diagnostic.substr(at + outcome.size());
  std::string kept;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 4, " at ") == 0) {
      i += 4;
      while (i < text.size() && text[i] != ',' && text[i] != ' ')
        ++i;
      continue;
    }
    kept += text[i++];
  }
  return mnemonic + ": " + kept;
}

RunResult runStream(const bin::Object &object, const RunOptions &options,
                    const std::vector<PacketIntent> *intents, Coverage *coverage) {
  rt::RuntimeOptions runtimeOptions;
  runtimeOptions.backend = options.backend;
  rt::Runtime runtime(runtimeOptions);
  for (const bin::DataSegment &seg : object.data)
    runtime.writePhysical(seg.address, seg.bytes.data(), seg.bytes.size());

  RunResult result;
  std::vector<std::pair<uint64_t, uint64_t>> previousWrites, writes;
  for (size_t i = 0; i < object.text.size(); ++i) {
    const isa::Packet &packet = object.text[i];
    const uint32_t opcodeWord = isa::detail::load32(packet.data(), 0);
    // The inputs as they are before the packet runs.
    const uint32_t inputValues =
        coverage ? inputValueClasses(packet,
                                     [&](uint64_t address, void *dst, uint64_t bytes) {
                                       runtime.readPhysical(address, dst, bytes);
                                     })
                 : 0;
    mem::FaultCode outcome = mem::FaultCode::None;
    // A reset clears the cycle counter: keep what the device counted so far.
    const uint64_t cyclesBefore = runtime.deviceCycles();
    try {
      runtime.submit(std::span<const isa::Packet>(&packet, 1));
      runtime.synchronize();
    } catch (const rt::Error &e) {
      if (e.code() != rt::ErrorCode::DeviceFault)
        throw;
      const std::optional<rt::FaultInfo> fault = runtime.lastFault();
      outcome = fault ? fault->fault.code : mem::FaultCode::None;
      if (outcome == mem::FaultCode::Divergence) {
        result.diverged = true;
        result.divergentPacket = i;
        result.diagnostic = fault->fault.detail;
        result.signature = divergenceSignature(opcodeText(opcodeWord), result.diagnostic);
        if (intents && i < intents->size())
          result.divergentIntent = (*intents)[i].injected;
        result.deviceCycles += cyclesBefore;
        return result; // the device holds the divergence until a reset: nothing more to ask it
      }
      result.deviceCycles += cyclesBefore;
      runtime.reset();
    }
    result.packetsExecuted++;
    result.outcomes.push_back(outcome);
    if (intents && i < intents->size() && !asIntended((*intents)[i].injected, outcome)) {
      const PacketIntent &intent = (*intents)[i];
      result.unexpected.push_back(
          "packet " + std::to_string(i) + " (" + opcodeText(opcodeWord) + "): " +
          (intent.injected == mem::FaultCode::None
               ? std::string("meant to complete")
               : std::string("meant to fault ") + mem::faultCodeName(intent.injected) + " (" +
                     intent.note + ")") +
          ", both models " +
          (outcome == mem::FaultCode::None
               ? std::string("completed")
               : std::string("faulted ") + mem::faultCodeName(outcome)));
    }
    writes.clear();
    if (outcome == mem::FaultCode::None) {
      isa::Instruction inst;
      if (isa::decode(packet, inst))
        for (const Buffer &b : footprintOf(inst).buffers)
          if (b.writes())
            writes.emplace_back(b.begin(), b.bytes);
    }
    if (coverage)
      coverage->sample({packet, outcome, inputValues, &previousWrites});
    previousWrites.swap(writes);
    if (outcome == mem::FaultCode::None && opcodeWord == static_cast<uint32_t>(isa::Opcode::HALT))
      break;
  }
  result.deviceCycles += runtime.deviceCycles();
  return result;
}

} // namespace npu::verify
