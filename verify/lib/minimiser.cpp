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

// Tries `changed` in place of packet p; true if it still diverges.
bool tryOperands(Reducer &reducer, bin::Object &best, RunResult &bestRun, size_t p,
                 const isa::Instruction &current, isa::Instruction changed) {
  legalise(changed);
  if (!isa::validate(changed) || changed == current)
    return false;
  bin::Object candidate = best;
  isa::encode(changed, candidate.text[p]);
  return reducer.tryCandidate(candidate, best, bestRun);
}

// The smallest magnitude of size-like operand i that still diverges, by
// bisection between the operand's floor (its range minimum, or 0) and its
// value: a handful of runs even for a size in the thousands.
bool shrinkOperand(Reducer &reducer, bin::Object &best, RunResult &bestRun, size_t p,
                   isa::Instruction &inst, uint32_t i) {
  const isa::OperandInfo &op = isa::info(inst.opcode).operands[i];
  const int64_t value = isa::operandValue(op, inst.operands[i]);
  const int64_t sign = value < 0 ? -1 : 1;
  int64_t low = op.hasRange ? std::max<int64_t>(0, sign > 0 ? op.min : -op.max) : 0;
  int64_t high = value * sign; // diverges
  bool shrunk = false;
  while (low < high && !reducer.exhausted()) {
    const int64_t mid = low + (high - low) / 2;
    isa::Instruction changed = inst;
    changed.operands[i] = static_cast<uint64_t>(mid * sign) & rules::slotMax(op);
    if (tryOperands(reducer, best, bestRun, p, inst, changed)) {
      shrunk = true;
      if (p >= best.text.size())
        break; // it now diverges at an earlier packet
      isa::decode(best.text[p], inst);
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return shrunk;
}

// Simpler operands, packet by packet from the divergent one backwards:
// sizes, pitches and strides as small as they can be, flags cleared, enums
// and f32 scalars at their defaults.
void reduceOperands(Reducer &reducer, bin::Object &best, RunResult &bestRun) {
  bool progress = true;
  while (progress && !reducer.exhausted()) {
    progress = false;
    for (size_t p = best.text.size(); p-- > 0 && !reducer.exhausted();) {
      isa::Instruction inst;
      if (!isa::decode(best.text[p], inst))
        continue;
      const isa::InstrInfo &info = isa::info(inst.opcode);
      for (uint32_t i = 0; i < info.numOperands && !reducer.exhausted() && p < best.text.size();
           ++i) {
        const isa::OperandInfo &op = info.operands[i];
        if (rules::isSizeLike(op)) {
          progress |= shrinkOperand(reducer, best, bestRun, p, inst, i);
        } else if ((rules::isMode(op) || op.kind == isa::OperandKind::F32) &&
                   inst.operands[i] != op.defaultBits) {
          isa::Instruction changed = inst;
          changed.operands[i] = op.defaultBits;
          if (tryOperands(reducer, best, bestRun, p, inst, changed)) {
            progress = true;
            if (p < best.text.size())
              isa::decode(best.text[p], inst);
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

// Zero bytes at either end of a segment mean nothing (memory starts at
// zero): trimmed, and checked once.
void trimData(Reducer &reducer, bin::Object &best, RunResult &bestRun) {
  bin::Object candidate = best;
  for (bin::DataSegment &seg : candidate.data) {
    const auto first =
        std::find_if(seg.bytes.begin(), seg.bytes.end(), [](uint8_t b) { return b != 0; });
    const auto last =
        std::find_if(seg.bytes.rbegin(), seg.bytes.rend(), [](uint8_t b) { return b != 0; });
    const size_t head = static_cast<size_t>(first - seg.bytes.begin());
    const size_t tail = static_cast<size_t>(last - seg.bytes.rbegin());
    if (head == seg.bytes.size()) {
      seg.bytes.clear();
      continue;
    }
    seg.address += head;
    seg.bytes = std::vector<uint8_t>(seg.bytes.begin() + static_cast<std::ptrdiff_t>(head),
                                     seg.bytes.end() - static_cast<std::ptrdiff_t>(tail));
  }
  std::erase_if(candidate.data, [](const bin::DataSegment &seg) { return seg.bytes.empty(); });
  if (candidate.data != best.data)
    reducer.tryCandidate(candidate, best, bestRun);
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
  trimData(reducer, result.object, result.run);
  result.runs = reducer.runs();
  result.object.metadata.emplace_back("minimised-from",
                                      std::to_string(result.packetsBefore) + " packets");
  return result;
}

} // namespace npu::verify
