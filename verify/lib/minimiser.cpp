#include "npu/verify/minimiser.h"

#include "npu/verify/generator.h"
#include "table_rules.h"

#include <algorithm>
#include <cstring>

namespace npu::verify {

namespace {

class Reducer {
public:
  Reducer(const RunResult &failing, const StreamRunner &run, const MinimiseOptions &options)
      : signature_(failing.signature), run_(run), options_(options) {}

  // Runs a candidate; true (and it becomes the best) if it still diverges
  // with the same signature.
  bool tryCandidate(const bin::Object &candidate, bin::Object &best, RunResult &bestRun) {
    if (runs_ >= options_.maxRuns)
      return false;
    ++runs_;
    RunResult run;
    try {
      run = run_(candidate);
    } catch (const std::exception &) {
      return false; // e.g. a data segment the shrunk stream no longer needs in a bad place
    }
    if (!run.diverged || run.signature != signature_)
      return false;
    best = candidate;
    // Packets after the divergent one never run.
    best.text.resize(run.divergentPacket + 1);
    bestRun = std::move(run);
    return true;
  }

  bool exhausted() const { return runs_ >= options_.maxRuns; }
  uint32_t runs() const { return runs_; }

private:
  std::string signature_;
  const StreamRunner &run_;
  const MinimiseOptions &options_;
  uint32_t runs_ = 0;
};

// ddmin over the packets before the divergent (last) one.
void reducePackets(Reducer &reducer, bin::Object &best, RunResult &bestRun) {
  size_t chunks = 2;
  while (best.text.size() > 1 && !reducer.exhausted()) {
    const size_t prefix = best.text.size() - 1;
    if (prefix == 0)
      break;
    chunks = std::min(chunks, prefix);
    bool reduced = false;
    for (size_t c = 0; c < chunks && !reduced; ++c) {
      const size_t begin = prefix * c / chunks, end = prefix * (c + 1) / chunks;
      bin::Object candidate = best;
      candidate.text.erase(candidate.text.begin() + static_cast<std::ptrdiff_t>(begin),
                           candidate.text.begin() + static_cast<std::ptrdiff_t>(end));
      reduced = reducer.tryCandidate(candidate, best, bestRun);
    }
    if (reduced) {
      chunks = std::max<size_t>(chunks - 1, 2);
    } else if (chunks < prefix) {
      chunks = std::min(prefix, chunks * 2);
    } else {
      break;
    }
  }
}

// Simpler operands, packet by packet from the divergent one backwards:
// each size halved or set to its minimum, flags cleared, enums and scalars
// at their defaults.
void reduceOperands(Reducer &reducer, bin::Object &best, RunResult &bestRun) {
  bool progress = true;
  while (progress && !reducer.exhausted()) {
    progress = false;
    for (size_t p = best.text.size(); p-- > 0 && !reducer.exhausted();) {
      isa::Instruction inst;
      if (!isa::decode(best.text[p], inst))
        continue;
      const isa::InstrInfo &info = isa::info(inst.opcode);
      for (uint32_t i = 0; i < info.numOperands && !reducer.exhausted(); ++i) {
        const isa::OperandInfo &op = info.operands[i];
        std::vector<uint64_t> simpler;
        if (rules::isSizeLike(op)) {
          const int64_t v = isa::operandValue(op, inst.operands[i]);
          const int64_t floor = op.hasRange ? std::max<int64_t>(op.min, v < 0 ? v : 0) : 0;
          if (v > floor && op.hasRange && op.min <= 1)
            simpler.push_back(
                static_cast<uint64_t>(std::max<int64_t>(op.min, std::min<int64_t>(1, v))) &
                rules::slotMax(op));
          if (v / 2 != v && (!op.hasRange || v / 2 >= op.min))
            simpler.push_back(static_cast<uint64_t>(v / 2) & rules::slotMax(op));
          const int64_t closer = v > 0 ? v - 1 : v + 1;
          if (v != 0 && (!op.hasRange || closer >= op.min))
            simpler.push_back(static_cast<uint64_t>(closer) & rules::slotMax(op));
        } else if (rules::isMode(op) || op.kind == isa::OperandKind::F32) {
          if (inst.operands[i] != op.defaultBits)
            simpler.push_back(op.defaultBits);
        }
        for (uint64_t raw : simpler) {
          isa::Instruction changed = inst;
          changed.operands[i] = raw;
          legalise(changed);
          if (!isa::validate(changed) || changed == inst)
            continue;
          bin::Object candidate = best;
          isa::encode(changed, candidate.text[p]);
          if (reducer.tryCandidate(candidate, best, bestRun)) {
            inst = changed;
            progress = true;
            break;
          }
        }
      }
    }
  }
}

// Data segments dropped whole (memory stays zero), then zeroed in halves.
void reduceData(Reducer &reducer, bin::Object &best, RunResult &bestRun) {
  for (size_t s = best.data.size(); s-- > 0 && !reducer.exhausted();) {
    bin::Object candidate = best;
    candidate.data.erase(candidate.data.begin() + static_cast<std::ptrdiff_t>(s));
    reducer.tryCandidate(candidate, best, bestRun);
  }
  for (size_t s = 0; s < best.data.size() && !reducer.exhausted(); ++s) {
    // Down to a 64th of the segment: finer pieces cost more runs than they save bytes.
    const size_t finest = std::max<size_t>(4, best.data[s].bytes.size() / 64);
    for (size_t piece = best.data[s].bytes.size() / 2; piece >= finest && !reducer.exhausted();
         piece /= 2) {
      for (size_t at = 0; at < best.data[s].bytes.size() && !reducer.exhausted(); at += piece) {
        const size_t n = std::min(piece, best.data[s].bytes.size() - at);
        const auto first = best.data[s].bytes.begin() + static_cast<std::ptrdiff_t>(at);
        if (std::all_of(first, first + static_cast<std::ptrdiff_t>(n),
                        [](uint8_t b) { return b == 0; }))
          continue;
        bin::Object candidate = best;
        std::fill_n(candidate.data[s].bytes.begin() + static_cast<std::ptrdiff_t>(at), n,
                    uint8_t{0});
        reducer.tryCandidate(candidate, best, bestRun);
      }
    }
  }
}

} // namespace

size_t MinimiseResult::dataBytes() const {
  size_t n = 0;
  for (const bin::DataSegment &seg : object.data)
    n += seg.bytes.size();
  return n;
}

MinimiseResult minimise(const bin::Object &failing, const RunResult &failingRun,
                        const StreamRunner &run, const MinimiseOptions &options) {
  MinimiseResult result;
  result.packetsBefore = failing.text.size();
  for (const bin::DataSegment &seg : failing.data)
    result.dataBytesBefore += seg.bytes.size();
  result.object = failing;
  result.object.text.resize(std::min<size_t>(failing.text.size(), failingRun.divergentPacket + 1));
  result.run = failingRun;
  Reducer reducer(failingRun, run, options);
  reducePackets(reducer, result.object, result.run);
  reduceOperands(reducer, result.object, result.run);
  reducePackets(reducer, result.object, result.run);
  reduceData(reducer, result.object, result.run);
  result.runs = reducer.runs();
  result.object.metadata.emplace_back("minimised-from",
                                      std::to_string(result.packetsBefore) + " packets");
  return result;
}

} // namespace npu::verify
