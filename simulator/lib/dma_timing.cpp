#include "dma_timing.h"

#include "arith_util.h"

#include <algorithm>
#include <deque>

namespace npu::sim {

namespace {

constexpr uint64_t kBeat = isa::hw::kAxiDataBytes;
constexpr uint64_t kMaxBurst = isa::hw::kAxiMaxBurst;
constexpr size_t kOutstanding = isa::hw::kAxiOutstanding;
constexpr uint64_t kRequest = 64 * 1024;          // npu_dma.sv: CHUNK
constexpr unsigned kElementRowsLog2 = 11;         // ELEMENT_ROWS = 2,048
constexpr uint64_t kRing = 2 * kMaxBurst * kBeat; // BUF_BYTES
constexpr uint64_t kPackMax = kBeat / 2;          // PACK_MAX
// Runs and cycles simulated at most before the rest of a gather is
// extrapolated: the corpus's gathers are exact up to a million cycles, and
// npu-randgen's footprint search pays the bound for every oversized
// candidate it shrinks.
constexpr uint64_t kGatherRuns = 65536, kCycleBudget = uint64_t(1) << 20;

using u128 = unsigned __int128;

// One request's bursts in issue order, as npu_mem_bursts.sv splits its
// rows: each row from its first beat on, at most HW_AXI_MAX_BURST beats a
// burst and never across a 4 KiB page. A row past 2^64 goes on at address
// 0, where the RTL would fault: only a packet no check has passed has one
// (npu-randgen asks for the cycles of candidates it has not placed yet),
// and its runs cost what they would anywhere.
class Bursts {
public:
  void load(uint64_t address, uint64_t bytes, uint64_t rows, uint64_t pitch) {
    bytes_ = bytes;
    rows_ = rows;
    pitch_ = pitch;
    row_ = 0;
    startRow(address);
    issuing_ = true;
  }
  bool issuing() const { return issuing_; }
  uint64_t beat() const { return uint64_t(next_); }
  uint64_t row() const { return row_; }
  uint64_t rowStart() const { return rowStart_; }
  u128 rowEnd() const { return rowEnd_; }
  uint64_t beats() const {
    return burstBeats(uint64_t(next_), uint64_t((rowEnd_ - 1) / kBeat - next_ / kBeat + 1));
  }
  bool last() const { return burstEnd() >= rowEnd_ && row_ + 1 >= rows_; }
  // The burst at beat() was issued.
  void advance() {
    if (burstEnd() < rowEnd_)
      next_ += beats() * kBeat;
    else if (!last()) {
      ++row_;
      startRow(rowStart_ + pitch_);
    } else
      issuing_ = false;
  }

private:
  u128 burstEnd() const { return next_ + beats() * kBeat; }
  void startRow(uint64_t address) {
    rowStart_ = address;
    rowEnd_ = u128(address) + bytes_;
    next_ = address / kBeat * kBeat;
  }

  uint64_t bytes_ = 0, rows_ = 0, pitch_ = 0, row_ = 0, rowStart_ = 0;
  u128 next_ = 0, rowEnd_ = 0;
  bool issuing_ = false;
};

// The harness's wait states: the memory withholds a ready or valid signal
// in each cycle with probability p, drawn here from the model's own
// generator (the harness's draws are not the model's to know). Drawn, not
// charged as their expected p / (1 - p) cycles per handshake: a gather
// repeats the same few handshakes run after run, and a regular pattern of
// waits (every ninth handshake at 10 %) locks onto that period, always
// withholding the same handshake of a run, the one on the critical path or
// one hidden behind the latency (3 % too many cycles on a gather of
// 9-element runs).
class Waits {
public:
  Waits(unsigned percent, uint64_t seed) : percent_(percent), x_(seed * 0x9e3779b97f4a7c15ull) {}
  // A handshake would happen this cycle: whether the memory withholds it.
  bool hold() {
    if (!percent_)
      return false;
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_ % 100 < percent_;
  }

private:
  unsigned percent_;
  uint64_t x_;
};

// The DMA engine, the port's two engines and the harness's memory, cycle by
// cycle, as the RTL's registers step (npu_dma.sv's gather and write sides,
// npu_mem_port.sv's read and write engines, the harness's queue of read
// bursts and its one write burst at a time). Only what timing depends on is
// kept: positions in the destination stream, never data.
class Gather {
public:
  Gather(const Work &work, const MemoryTiming &memory)
      : runs_(work.runs), dst_(work.writeAddress), latency_(memory.latency),
        beatCycles_(memory.beatCycles()), percent_(memory.stallPercent),
        runBytes_(runs_.elements << runs_.elementLog2), embedding_(runs_.indexBytes != 0),
        byElement_(runs_.kind != Work::RunKind::Range),
        packed_(runs_.kind == Work::RunKind::Packed) {}

  // The engine's cycles from its start to its done, the whole stream
  // gathered or extrapolated from the simulated part.
  uint64_t run();

private:
  // npu_dma.sv's gather side (state_e) and write side (wstate_e).
  enum class State { Idle, Setup, Next, IndexReq, Index, IndexCheck, ReadReq, Read, Drain, Finish };
  enum class WState { Idle, Req, Wait };
  enum class PortRead { Idle, Busy, Done };
  enum class PortWrite { Idle, Addr, Data, Response, Done };
  // The registers a cycle reads; the cycle's updates take effect in the next.
  struct Regs {
    State g = State::Idle;
    WState w = WState::Idle;
    PortRead pr = PortRead::Idle;
    PortWrite pw = PortWrite::Idle;
    // Destination stream positions: read requests issued, landed in the
    // ring, write requests issued (up to writeEnd), sent.
    uint64_t planned = 0, landed = 0, requested = 0, writeEnd = 0, consumed = 0;
    uint64_t runAddr = 0, runLeft = 0, take = 0, readBase = 0;
    uint64_t nextElement = 0, elementsLeft = 0; // a packed read's next element
    uint64_t loaded = 0;                        // runs started
    bool exhausted = false;
    // The write burst being sent, and responses pending.
    uint64_t beatAddr = 0, beatsLeft = 0, responsesPending = 0;
    bool writeBurstOpen = false; // the memory has its address, not all its beats
    uint64_t readPathFree = 0, writePathFree = 0;
    bool operator==(const Regs &) const = default;
  };
  struct ReadBurst {
    uint64_t beat, rowStart;
    u128 rowEnd;
    uint64_t row, beatsLeft, ready;
  };

  uint64_t runAddress(uint64_t run);
  uint64_t packedCount(uint64_t beat, const Regs &s) const;

  const Work::Runs &runs_;
  const uint64_t dst_, latency_, beatCycles_;
  const unsigned percent_;
  const uint64_t runBytes_;
  const bool embedding_;
  // A run of elements `pitch` apart (packed or pitched), read in requests of
  // up to 2,048 elements; else a range, in requests of up to 64 KiB.
  const bool byElement_, packed_;
  std::array<uint64_t, 3> at_ = {}; // COPY_STRIDED: the outer indices of the next run
};

uint64_t Gather::runAddress(uint64_t run) {
  if (embedding_) {
    const uint64_t row = run < runs_.rows.size() ? runs_.rows[run]
                         : runs_.tableRows       ? run % runs_.tableRows
                                                 : 0;
    const uint64_t slab = runs_.slabRuns ? run / runs_.slabRuns * runs_.slabBytes : 0;
    return runs_.address + slab + row * (runs_.rowBytes ? runs_.rowBytes : runBytes_) +
           run % runs_.rowRuns * runBytes_;
  }
  uint64_t address = runs_.address;
  for (int d = 0; d < 3; ++d)
    address += at_[d] * uint64_t(runs_.steps[d]);
  // The innermost outer dimension that can still step steps, the ones
  // inside it restart (npu_dma.sv: next_idx).
  for (int d = 2; d >= 0; --d) {
    if (++at_[d] < runs_.sizes[d])
      break;
    at_[d] = 0;
  }
  return address;
}

// The elements of a packed read that a beat carries: those from the next
// one on that lie in the beat (npu_dma.sv: packed_count).
uint64_t Gather::packedCount(uint64_t beat, const Regs &s) const {
  const uint64_t gap = s.nextElement - beat, pitch = uint64_t(runs_.pitch);
  if (gap >= kBeat)
    return 0;
  uint64_t count = 0;
  while (count < kPackMax && count < s.elementsLeft && gap + count * pitch < kBeat)
    ++count;
  return count;
}

uint64_t Gather::run() {
  Waits arWait(percent_, 1), rWait(percent_, 2), awWait(percent_, 3), wWait(percent_, 4),
      bWait(percent_, 5);
  Bursts readBursts, writeBursts;
  std::deque<ReadBurst> reads;    // issued, not all beats returned
  std::deque<uint64_t> responses; // write bursts sent: when each response is ready
  const uint64_t element = uint64_t(1) << runs_.elementLog2;
  const uint64_t pitch = uint64_t(runs_.pitch);
  const uint64_t total = satMul(runs_.count, runBytes_);
  // Where the gather stood at the last checkpoint (cycle, bytes planned),
  // moved each time the bytes planned double: the rate since then
  // extrapolates the rest of a gather longer than the simulation.
  uint64_t markCycle = 0, markBytes = 0;
  Regs r;
  for (uint64_t t = 0;; ++t) {
    const Regs s = r;
    // ---- the cycle's handshakes, from the registers ----
    const bool rdReady = s.g != State::Read || s.landed - s.consumed <= kRing - kBeat;
    // Each handshake the memory would take this cycle (its data and its
    // latency allow it), then whether it withholds it.
    const bool arOffered =
        s.pr == PortRead::Busy && readBursts.issuing() && reads.size() != kOutstanding;
    const bool rOffered = s.pr == PortRead::Busy && !reads.empty() && t >= reads.front().ready &&
                          t >= s.readPathFree && rdReady;
    const uint64_t wrReach = std::min(s.beatAddr + kBeat - dst_, s.writeEnd);
    const bool awOffered = s.pw == PortWrite::Addr && !s.writeBurstOpen;
    const bool wOffered =
        s.pw == PortWrite::Data && wrReach <= s.landed && s.writeBurstOpen && t >= s.writePathFree;
    const bool bOffered = !responses.empty() && t >= responses.front() && s.pw != PortWrite::Idle &&
                          s.pw != PortWrite::Done;
    const bool offered = arOffered || rOffered || awOffered || wOffered || bOffered;
    const bool arFire = arOffered && !arWait.hold(), rFire = rOffered && !rWait.hold();
    const bool awFire = awOffered && !awWait.hold(), wFire = wOffered && !wWait.hold();
    const bool bFire = bOffered && !bWait.hold();
    // The write side's request goes first.
    const bool readAccepted = s.w != WState::Req &&
                              (s.g == State::IndexReq || s.g == State::ReadReq) &&
                              s.pr == PortRead::Idle;
    const bool writeAccepted = s.w == WState::Req && s.pw == PortWrite::Idle;
    const uint64_t writeBytes = std::min(s.planned - s.requested, kRequest);

    // ---- the port's read engine and the memory's read bursts ----
    if (rFire && s.g == State::Read) {
      const ReadBurst &b = reads.front();
      if (packed_) {
        const uint64_t count = packedCount(b.beat, s);
        r.landed = s.landed + count * element;
        r.nextElement = s.nextElement + count * pitch;
        r.elementsLeft = s.elementsLeft - count;
      } else {
        // The stream position just past the beat's bytes of its row.
        const uint64_t rowBase = s.readBase + (byElement_ ? b.row * element : 0);
        const uint64_t rowLength = byElement_ ? element : s.take;
        r.landed = rowBase + std::min(b.beat + kBeat - b.rowStart, rowLength);
      }
    }
    if (s.pr == PortRead::Idle && readAccepted) {
      if (s.g == State::IndexReq)
        readBursts.load(runs_.indices +
                            (runs_.indexPeriod ? s.loaded % runs_.indexPeriod : s.loaded) *
                                runs_.indexBytes,
                        runs_.indexBytes, 1, 0);
      else if (packed_)
        readBursts.load(s.runAddr, ((s.take >> runs_.elementLog2) - 1) * pitch + element, 1, 0);
      else if (byElement_)
        readBursts.load(s.runAddr, element, s.take >> runs_.elementLog2, pitch);
      else
        readBursts.load(s.runAddr, s.take, 1, 0);
      r.pr = PortRead::Busy;
    } else if (s.pr == PortRead::Busy) {
      if (rFire) {
        r.readPathFree = t + beatCycles_;
        ReadBurst &b = reads.front();
        b.beat += kBeat;
        if (--b.beatsLeft == 0)
          reads.pop_front();
      }
      if (arFire) {
        reads.push_back({readBursts.beat(), readBursts.rowStart(), readBursts.rowEnd(),
                         readBursts.row(), readBursts.beats(), t + latency_ + beatCycles_ - 1});
        readBursts.advance();
      }
      if (!readBursts.issuing() && reads.empty())
        r.pr = PortRead::Done;
    } else if (s.pr == PortRead::Done) {
      r.pr = PortRead::Idle;
    }

    // ---- the port's write engine and the memory's write bursts ----
    const uint64_t pendingNext = s.responsesPending + awFire - bFire;
    const bool nextBurstAllowed = writeBursts.issuing() && pendingNext != kOutstanding;
    if (bFire)
      responses.pop_front();
    r.responsesPending = pendingNext;
    switch (s.pw) {
    case PortWrite::Idle:
      if (writeAccepted) {
        writeBursts.load(dst_ + s.requested, writeBytes, 1, 0);
        r.pw = PortWrite::Addr;
      }
      break;
    case PortWrite::Addr:
      if (awFire) {
        r.beatAddr = writeBursts.beat();
        r.beatsLeft = writeBursts.beats();
        writeBursts.advance();
        r.writeBurstOpen = true;
        r.pw = PortWrite::Data;
      }
      break;
    case PortWrite::Data:
      if (wFire) {
        r.beatAddr = s.beatAddr + kBeat;
        r.writePathFree = t + beatCycles_;
        r.consumed = wrReach;
        if (--r.beatsLeft == 0) {
          responses.push_back(t + latency_);
          r.writeBurstOpen = false;
          r.pw = nextBurstAllowed ? PortWrite::Addr : PortWrite::Response;
        }
      }
      break;
    case PortWrite::Response:
      if (nextBurstAllowed)
        r.pw = PortWrite::Addr;
      else if (pendingNext == 0)
        r.pw = PortWrite::Done;
      break;
    case PortWrite::Done: r.pw = PortWrite::Idle; break;
    }

    // ---- the DMA engine's write side ----
    switch (s.w) {
    case WState::Idle:
      if (s.g != State::Idle && s.g != State::Finish && s.requested != s.planned)
        r.w = WState::Req;
      break;
    case WState::Req:
      if (writeAccepted) {
        r.requested = r.writeEnd = s.requested + writeBytes;
        r.w = WState::Wait;
      }
      break;
    case WState::Wait:
      if (s.pw == PortWrite::Done)
        r.w = WState::Idle;
      break;
    }

    // ---- the DMA engine's gather side ----
    switch (s.g) {
    case State::Idle: r.g = State::Setup; break;
    case State::Setup: r.g = State::Next; break;
    case State::Next:
      if (s.runLeft) {
        const uint64_t most = byElement_ ? element << kElementRowsLog2 : kRequest;
        r.take = std::min(s.runLeft, most);
        r.g = State::ReadReq;
      } else if (s.exhausted) {
        r.g = State::Drain;
      } else if (embedding_) {
        r.g = State::IndexReq;
      } else {
        r.runAddr = runAddress(s.loaded);
        r.runLeft = runBytes_;
        r.exhausted = ++r.loaded == runs_.count;
      }
      break;
    case State::IndexReq:
      if (readAccepted)
        r.g = State::Index;
      break;
    case State::Index:
      if (s.pr == PortRead::Done)
        r.g = State::IndexCheck;
      break;
    case State::IndexCheck:
      r.runAddr = runAddress(s.loaded);
      r.runLeft = runBytes_;
      r.exhausted = ++r.loaded == runs_.count;
      r.g = State::Next;
      break;
    case State::ReadReq:
      if (readAccepted) {
        r.readBase = s.planned;
        r.planned = s.planned + s.take;
        r.runAddr = s.runAddr + (byElement_ ? pitch << kElementRowsLog2 : s.take);
        r.nextElement = s.runAddr;
        r.elementsLeft = s.take >> runs_.elementLog2;
        r.runLeft = s.runLeft - s.take;
        r.g = State::Read;
        if (r.planned >= 2 * markBytes) {
          markCycle = t;
          markBytes = r.planned;
        }
        // Past the simulation's budget the rest of the stream goes at the
        // rate since the checkpoint; the end adds the last write's response.
        if ((r.loaded > kGatherRuns || t > kCycleBudget) && r.planned < total &&
            r.planned > markBytes) {
          const double rate = double(t - markCycle) / double(r.planned - markBytes);
          const double rest = double(t) + rate * double(total - r.planned) + double(latency_);
          return rest >= 1.8e19 ? UINT64_MAX : uint64_t(rest);
        }
      }
      break;
    case State::Read:
      if (s.pr == PortRead::Done)
        r.g = State::Next;
      break;
    case State::Drain:
      if (s.w == WState::Idle && s.requested == s.planned && s.landed == s.planned)
        r.g = State::Finish;
      break;
    case State::Finish: return t + 1; // its cycles, the done's included
    }

    // A cycle that offered no handshake and changed no register repeats
    // until the memory's next beat or response is due: go there at once
    // (nothing due would be a deadlock of the model: end rather than spin).
    if (!offered && r == s) {
      uint64_t due = UINT64_MAX;
      for (const uint64_t at : {reads.empty() ? 0 : reads.front().ready, s.readPathFree,
                                responses.empty() ? 0 : responses.front(), s.writePathFree})
        if (at > t)
          due = std::min(due, at);
      if (due == UINT64_MAX)
        return t;
      t = due - 1;
    }
  }
}

} // namespace

uint64_t gatherCycles(const Work &work, const MemoryTiming &memory) {
  return Gather(work, memory).run();
}

} // namespace npu::sim
