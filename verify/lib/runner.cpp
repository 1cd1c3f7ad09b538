#include "npu/verify/runner.h"

#include "npu/mem/hex.h"
#include "npu/mem/physical_memory.h"
#include "npu/rt/runtime.h"
#include "npu/sim/checks.h"
#include "npu/sim/iss.h"
#include "npu/sim/reference.h"
#include "npu/verify/footprint.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace npu::verify {

namespace {

// One packet on the two models being compared: the outcome they agree on,
// or the report of how they differ.
struct Step {
  mem::FaultCode outcome = mem::FaultCode::None;
  bool diverged = false;
  std::string diagnostic;
};

class Models {
public:
  virtual ~Models() = default;
  virtual void write(uint64_t address, const void *src, uint64_t bytes) = 0;
  virtual void read(uint64_t address, void *dst, uint64_t bytes) = 0;
  // Runs one packet; after a fault both models are ready for the next.
  virtual Step step(const isa::Packet &packet) = 0;
  // Device cycles since the start (a reset does not lose them).
  virtual uint64_t cycles() = 0;
};

// A backend of the runtime: cosim compares the ISS with the RTL itself.
class OnRuntime final : public Models {
public:
  explicit OnRuntime(const std::string &backend) : runtime_(optionsFor(backend)) {}

  void write(uint64_t address, const void *src, uint64_t bytes) override {
    runtime_.writePhysical(address, src, bytes);
  }
  void read(uint64_t address, void *dst, uint64_t bytes) override {
    runtime_.readPhysical(address, dst, bytes);
  }
  Step step(const isa::Packet &packet) override {
    // A faulted device answers nothing until it is reset, and the reset
    // clears the cycle counter: keep what it counted before this packet.
    const uint64_t cyclesBefore = runtime_.deviceCycles();
    try {
      runtime_.submit(std::span<const isa::Packet>(&packet, 1));
      runtime_.synchronize();
      return {};
    } catch (const rt::Error &e) {
      if (e.code() != rt::ErrorCode::DeviceFault)
        throw;
      const std::optional<rt::FaultInfo> fault = runtime_.lastFault();
      const mem::FaultCode outcome = fault ? fault->fault.code : mem::FaultCode::None;
      if (outcome == mem::FaultCode::Divergence) {
        resetCycles_ += cyclesBefore;
        diverged_ = true;
        return {outcome, true, fault->fault.detail};
      }
      resetCycles_ += cyclesBefore;
      runtime_.reset();
      return {outcome, false, {}};
    }
  }
  // After a divergence (the device holds it until a reset), the cycles
  // before the divergent packet.
  uint64_t cycles() override {
    return diverged_ ? resetCycles_ : resetCycles_ + runtime_.deviceCycles();
  }

private:
  static rt::RuntimeOptions optionsFor(const std::string &backend) {
    rt::RuntimeOptions options;
    options.backend = backend;
    return options;
  }
  rt::Runtime runtime_;
  uint64_t resetCycles_ = 0;
  bool diverged_ = false;
};

std::string wordText(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  char text[48];
  std::snprintf(text, sizeof text, "0x%08x (%.9g)", bits, static_cast<double>(f));
  return text;
}

// The ISS against the reference model (simulator/reference: one element at
// a time through the golden soft-float primitives, no code shared with the
// ISS's fast paths). Both start from the same checks (sim::checkPacket, the
// one statement of the ISA's fault rules); then the ISS executes on its
// memory, the reference on its own, and every range the packet may write
// is compared.
class IssAgainstReference final : public Models {
public:
  IssAgainstReference() : iss_(issMemory_, sim::Mode::Func) {}

  void write(uint64_t address, const void *src, uint64_t bytes) override {
    issMemory_.write(address, src, bytes);
    referenceMemory_.write(address, src, bytes);
  }
  void read(uint64_t address, void *dst, uint64_t bytes) override {
    issMemory_.read(address, dst, bytes);
  }
  Step step(const isa::Packet &packet) override {
    const uint64_t index = packets_++;
    mem::FaultCode issOutcome = mem::FaultCode::None;
    try {
      iss_.step(packet, index);
    } catch (const mem::DeviceFault &fault) {
      issOutcome = fault.fault().code;
    }
    sim::OperandRanges ranges;
    mem::FaultCode referenceOutcome = sim::checkPacket(packet, issMemory_.map(), ranges).code;
    if (referenceOutcome == mem::FaultCode::None) {
      try {
        sim::reference::execute(referenceMemory_, packet);
      } catch (const std::out_of_range &) {
        referenceOutcome = mem::FaultCode::IndexOutOfRange;
      }
    }
    if (issOutcome != referenceOutcome)
      return {issOutcome, true,
              "ISS/reference divergence at packet " + std::to_string(index) +
                  ": outcome differs: ISS " + outcomeText(issOutcome) + ", reference " +
                  outcomeText(referenceOutcome)};
    // Faults before any access leave both memories as they were; an index
    // fault leaves the rows before the bad index written in both.
    if (issOutcome == mem::FaultCode::None || issOutcome == mem::FaultCode::IndexOutOfRange)
      for (const sim::OperandRange &range : ranges)
        if (range.accessed && mem::includes(range.access, mem::Access::Write))
          if (std::string difference = firstDifference(range.address, range.bytes);
              !difference.empty())
            return {issOutcome, true,
                    "ISS/reference divergence at packet " + std::to_string(index) +
                        ": memory differs at " + difference};
    return {issOutcome, false, {}};
  }
  uint64_t cycles() override { return 0; }

private:
  static std::string outcomeText(mem::FaultCode code) {
    return code == mem::FaultCode::None ? "completed"
                                        : std::string("fault ") + mem::faultCodeName(code);
  }

  std::string firstDifference(uint64_t address, uint64_t bytes) {
    std::vector<uint8_t> a, b;
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t chunk = std::min<uint64_t>(bytes - done, 1 << 16);
      a.resize(chunk);
      b.resize(chunk);
      issMemory_.read(address + done, a.data(), chunk);
      referenceMemory_.read(address + done, b.data(), chunk);
      if (a != b) {
        const uint64_t at = address + done + (std::mismatch(a.begin(), a.end(), b.begin()).first -
                                              a.begin());
        const uint64_t word = at & ~uint64_t(3);
        uint32_t x = 0, y = 0;
        issMemory_.read(word, &x, 4);
        referenceMemory_.read(word, &y, 4);
        return mem::fmt::hex(word) + ": ISS " + wordText(x) + ", reference " + wordText(y);
      }
      done += chunk;
    }
    return {};
  }

  mem::PhysicalMemory issMemory_, referenceMemory_;
  sim::Iss iss_;
  uint64_t packets_ = 0;
};

std::unique_ptr<Models> modelsFor(const std::string &backend) {
  if (backend == "reference")
    return std::make_unique<IssAgainstReference>();
  return std::make_unique<OnRuntime>(backend);
}

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
  const std::unique_ptr<Models> models = modelsFor(options.backend);
  // The map every backend of the runner runs on: the runtime's default.
  static const mem::AddressMap kMap = mem::AddressMap::defaults();
  for (const bin::DataSegment &seg : object.data)
    models->write(seg.address, seg.bytes.data(), seg.bytes.size());

  RunResult result;
  std::vector<std::pair<uint64_t, uint64_t>> previousWrites, writes;
  for (size_t i = 0; i < object.text.size(); ++i) {
    const isa::Packet &packet = object.text[i];
    const uint32_t opcodeWord = isa::detail::load32(packet.data(), 0);
    // The inputs as they are before the packet runs.
    const uint32_t inputValues =
        coverage ? inputValueClasses(packet, kMap,
                                     [&](uint64_t address, void *dst, uint64_t bytes) {
                                       models->read(address, dst, bytes);
                                     })
                 : 0;
    const Step step = models->step(packet);
    if (step.diverged) {
      result.diverged = true;
      result.divergentPacket = i;
      result.diagnostic = step.diagnostic;
      result.signature = divergenceSignature(opcodeText(opcodeWord), result.diagnostic);
      if (intents && i < intents->size())
        result.divergentIntent = (*intents)[i].injected;
      result.deviceCycles = models->cycles();
      return result; // the models disagree from here on: nothing more to compare
    }
    const mem::FaultCode outcome = step.outcome;
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
  result.deviceCycles = models->cycles();
  return result;
}

} // namespace npu::verify
