#include "timing.h"

#include "arith_util.h"
#include "burst_stall.h"
#include "dma_timing.h"
#include "npu/isa/recipes.h"
#include "recipe_select.h"
#include "typed_streams.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

namespace npu::sim {

Traffic Traffic::operator-(const Traffic &o) const {
  return {bytesRead - o.bytesRead, bytesWritten - o.bytesWritten, upperBound};
}

namespace {

constexpr uint64_t kBeat = isa::hw::kAxiDataBytes;

// The memory port (rtl/npu_mem_port.sv) as its units see it: the cycles from
// a unit raising a request to the cycle its done arrives. A read pays one
// request cycle, the memory's latency, its beats at the memory's width, and
// the done cycle; its bursts are pipelined, so one latency per request. A
// write sends its beats, then waits for the last response.
class Port {
public:
  explicit Port(const MemoryTiming &memory)
      : memory_(memory),
        // Each cycle the memory withholds a signal with probability p, so a
        // handshake or a beat waits p / (1 - p) cycles on average.
        wait_(double(memory.stallPercent) / double(100 - memory.stallPercent)) {}

  static uint64_t beats(uint64_t address, uint64_t bytes) {
    return bytes ? ceilDiv(satAdd(address % kBeat, bytes), kBeat) : 0;
  }

  // AR, the latency, the beats.
  uint64_t read(uint64_t address, uint64_t bytes) {
    bytesRead_ = satAdd(bytesRead_, bytes);
    const uint64_t n = beats(address, bytes);
    return transfer(kReadOverhead, 1, n, n);
  }
  // AW, the beats, the latency to the response, B: the response's latency
  // runs from the last beat's handshake, not from its end.
  uint64_t write(uint64_t address, uint64_t bytes) {
    bytesWritten_ = satAdd(bytesWritten_, bytes);
    const uint64_t n = beats(address, bytes);
    return transfer(kWriteOverhead + 1, 2, n, n ? n - 1 : 0);
  }

  // A request of many runs (`beats` in all, in `bursts` bursts), pipelined
  // like one; its bytes are counted apart (add). The memory takes a write
  // burst's address only once the previous burst's last beat is in (one
  // write burst at a time): at one cycle per beat that address cycle is a
  // bubble per further burst; slower beats hide it.
  uint64_t runsCycles(bool write, uint64_t beats, uint64_t bursts) const {
    if (!write)
      return transfer(kReadOverhead, 1, beats, beats);
    const uint64_t bubbles = memory_.beatCycles() == 1 && bursts ? bursts - 1 : 0;
    return satAdd(transfer(kWriteOverhead + 1, 1 + bursts, beats, beats ? beats - 1 : 0), bubbles);
  }
  uint64_t writeRuns(uint64_t bytes, uint64_t beats, uint64_t bursts) {
    bytesWritten_ = satAdd(bytesWritten_, bytes);
    return runsCycles(true, beats, bursts);
  }

  // The cycles a request loses to the port's HW_AXI_OUTSTANDING bursts in
  // flight, counted as its bursts are added.
  OutstandingStall outstanding(bool write) const {
    return OutstandingStall(memory_.latency, memory_.beatCycles(), write);
  }

  const MemoryTiming &timing() const { return memory_; }

  // The bytes of the requests so far, as the RTL's trace counts them.
  Traffic traffic() const { return {bytesRead_, bytesWritten_}; }
  void add(const Traffic &t) {
    bytesRead_ = satAdd(bytesRead_, t.bytesRead);
    bytesWritten_ = satAdd(bytesWritten_, t.bytesWritten);
  }

private:
  // The request cycle and the done cycle around a read; a write also has
  // its address cycle before the first beat.
  static constexpr uint64_t kReadOverhead = 2;
  static constexpr uint64_t kWriteOverhead = 3;

  // `beats` beats, of which `timed` take their full beat time.
  uint64_t transfer(uint64_t overhead, unsigned handshakes, uint64_t beats, uint64_t timed) const {
    const uint64_t cycles = satAdd(overhead + memory_.latency, satMul(timed, memory_.beatCycles()));
    if (!memory_.stallPercent)
      return cycles;
    const double waits = wait_ * (double(handshakes) + double(beats)) + 0.5;
    return waits >= 1.8e19 ? UINT64_MAX : satAdd(cycles, uint64_t(waits));
  }

  const MemoryTiming &memory_;
  double wait_;
  uint64_t bytesRead_ = 0, bytesWritten_ = 0;
};

// The command processor (rtl/npu_cmd.sv) around every packet: idle, fetch
// (one 64-byte read), decode, dispatch; then for an engine's packet the range
// checks of each memory operand (one cycle per factor of its extent and one
// for its region, or one for an absent operand) and one cycle per overlap
// rule; the start and the completion.
uint64_t commandCycles(const isa::InstrInfo &info, const isa::Instruction &decoded, Port &port,
                       bool prefetched) {
  uint64_t cycles = 1 + (prefetched ? 0 : port.read(0, isa::kPacketBytes)) + 2;
  if (info.engine == isa::Engine::Control)
    return cycles;
  for (const isa::MemOperandInfo &m : info.memoryList()) {
    const bool present = m.when < 0 || decoded.operands[m.when] != 0;
    if (!present)
      cycles += 1;
    else if (m.kind == isa::ExtentKind::Matrix)
      cycles += 3 + 1;
    else
      cycles += 5 + 1;
  }
  return cycles + std::max<uint64_t>(1, info.numDisjoints) + 1;
}

// The vector engine (rtl/npu_vector.sv) running the packet's recipe
// (npu/isa/recipes.h, generated from the same records as its ROM): per row,
// per pass, per chunk of CH elements, every group of L elements through the
// pass's steps (one cycle per ROM word of a Run, one per Mask or Reduce, L
// per Scan; the last one ends the group), then each output stream written;
// at a pass's end the reduction tree and the scalar steps.
//
// Two actors share the memory port, as in the RTL: the reader requests the
// pass's chunks ahead of the steps into kSlots buffer slots (a chunk's slot
// once the steps are done with the chunk kSlots before), each request as soon
// as the port's read engine takes it (once the request before has issued
// its bursts, at most three open); the steps wait for their chunk's reads,
// then for the last write's beats to leave the output buffers, and post
// their writes (the port takes one once the write before has sent its
// beats, at most three open and four tracked). A read of bytes a tracked
// write covers waits for its response. Times are cycles from the packet's
// start, with each handshake and beat charged its expected wait states.
constexpr uint64_t kLanes = isa::hw::kVectorLanes;
constexpr uint64_t kChunk = kLanes * 16; // npu_vector.sv: CH = L * G
constexpr unsigned kSlots = 3;           // npu_vector.sv: NS, input buffer slots

uint64_t stepCycles(uint16_t first, uint16_t count) {
  uint64_t cycles = 0;
  for (unsigned s = 0; s < count; ++s) {
    const isa::recipe::Step &step = isa::recipe::kSteps[first + s];
    cycles += step.kind == isa::recipe::StepKind::Run    ? step.words
              : step.kind == isa::recipe::StepKind::Scan ? kLanes // one lane a cycle
                                                         : 1;
  }
  return cycles;
}

class VectorEngine {
public:
  VectorEngine(const isa::recipe::Recipe &r, const isa::Instruction &decoded, Port &port,
               const MemoryTiming &memory, uint64_t nextFetch, std::span<const uint32_t> indexRows,
               bool extrapolate)
      : r_(r), decoded_(decoded), port_(port), indexRows_(indexRows), extrapolate_(extrapolate),
        latency_(memory.latency),
        wait_(memory.stallPercent ? double(memory.stallPercent) / double(100 - memory.stallPercent)
                                  : 0.0),
        beat_(memory.beatCycles() + wait_), nextFetch_(double(nextFetch)) {
    // A stream moves elements of its type (docs/types.md §2): its requests
    // and its rows are the element count times the type's size. An untyped
    // stream's words are f32's (fixed type 0).
    for (unsigned s = 0; s < elementBytes_.size(); ++s) {
      const int8_t operand = r.streamTypeOperand[s];
      elementBytes_[s] = storageBytes(
          static_cast<isa::DType>(operand >= 0 ? decoded.operands[operand] : r.streamFixedType[s]));
    }
  }

  // The packet's cycles; whether the next packet was fetched meanwhile.
  uint64_t run(bool &prefetched);

private:
  struct Write {
    uint64_t address, bytes;
    double lastBeat, done;
    unsigned slot;   // of the output buffers its beats leave
    unsigned stream; // 4 + the output stream, or kNoStream
    bool operator==(const Write &) const = default;
  };
  static constexpr unsigned kNoStream = 7;
  // What decides a pass's further chunks from chunk `k` on: the times
  // relative to the steps' cycle, the addresses relative to the chunk's,
  // the slots relative to the ones chunk k uses.
  struct ChunkState {
    double readerFree, readFollow, readData;
    std::array<double, 3> readDone, slotDone;
    std::vector<double> readAccepts;
    std::vector<Write> writes;
    bool settled = true; // no write before a pass that writes none may still delay it
    bool operator==(const ChunkState &) const = default;
  };
  ChunkState chunkState(uint64_t k, double c, double readerFree,
                        const std::array<double, kSlots> &slotDone, bool reads, bool writes) const;
  // Whether chunks of the pass may be advanced by whole periods.
  bool periodic(uint64_t row, unsigned reads, unsigned writes) const;

  // A read the engine raises at `t`; the cycle its done pulses.
  double read(double t, uint64_t address, uint64_t bytes, bool follows);
  // A write the steps raise at `t`; the cycle the port takes it.
  double write(double t, uint64_t address, uint64_t bytes, unsigned stream = kNoStream);
  double afterPrefetch(double t) const { return t >= grant_ && t < portFree_ ? portFree_ : t; }
  // The pass's chunks from `c` (its first S_PASS); the cycle after it.
  double pass(const isa::recipe::Pass &pass, uint64_t row, double c);
  double row(uint64_t row, double c);
  // Whether the index that the row loaded is the one that skips a row
  // (known only from the executed packet's indices).
  bool skipped(uint64_t row) const {
    if (!indexed() || r_.indexSkip < 0)
      return false;
    const int32_t skip = int32_t(uint32_t(decoded_.operands[r_.indexSkip]));
    return skip >= 0 && indexRows_[row] == uint32_t(skip);
  }
  bool indexed() const {
    return r_.rowLoad == isa::recipe::RowLoad::Index &&
           indexRows_.size() == (r_.rows < 0 ? 1 : decoded_.operands[r_.rows]);
  }
  // The bytes of a pre-load, row load or row store: one element of its type,
  // or its words.
  uint64_t accessBytes(const isa::recipe::AccessType &type, unsigned words) const {
    if (!type.typed())
      return 4 * words;
    return storageBytes(static_cast<isa::DType>(
        type.typeOperand >= 0 ? decoded_.operands[type.typeOperand] : type.fixedType));
  }
  // A stream that starts at an index's row starts where the row's index
  // says; without the executed packet's indices the model takes them to be
  // distinct, as row numbers.
  uint64_t streamAddress(unsigned s, uint64_t row, uint64_t j0) const {
    const uint64_t rowBytes = satMul(decoded_.operands[r_.cols], elementBytes_[s]);
    if (r_.rebase >> s & 1)
      return decoded_.operands[r_.indexBase] + (indexed() ? indexRows_[row] : row) * rowBytes +
             elementBytes_[s] * j0;
    return decoded_.operands[r_.streamOperand[s]] +
           (r_.streamPerRow >> s & 1 ? row * rowBytes : 0) + elementBytes_[s] * j0;
  }

  const isa::recipe::Recipe &r_;
  const isa::Instruction &decoded_;
  Port &port_;
  std::span<const uint32_t> indexRows_; // per row, its index's row (Work::Runs::rows)
  const bool extrapolate_;
  const double latency_, wait_, beat_;
  double nextFetch_;
  // The read engine: a request may follow the newest from `readFollow`
  // (its bursts issued), while it is open; `readData`, the cycle after the
  // last beat so far; the done cycles of the newest three.
  double readFollow_ = 0, readData_ = 0;
  std::array<double, 3> readDone_{-1e300, -1e300, -1e300};
  std::vector<double> readAccepts_; // of the chunks the steps have not passed
  std::vector<Write> writes_;       // the newest four
  double firstDone_ = 1e300;        // the engine's first completed request
  double grant_ = 1e300, portFree_ = 1e300;
  unsigned outputSlot_ = 0; // the steps' output buffers: the other after a chunk's writes
  std::array<uint64_t, 7> elementBytes_{}; // per stream: IB0..IB3, OB0..OB2
};

double VectorEngine::read(double t, uint64_t address, uint64_t bytes, bool follows) {
  port_.add({bytes, 0});
  for (const Write &w : writes_)
    if (address < satAdd(w.address, w.bytes) && w.address < satAdd(address, bytes))
      t = std::max(t, w.done + 1);
  t = afterPrefetch(t);
  const double newestDone = readDone_[0];
  const double followAt = std::max({t, readFollow_, readDone_[2]});
  if (follows && followAt <= newestDone - 1)
    t = followAt;
  else
    t = std::max(t, newestDone + 1);
  if (follows)
    readAccepts_.push_back(t);
  double address_cycle = t;
  forEachBurst(address, Port::beats(address, bytes), [&](uint64_t n) {
    address_cycle += 1 + wait_;
    readData_ = std::max(address_cycle + latency_, readData_) + double(n) * beat_;
  });
  readFollow_ = address_cycle + 1;
  readDone_ = {readData_, readDone_[0], readDone_[1]};
  firstDone_ = std::min(firstDone_, readData_);
  return readData_;
}

double VectorEngine::write(double t, uint64_t address, uint64_t bytes, unsigned stream) {
  port_.add({0, bytes});
  for (;;) {
    double at = afterPrefetch(t);
    if (!writes_.empty()) {
      const Write &newest = writes_.back();
      double followAt = std::max(at, newest.lastBeat + 1);
      if (writes_.size() >= 3)
        followAt = std::max(followAt, writes_[writes_.size() - 3].done);
      if (writes_.size() >= 4)
        followAt = std::max(followAt, writes_[writes_.size() - 4].done + 1);
      at = followAt <= newest.done - 1 ? followAt : std::max(followAt, newest.done + 1);
    }
    // The reader's request goes first in its cycle.
    const bool clashes = std::any_of(readAccepts_.begin(), readAccepts_.end(),
                                     [&](double a) { return std::abs(a - at) < 0.5; });
    if (!clashes) {
      t = at;
      break;
    }
    t = at + 1;
  }
  // The memory takes a beat once the one before has passed its data path;
  // a burst's address after the last beat of the one before.
  const double address_cycle = t + 1 + wait_;
  double last = writes_.empty() ? -1e300 : writes_.back().lastBeat, response = 0;
  bool first = true;
  forEachBurst(address, Port::beats(address, bytes), [&](uint64_t n) {
    const double start = std::max(first ? address_cycle + 1 : last + 2 + wait_, last + beat_);
    last = start + double(n - 1) * beat_;
    response = last + latency_ + wait_;
    first = false;
  });
  if (writes_.size() == 4)
    writes_.erase(writes_.begin());
  writes_.push_back({address, bytes, last, response + 1, outputSlot_, stream});
  firstDone_ = std::min(firstDone_, response + 1);
  return t;
}

VectorEngine::ChunkState VectorEngine::chunkState(uint64_t k, double c, double readerFree,
                                                  const std::array<double, kSlots> &slotDone,
                                                  bool reads, bool writes) const {
  ChunkState state{};
  if (reads) {
    state.readerFree = readerFree - c;
    state.readFollow = readFollow_ - c;
    state.readData = readData_ - c;
    for (unsigned i = 0; i < kSlots; ++i) {
      state.readDone[i] = readDone_[i] - c;
      state.slotDone[i] = slotDone[(k + i) % kSlots] - c;
    }
  }
  for (double a : readAccepts_)
    state.readAccepts.push_back(a - c);
  for (Write w : writes_) {
    if (!writes) {
      // Writes before a pass that writes none only delay its reads, which
      // are all raised from `c` on: done by then they no longer count.
      state.settled &= w.done + 1 <= c;
      continue;
    }
    if (w.stream != kNoStream)
      w.address -= k * kChunk * elementBytes_[w.stream];
    w.lastBeat -= c;
    w.done -= c;
    w.slot ^= outputSlot_;
    state.writes.push_back(w);
  }
  return state;
}

bool VectorEngine::periodic(uint64_t row, unsigned reads, unsigned writes) const {
  // The times stay whole numbers of cycles (exact in a double) only
  // without wait states.
  if (!extrapolate_ || wait_ != 0)
    return false;
  const uint64_t cols = decoded_.operands[r_.cols];
  const unsigned streams = reads | writes << 4;
  for (unsigned s = 0; s < 7; ++s) {
    if (!(streams >> s & 1))
      continue;
    // Addresses that wrap would change which requests overlap.
    const uint64_t start = streamAddress(s, row, 0), bytes = satMul(cols, elementBytes_[s]);
    if (start > UINT64_MAX - bytes)
      return false;
    // A read and a write stream of different element sizes move apart from
    // chunk to chunk: unless their ranges are disjoint, whether a read waits
    // for a write is not periodic.
    for (unsigned w = 4; w < 7 && s < 4; ++w) {
      if (!(streams >> w & 1) || elementBytes_[w] == elementBytes_[s])
        continue;
      const uint64_t other = streamAddress(w, row, 0), otherBytes = satMul(cols, elementBytes_[w]);
      if (start < other + otherBytes && other < start + bytes)
        return false;
    }
  }
  return true;
}

double VectorEngine::pass(const isa::recipe::Pass &p, uint64_t row, double c) {
  const uint64_t cols = decoded_.operands[r_.cols];
  const uint64_t zero = row == 0 ? r_.zeroFirstRow : 0;
  // The slots of an i64 stream's high words are moved with its low words'.
  const unsigned reads = p.inputs & ~zero & ~r_.streamHigh & 0xf;
  const unsigned writes = p.outputs & ~(r_.streamHigh >> 4);
  // The last step ends its group (a pass without steps spends a cycle on the end).
  const double groupSteps = double(std::max<uint64_t>(1, stepCycles(p.firstStep, p.numSteps)));
  const uint64_t chunks = ceilDiv(cols, kChunk);
  // The reader: the done of each chunk's last read, the cycle after its last request.
  double readerFree = c + 1;
  const auto readChunk = [&](uint64_t k, double claim) {
    double t = claim;
    double done = 0;
    for (unsigned s = 0; s < 4; ++s) {
      if (!(reads >> s & 1))
        continue;
      const uint64_t j0 = k * kChunk;
      done =
          read(t, streamAddress(s, row, j0), elementBytes_[s] * std::min(kChunk, cols - j0), true);
      t = readAccepts_.back() + 1;
    }
    readerFree = t; // rd_stream is 4 the cycle after the last request
    return done;
  };
  // The done of each slot's last read: chunk k's slot is k mod kSlots.
  std::array<double, kSlots> slotDone{};
  for (uint64_t k = 0; reads && k < std::min<uint64_t>(chunks, kSlots); ++k)
    slotDone[k] = readChunk(k, k ? readerFree + 1 : c + 1);
  constexpr uint64_t kPage = 4096;
  // A long row's chunks repeat but for where their requests start within a
  // beat and a 4 KiB page, which repeats every `period` chunks: once the
  // engine's state (chunkState) after a period is the one before it, the
  // next periods repeat it, moved by its cycles and bytes. They are skipped
  // up to the chunks whose reads or writes are short or may let the
  // prefetch in, which are simulated.
  uint64_t period = 1;
  for (unsigned s = 0; s < 7; ++s)
    if ((reads | writes << 4) >> s & 1)
      period = std::lcm(period, kPage / std::gcd(kChunk * elementBytes_[s], kPage));
  const uint64_t steadyChunks = chunks > kSlots + 1 ? chunks - kSlots - 1 : 0;
  bool repeats = steadyChunks >= 3 * period && periodic(row, reads, writes);
  std::optional<ChunkState> periodBefore;
  double periodStart = 0;
  Traffic periodTraffic;
  for (uint64_t k = 0; k < chunks; ++k) {
    if (repeats && k % period == 0) {
      if (k + period > steadyChunks) {
        repeats = false;
      } else if (firstDone_ > c || (grant_ < 1e299 && portFree_ > c)) {
        // A time before `c` that the shift would not move still counts.
        periodBefore.reset();
      } else {
        ChunkState state = chunkState(k, c, readerFree, slotDone, reads, writes);
        if (periodBefore && state.settled && state == *periodBefore) {
          const uint64_t periods = (steadyChunks - k) / period;
          const double shift = double(periods) * (c - periodStart);
          if (c + shift < 0x1p52) {
            const Traffic one = port_.traffic() - periodTraffic;
            port_.add({satMul(periods, one.bytesRead), satMul(periods, one.bytesWritten)});
            c += shift;
            if (reads) {
              readerFree += shift;
              readFollow_ += shift;
              readData_ += shift;
              // Chunk k's slot is k mod kSlots.
              const std::array<double, kSlots> before = slotDone;
              for (unsigned i = 0; i < kSlots; ++i) {
                readDone_[i] += shift;
                slotDone[(k + periods * period + i) % kSlots] = before[(k + i) % kSlots] + shift;
              }
            }
            for (double &a : readAccepts_)
              a += shift;
            if (writes)
              for (Write &w : writes_) {
                if (w.stream != kNoStream)
                  w.address += periods * period * kChunk * elementBytes_[w.stream];
                w.lastBeat += shift;
                w.done += shift;
              }
            if (p.outputs && periods * period % 2)
              outputSlot_ ^= 1;
            k += periods * period;
          }
          repeats = false;
        } else {
          periodBefore = std::move(state);
          periodStart = c;
          periodTraffic = port_.traffic();
        }
      }
    }
    const uint64_t j0 = k * kChunk, length = std::min(kChunk, cols - j0);
    // S_PASS at c; S_IN until the slot's reads are done; the beats of a
    // write from the output slot the steps write.
    const double in = reads ? std::max(c + 1, slotDone[k % kSlots] + 1) : c;
    const double lastBeat =
        !writes_.empty() && writes_.back().slot == outputSlot_ ? writes_.back().lastBeat : 0;
    const double steps = std::max(in, lastBeat) + 1;
    const double stepsEnd = steps + double(ceilDiv(length, kLanes)) * groupSteps;
    if (k + kSlots >= chunks && nextFetch_ && grant_ > 1e299) {
      // The prefetch, once the port is idle while the steps compute and the
      // reader has read the whole pass (its last chunks).
      const double writeIdle = writes_.empty() ? 0 : writes_.back().done + 1;
      const double readerIdle = reads ? std::max(readerFree, readDone_[0] + 1) : 0;
      const double at = std::max({steps, firstDone_ + 1, readDone_[0] + 1, readerIdle, writeIdle});
      if (at <= stepsEnd - 1) {
        grant_ = at;
        portFree_ = at + nextFetch_;
      }
    }
    if (reads && k + kSlots < chunks)
      slotDone[k % kSlots] = readChunk(k + kSlots, std::max(readerFree, stepsEnd) + 1);
    c = stepsEnd;
    std::erase_if(readAccepts_, [&](double a) { return a < stepsEnd - 0.5; });
    for (unsigned s = 0; s < 3; ++s)
      if (writes >> s & 1)
        c = write(c, streamAddress(4 + s, row, j0), elementBytes_[4 + s] * length, 4 + s) + 1;
    if (p.outputs)
      outputSlot_ ^= 1;
  }
  readAccepts_.clear();
  return c + 1 + (p.reduces ? 3 : 0) + double(stepCycles(p.firstAfter, p.numAfter)) + 1;
}

double VectorEngine::row(uint64_t row, double c) {
  c += 1; // S_ROW
  if (r_.rowLoad != isa::recipe::RowLoad::None) {
    const uint64_t bytes = r_.rowLoad == isa::recipe::RowLoad::Scalar
                               ? accessBytes(r_.rowLoadType, r_.rowLoadWords)
                               : (decoded_.operands[r_.indexType] ? 8 : 4);
    c = read(c, decoded_.operands[r_.rowLoadOperand] + row * bytes, bytes, false) + 1 +
        (r_.rowLoad == isa::recipe::RowLoad::Index ? 1 : 0);
  }
  // A skipped row's S_PASS goes on to the row's end: no pass runs, so
  // neither do its requests nor the prefetch its steps would have let in.
  if (skipped(row))
    c += 1;
  else
    for (unsigned p = 0; p < r_.numPasses; ++p)
      c = pass(r_.passes[p], row, c);
  if (r_.rowStoreWords) {
    // S_ROW_STORE until its beat has left.
    const uint64_t bytes = accessBytes(r_.rowStoreType, r_.rowStoreWords);
    const double taken = write(c, decoded_.operands[r_.rowStoreOperand] + row * bytes, bytes);
    c = std::max(taken + 1, writes_.back().lastBeat) + 1;
  }
  return c + 1; // S_NEXT_ROW
}

uint64_t VectorEngine::run(bool &prefetched) {
  const uint64_t rows = r_.rows < 0 ? 1 : decoded_.operands[r_.rows];
  double c = 3; // idle, setup, start
  if (r_.preLoadWords)
    c = read(c, decoded_.operands[r_.preLoadOperand], accessBytes(r_.preLoadType, r_.preLoadWords),
             false) +
        1;
  c += double(stepCycles(r_.firstPre, r_.numPre)) + 1;
  // Rows repeat once the first ones have set the port's pace, except for
  // where their streams start within a beat and within a 4 KiB page (where
  // a burst ends, which a write pays an address cycle for), which repeats
  // every `period` rows: the rows are simulated up to a whole number of
  // periods before the end (at least two after the first), and the last
  // simulated period's cycles and bytes stand for the rest. The narrowest
  // elements' period is a multiple of the others' (the sizes are powers of
  // two).
  constexpr uint64_t kPage = 4096;
  const uint64_t rowBytes = satMul(decoded_.operands[r_.cols],
                                   *std::min_element(elementBytes_.begin(), elementBytes_.end()));
  const uint64_t period = kPage / std::gcd(rowBytes % kPage ? rowBytes % kPage : kPage, kPage);
  // Rows of the data's indices differ from row to row: each is simulated.
  const uint64_t simulated = rows <= 1 + 3 * period || indexed()
                                 ? rows
                                 : 1 + 2 * period + (rows - 1 - 2 * period) % period;
  double periodStart = c;
  Traffic periodTraffic = port_.traffic();
  for (uint64_t row = 0; row < simulated; ++row) {
    if (row + period == simulated) {
      periodStart = c;
      periodTraffic = port_.traffic();
    }
    c = this->row(row, c);
  }
  double extra = 0;
  if (rows > simulated) {
    const uint64_t periods = (rows - simulated) / period;
    const Traffic perPeriod = port_.traffic() - periodTraffic;
    extra = double(periods) * (c - periodStart);
    port_.add({satMul(periods, perPeriod.bytesRead), satMul(periods, perPeriod.bytesWritten)});
  }
  // S_DRAIN until the last write's response and the last read, then finish.
  double drain = c;
  if (!writes_.empty())
    drain = std::max(drain, writes_.back().done + 1);
  drain = std::max(drain, readDone_[0] + 1) + extra;
  prefetched = grant_ < 1e299;
  const double cycles = drain + 2;
  return cycles >= 1.8e19 ? UINT64_MAX : uint64_t(cycles + 0.5);
}

// The DMA engine (rtl/npu_dma.sv): a gather of source runs (Work::runs)
// whose reads go one request at a time while the write side streams the
// landed bytes out; the packet ends with the last write's response.
// Without runs (FILL) it is one write request, split into bursts like any;
// COPY's one range is requests alike but for their place in a beat, which
// a closed form counts; the gathers' runs are each where they are, and
// dma_timing.cpp steps them as the RTL does.
uint64_t dmaCycles(const Work &work, Port &port, const MemoryTiming &memory) {
  constexpr uint64_t kRequest = 64 * 1024, kElementRows = 2048;
  const Work::Runs &runs = work.runs;
  if (!runs.count) {
    const uint64_t beats = Port::beats(work.writeAddress, work.bytesWritten);
    uint64_t bursts = 0;
    forEachBurst(work.writeAddress, beats, [&](uint64_t) { ++bursts; });
    return satAdd(5, port.writeRuns(work.bytesWritten, beats, bursts));
  }
  // The write side requests the destination stream as it lands.
  port.add({0, work.bytesWritten});
  if (runs.copy) {
    // One range, read and written in requests of at most kRequest bytes,
    // the beats of each counted from its own address. At one cycle per beat
    // the write side trails the reads by the address cycle of each further
    // burst of a write request (the memory takes one write burst at a time).
    const uint64_t bytes = runs.elements << runs.elementLog2, beat = memory.beatCycles();
    uint64_t read = 0, bubbles = 0, last = 0, readBeats = 0, writeBeats = 0;
    for (uint64_t at = 0; at < bytes; at += last) {
      // A further request is issued a cycle after the one before has ended
      // on its slower side: its reads (their beats, the done cycle and a
      // beat) or its writes (their beats and 3 cycles), so a destination
      // of more beats than its source delays it.
      if (at) {
        const uint64_t readEnd = readBeats * beat + 1 + beat, writeEnd = writeBeats * beat + 3;
        read = satAdd(read, 1 + (writeEnd > readEnd ? writeEnd - readEnd : 0));
      }
      last = std::min(kRequest, bytes - at);
      readBeats = Port::beats(runs.address + at, last);
      writeBeats = Port::beats(work.writeAddress + at, last);
      read = satAdd(read, port.read(runs.address + at, last));
      uint64_t writeBursts = 0;
      forEachBurst(work.writeAddress + at, writeBeats, [&](uint64_t) { ++writeBursts; });
      bubbles += beat == 1 ? writeBursts - 1 : 0;
    }
    // Once the last source beat has landed, the write side sends the
    // destination beats its bytes fall in, one beat time each.
    const uint64_t landing = std::min(last, (runs.address + bytes - 1) % kBeat + 1);
    const uint64_t tail = Port::beats(work.writeAddress + bytes - landing, landing);
    return satAdd(satAdd(3, read), memory.latency + 3 + (tail - 1) * memory.beatCycles() + bubbles);
  }
  // A run's requests read the same bytes wherever it starts: the index,
  // then the range, the span of its packed elements or the elements.
  uint64_t runRead = runs.indexBytes + (runs.elements << runs.elementLog2);
  if (runs.kind == Work::RunKind::Packed) {
    const uint64_t element = uint64_t(1) << runs.elementLog2, pitch = uint64_t(runs.pitch);
    const uint64_t full = runs.elements / kElementRows, rest = runs.elements % kElementRows;
    runRead = satMul(full, (kElementRows - 1) * pitch + element) +
              (rest ? (rest - 1) * pitch + element : 0);
  }
  port.add({satMul(runs.count, runRead), 0});
  return gatherCycles(work, memory);
}

// The matrix engine (rtl/npu_matrix.sv): blocks of BT x BT output tiles
// (BR = T * BT rows and columns), the reduction in panels of KC. Its memory
// side issues, per block, the old C (with acc), then per panel the A and
// the B panel (one request each: a run per row or column), and after the
// block's last compute step the C store (one request of its rows); it loads
// the next panel pair while the compute side runs the current one, which
// takes depth x row tiles x column tiles cycles. The two sides are timed
// as events, block by block and panel by panel; the panels of a long
// reduction past the first kExactPanels repeat the last one's steady
// state, and the blocks past the first kExactBlocks the last one's.
// `nextFetch`: the next packet's prefetch, which the command processor
// issues the first time the memory side waits for the compute side; the
// memory side's next request waits for it. `memo`: see `timed` below.
uint64_t matrixCycles(const Work &work, Port &port, uint64_t nextFetch, bool memo) {
  constexpr uint64_t T = isa::hw::kMatrixTile, BR = T * isa::hw::kMatrixBlockTiles, KC = 16;
  constexpr uint64_t kRequest = 2; // batch address, run address
  constexpr uint64_t kExactBlocks = 4096, kExactPanels = 32;
  const Work::MatrixOperands &o = work.matrix;
  const uint64_t m = work.m, n = work.n, k = work.k;
  if (!m || !n || !k || !work.batch)
    return 4;
  const auto clip = [](uint64_t size, uint64_t at, uint64_t most) {
    return std::min(most, size - at);
  };
  // A request of `count` runs of `bytes` bytes, `pitch` bytes apart from
  // `start` (addresses wrap harmlessly). Its cycles depend on its runs'
  // places in a 4 KiB page alone (they decide its beats and bursts), so on
  // `start` and `pitch` modulo 4096.
  struct Request {
    uint64_t start = 0, pitch = 0, count = 0, bytes = 0;
    bool write = false;
    bool operator==(const Request &) const = default;
  };
  const auto requestCycles = [&](const Request &r) {
    // One pass over the bursts; the stall is zero unless there are more
    // bursts than may be in flight.
    uint64_t beats = 0, bursts = 0;
    OutstandingStall stall = port.outstanding(r.write);
    for (uint64_t i = 0; i < r.count; ++i) {
      const uint64_t address = r.start + i * r.pitch;
      forEachBurst(address, Port::beats(address, r.bytes), [&](uint64_t n) {
        beats += n;
        ++bursts;
        stall.add(n);
      });
    }
    return kRequest + stall.stall() + port.runsCycles(r.write, beats, bursts);
  };
  // The blocks and panels of a packet repeat a few distinct requests
  // thousands of times: each is timed burst by burst once, in a
  // direct-mapped table (`memo` false times every request: the reference
  // the table is tested against).
  // A request's cycles depend on it and on the memory's timing alone, so
  // the table is kept from packet to packet (a small packet's requests cost
  // more to time than its compute).
  struct Timed {
    Request request;
    unsigned latency = 0, bytesPerCycle = 0, stallPercent = 0;
    uint64_t cycles = 0;
    bool filled = false;
  };
  constexpr size_t kTimed = 256;
  thread_local std::array<Timed, kTimed> timed{};
  const MemoryTiming &memoryTiming = port.timing();
  // A request of `count` runs of `words` elements of 2^log2 bytes, `pitch`
  // elements apart from element `first` of a matrix at `base` (at most BR
  // runs).
  const auto runs = [&](bool write, uint64_t base, uint64_t first, uint64_t count, uint64_t words,
                        uint64_t pitch, unsigned log2) {
    const uint64_t bytes = words << log2, all = satMul(count, bytes);
    port.add(write ? Traffic{0, all} : Traffic{all, 0});
    const Request request{base + (first << log2), pitch << log2, count, bytes, write};
    if (!memo)
      return requestCycles(request);
    const Request key{request.start % 4096, request.pitch % 4096, count, bytes, write};
    const uint64_t hash = (key.start >> 5) ^ (key.pitch * 0x9e3779b97f4a7c15 >> 40) ^
                          (key.count << 3) ^ (key.bytes << 7) ^ uint64_t(write);
    Timed &slot = timed[hash % kTimed];
    if (!slot.filled || !(slot.request == key) || slot.latency != memoryTiming.latency ||
        slot.bytesPerCycle != memoryTiming.bytesPerCycle ||
        slot.stallPercent != memoryTiming.stallPercent)
      slot = {key,
              memoryTiming.latency,
              memoryTiming.bytesPerCycle,
              memoryTiming.stallPercent,
              requestCycles(key),
              true};
    return slot.cycles;
  };
  const uint64_t blocksM = ceilDiv(m, BR), blocksN = ceilDiv(n, BR), panels = ceilDiv(k, KC);
  const uint64_t blocks = satMul(satMul(blocksM, blocksN), work.batch);
  uint64_t memory = 1, compute = 0, bufferFree = 0;
  // The memory side's next request waits until `ready`; meanwhile the
  // prefetch may take the port. The request's decide and address cycles
  // (1 + kRequest) overlap the fetch: only its transfer waits for the port.
  const auto waitFor = [&](uint64_t ready) {
    if (ready > memory && nextFetch) {
      ready = std::max(ready, satAdd(memory, nextFetch) - (1 + kRequest));
      nextFetch = 0;
    }
    memory = std::max(memory, ready);
  };
  // Block `b`'s place in the grid and its batch, found once per block (the
  // divisions cost more than a panel's memoised requests). Offsets in
  // elements wrap harmlessly: only their place in a 4 KiB page counts.
  struct Block {
    uint64_t bi, bj, rows, cols, batch;
  };
  const auto blockAt = [&](uint64_t b) {
    const uint64_t bi = b / blocksN % blocksM, bj = b % blocksN;
    return Block{bi, bj, clip(m, bi * BR, BR), clip(n, bj * BR, BR), b / blocksN / blocksM};
  };
  // Loads panel `p` of block `b` once the load buffer is free; the time it is loaded.
  const auto loadPanel = [&](const Block &b, uint64_t p) {
    const uint64_t bi = b.bi, bj = b.bj, depth = clip(k, p * KC, KC);
    const uint64_t a = b.batch * o.strideA, bb = b.batch * o.strideB;
    waitFor(bufferFree);
    memory = satAdd(memory, 1);
    memory = satAdd(
        memory,
        o.transA ? runs(false, o.a, a + p * KC * o.lda + bi * BR, depth, b.rows, o.lda, o.abLog2)
                 : runs(false, o.a, a + bi * BR * o.lda + p * KC, b.rows, depth, o.lda, o.abLog2));
    memory = satAdd(
        memory,
        o.transB ? runs(false, o.b, bb + bj * BR * o.ldb + p * KC, b.cols, depth, o.ldb, o.abLog2)
                 : runs(false, o.b, bb + p * KC * o.ldb + bj * BR, depth, b.cols, o.ldb, o.abLog2));
    return memory;
  };
  std::optional<uint64_t> preloaded; // the block's first panels, loaded during the last block
  const auto runBlock = [&](uint64_t block) {
    const Block place = blockAt(block);
    const uint64_t bj = place.bj, bi = place.bi, rows = place.rows, cols = place.cols;
    const uint64_t c = place.batch * o.strideC;
    // The accumulators: a decide cycle, then the old C, or cleared in it.
    memory = satAdd(memory, 1 + (o.acc ? runs(false, o.c, c + bi * BR * o.ldc + bj * BR, rows, cols,
                                              o.ldc, o.cLog2)
                                       : 0));
    const uint64_t accReady = memory;
    uint64_t lastCompute = compute;
    const auto panel = [&](uint64_t p) {
      const uint64_t loaded = p == 0 && preloaded ? *preloaded : loadPanel(place, p);
      const uint64_t take = satAdd(std::max({loaded, compute, accReady}), 1);
      bufferFree = take;
      compute = satAdd(take, clip(k, p * KC, KC) * ceilDiv(rows, T) * ceilDiv(cols, T));
      lastCompute = compute;
    };
    if (panels <= kExactPanels) {
      for (uint64_t p = 0; p < panels; ++p)
        panel(p);
    } else {
      // The panels between the first ones and the last repeat the steady
      // state of the last simulated one.
      for (uint64_t p = 0; p + 1 < kExactPanels; ++p)
        panel(p);
      const uint64_t before = compute;
      const Traffic traffic = port.traffic();
      panel(kExactPanels - 1);
      const uint64_t repeats = panels - kExactPanels - 1, step = compute - before;
      const Traffic one = port.traffic() - traffic;
      port.add({satMul(one.bytesRead, repeats), satMul(one.bytesWritten, repeats)});
      const uint64_t shift = satMul(step, repeats);
      memory = satAdd(memory, shift);
      compute = satAdd(compute, shift);
      bufferFree = satAdd(bufferFree, shift);
      panel(panels - 1);
    }
    // While the last panels compute, the next block's first ones load; the
    // store waits for the last step (and for that load).
    preloaded.reset();
    if (block + 1 < blocks)
      preloaded = loadPanel(blockAt(block + 1), 0);
    waitFor(lastCompute);
    memory = satAdd(memory, 1);
    memory =
        satAdd(memory, runs(true, o.c, c + bi * BR * o.ldc + bj * BR, rows, cols, o.ldc, o.cLog2));
  };
  if (blocks <= kExactBlocks) {
    for (uint64_t block = 0; block < blocks; ++block)
      runBlock(block);
    return satAdd(memory, 1); // finish
  }
  // Blocks repeat with the period of their place in the grid and of their
  // operands' places in a 4 KiB page, which the batch strides move. Past
  // kExactBlocks, whole periods repeat the steady state of the last
  // simulated period (one block when a period is longer than half of
  // kExactBlocks: then blocks at other places differ by a few cycles), and
  // the last blocks are simulated again (the pair the last simulated block
  // preloads stands for the first of them). Their bytes are counted
  // exactly: every block reads its A rows and B columns, K deep, and the
  // old C with acc.
  const auto pagePeriod = [](uint64_t stride, unsigned log2) {
    return 4096 / std::gcd<uint64_t>(4096, (stride << log2) % 4096);
  };
  const uint64_t period =
      satMul(satMul(blocksM, blocksN),
             std::lcm(std::lcm(pagePeriod(o.strideA, o.abLog2), pagePeriod(o.strideB, o.abLog2)),
                      pagePeriod(o.strideC, o.cLog2)));
  const uint64_t window = period <= kExactBlocks / 2 ? period : 1;
  uint64_t before = 0;
  for (uint64_t block = 0; block < kExactBlocks; ++block) {
    if (block == kExactBlocks - window)
      before = memory;
    runBlock(block);
  }
  const uint64_t rest = blocks - kExactBlocks, periods = (rest - 1) / window;
  const uint64_t shift = satMul(memory - before, periods);
  for (uint64_t *time : {&memory, &compute, &bufferFree, &*preloaded})
    *time = satAdd(*time, shift);
  for (uint64_t block = blocks - (rest - periods * window); block < blocks; ++block)
    runBlock(block);
  const Traffic sofar = port.traffic();
  const uint64_t reads =
      satAdd(satMul(satAdd(satMul(satMul(m, k), blocksN), satMul(satMul(k, n), blocksM)),
                    satMul(work.batch, uint64_t(1) << o.abLog2)),
             o.acc ? satMul(satMul(m, n), satMul(work.batch, uint64_t(1) << o.cLog2)) : 0);
  const uint64_t writes = satMul(satMul(m, n), satMul(work.batch, uint64_t(1) << o.cLog2));
  port.add(
      {reads - std::min(reads, sofar.bytesRead), writes - std::min(writes, sofar.bytesWritten)});
  return satAdd(memory, 1); // finish
}

} // namespace

const isa::recipe::Recipe *recipeOf(const isa::Instruction &decoded) {
  for (const isa::recipe::Recipe &r : isa::recipe::kRecipes) {
    if (r.opcode != static_cast<uint32_t>(decoded.opcode))
      continue;
    bool matches = true;
    for (unsigned c = 0; c < r.numConditions; ++c) {
      const isa::recipe::Condition &when = isa::recipe::kConditions[r.firstCondition + c];
      matches &= (decoded.operands[when.operand] == when.value) == when.equal;
    }
    if (matches)
      return &r;
  }
  return nullptr;
}

std::optional<uint64_t> vectorLaneCycles(const isa::Instruction &decoded) {
  const isa::recipe::Recipe *r = recipeOf(decoded);
  if (!r)
    return std::nullopt;
  const uint64_t rows = r->rows < 0 ? 1 : decoded.operands[r->rows];
  uint64_t words = 0;
  for (unsigned p = 0; p < r->numPasses; ++p)
    words += stepCycles(r->passes[p].firstStep, r->passes[p].numSteps);
  return ceilDiv(satMul(satMul(rows, decoded.operands[r->cols]), words), kLanes);
}

PacketTiming packetTiming(const isa::Instruction &decoded, const Work &work,
                          const MemoryTiming &memory, Prefetch prefetch, bool extrapolate) {
  // Absurd operands give absurd estimates: every sum and product saturates
  // at 2^64-1 rather than wrap to a small count.
  const isa::InstrInfo &info = isa::info(decoded.opcode);
  Port fetch(memory), engine(memory);
  uint64_t cycles = commandCycles(info, decoded, fetch, prefetch.prefetched);
  // The next packet's fetch, when it overlaps this one: it holds the port.
  const uint64_t nextFetch = prefetch.prefetching ? Port(memory).read(0, isa::kPacketBytes) : 0;
  switch (info.engine) {
  case isa::Engine::Control: break;
  case isa::Engine::Dma: cycles = satAdd(cycles, dmaCycles(work, engine, memory)); break;
  case isa::Engine::Matrix:
    cycles = satAdd(cycles, matrixCycles(work, engine, nextFetch, true));
    break;
  case isa::Engine::Vector:
    if (const isa::recipe::Recipe *recipe = recipeOf(decoded)) {
      bool prefetched = false;
      cycles = satAdd(cycles, VectorEngine(*recipe, decoded, engine, memory, nextFetch,
                                           work.runs.rows, extrapolate)
                                  .run(prefetched));
      Traffic traffic = engine.traffic();
      traffic.upperBound =
          recipe->indexSkip >= 0 && int32_t(uint32_t(decoded.operands[recipe->indexSkip])) >= 0;
      return {cycles, traffic, prefetched};
    }
    break;
  }
  return {cycles, engine.traffic(), info.engine == isa::Engine::Matrix && prefetch.prefetching};
}

PacketTiming PacketTimingMemo::timing(PacketBytes packet, const isa::Instruction &decoded,
                                      const Work &work, Prefetch prefetch) {
  if (!work.runs.rows.empty())
    return packetTiming(decoded, work, memory_, prefetch);
  uint64_t hash = uint64_t(prefetch.prefetched) | uint64_t(prefetch.prefetching) << 1;
  for (unsigned word = 0; word < isa::kPacketBytes / 8; ++word)
    hash = (hash ^ isa::detail::load64(packet.data(), word * 8)) * 0x9e3779b97f4a7c15ull;
  Entry &entry = entries_[(hash >> 32) % kEntries];
  if (!entry.filled || entry.prefetch.prefetched != prefetch.prefetched ||
      entry.prefetch.prefetching != prefetch.prefetching ||
      !std::equal(packet.begin(), packet.end(), entry.packet.begin())) {
    entry.filled = true;
    entry.prefetch = prefetch;
    std::copy(packet.begin(), packet.end(), entry.packet.begin());
    entry.timing = packetTiming(decoded, work, memory_, prefetch);
  }
  return entry.timing;
}

PacketTiming matrixTiming(const Work &work, const MemoryTiming &memory, uint64_t nextFetch,
                          bool memo) {
  Port port(memory);
  const uint64_t cycles = matrixCycles(work, port, nextFetch, memo);
  return {cycles, port.traffic()};
}

} // namespace npu::sim
