#include "timing.h"

#include "arith_util.h"
#include "npu/isa/recipes.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

namespace npu::sim {

Traffic Traffic::operator-(const Traffic &o) const {
  return {bytesRead - o.bytesRead, bytesWritten - o.bytesWritten, upperBound};
}

namespace {

constexpr uint64_t kBeat = isa::hw::kAxiDataBytes;

// The bursts of `beats` beats from the one at `address` in order, as the
// memory port splits a run (npu_mem_bursts.sv): at most HW_AXI_MAX_BURST
// beats each and never across a 4 KiB page.
template <class Burst> void forEachBurst(uint64_t address, uint64_t beats, Burst &&burst) {
  constexpr uint64_t kPageBeats = 4096 / kBeat;
  for (uint64_t inPage = address / kBeat % kPageBeats; beats;) {
    const uint64_t take = std::min({beats, uint64_t(isa::hw::kAxiMaxBurst), kPageBeats - inPage});
    burst(take);
    beats -= take;
    inPage = (inPage + take) % kPageBeats;
  }
}

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

  // A pitched read of one-beat bursts, one per element: the port issues an
  // address per cycle and keeps HW_AXI_OUTSTANDING bursts in flight, so an
  // element takes a beat, an address handshake, or latency / outstanding,
  // whichever is slowest.
  uint64_t pitchedRead(uint64_t elements, uint64_t elementBytes) {
    bytesRead_ = satAdd(bytesRead_, satMul(elements, elementBytes));
    const double perElement =
        std::max({double(memory_.beatCycles()) + wait_, 1.0 + wait_,
                  double(memory_.latency + 2) / double(isa::hw::kAxiOutstanding)});
    const double cycles = double(kReadOverhead + memory_.latency) + wait_ + double(elements) * perElement + 0.5;
    return cycles >= 1.8e19 ? UINT64_MAX : uint64_t(cycles);
  }

  // A request of many runs (`beats` in all), pipelined like one.
  uint64_t readRuns(uint64_t bytes, uint64_t beats) {
    bytesRead_ = satAdd(bytesRead_, bytes);
    return transfer(kReadOverhead, 1, beats, beats);
  }
  // The memory takes a burst's address only once the previous burst's last
  // beat is in (one write burst at a time): at one cycle per beat that
  // address cycle is a bubble per further burst; slower beats hide it.
  uint64_t writeRuns(uint64_t bytes, uint64_t beats, uint64_t bursts) {
    bytesWritten_ = satAdd(bytesWritten_, bytes);
    const uint64_t bubbles = memory_.beatCycles() == 1 && bursts ? bursts - 1 : 0;
    return satAdd(transfer(kWriteOverhead + 1, 1 + bursts, beats, beats ? beats - 1 : 0), bubbles);
  }

  // The cycles a request of these bursts (beat counts, in order) loses to
  // the port's HW_AXI_OUTSTANDING bursts in flight: a burst's address waits
  // until the burst that many before it has returned its last read beat or
  // its write response (for more bursts than that; zero while the latency
  // hides within the limit).
  uint64_t outstandingStall(const std::vector<uint64_t> &bursts, bool write) const {
    return burstsEnd(bursts, write, isa::hw::kAxiOutstanding) -
           burstsEnd(bursts, write, bursts.size());
  }

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

  // When the last of the bursts completes with at most `limit` in flight: a
  // read burst's beats follow its address by the latency and the previous
  // burst's beats; a write burst's address follows the previous burst's
  // last beat, and its response the last beat by the latency.
  uint64_t burstsEnd(const std::vector<uint64_t> &bursts, bool write, size_t limit) const {
    const uint64_t latency = memory_.latency, beat = memory_.beatCycles();
    std::vector<uint64_t> end(bursts.size());
    uint64_t address = 0, last = 0;
    for (size_t i = 0; i < bursts.size(); ++i) {
      const uint64_t slotFree = i >= limit ? end[i - limit] + (write ? 1 : 0) : 0;
      if (write) {
        address = std::max(last + 1, slotFree);
        last = std::max(address + 1, last + beat) + (bursts[i] - 1) * beat;
        end[i] = last + latency;
      } else {
        address = std::max(i ? address + 1 : 1, slotFree);
        last = std::max(address + latency, last) + bursts[i] * beat;
        end[i] = last;
      }
    }
    return end.back();
  }

  // `beats` beats, of which `timed` take their full beat time.
  uint64_t transfer(uint64_t overhead, unsigned handshakes, uint64_t beats, uint64_t timed) const {
    const uint64_t cycles =
        satAdd(overhead + memory_.latency, satMul(timed, memory_.beatCycles()));
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
// per pass, per chunk of CH elements: each input stream read, every group
// of L elements through the pass's steps (one cycle per ROM word of a Run,
// one per Mask or Reduce; the last one ends the group), each output stream
// written; at a pass's end the reduction tree and the scalar steps. A
// chunk's write is posted: the engine goes on to the next reads, which wait
// for it only when they read its bytes; the next steps, the next write, a
// row store and the packet's end wait for its response.
constexpr uint64_t kLanes = isa::hw::kVectorLanes;
constexpr uint64_t kChunk = kLanes * 16; // npu_vector.sv: CH = L * G

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

uint64_t stepCycles(uint16_t first, uint16_t count) {
  uint64_t cycles = 0;
  for (unsigned s = 0; s < count; ++s) {
    const isa::recipe::Step &step = isa::recipe::kSteps[first + s];
    cycles += step.kind == isa::recipe::StepKind::Run ? step.words : 1;
  }
  return cycles;
}

// `nextFetch`: the cycles of the next packet's prefetch, which the command
// processor issues in the first compute step after the engine's first
// completed request; the engine's next request waits for it.
uint64_t vectorCycles(const isa::recipe::Recipe &r, const isa::Instruction &decoded, Port &port,
                      uint64_t nextFetch) {
  const uint64_t rows = r.rows < 0 ? 1 : decoded.operands[r.rows];
  const uint64_t cols = decoded.operands[r.cols];
  const uint64_t rowBytes = satMul(cols, 4);
  uint64_t cycles = 3; // idle, setup, start
  bool requested = false; // a request of the packet completed
  if (r.preLoadWords) {
    cycles += port.read(0, 4 * r.preLoadWords);
    requested = true;
  }
  cycles += stepCycles(r.firstPre, r.numPre) + 1;

  // The posted chunk write in progress: the cycles from a row's start until
  // the engine sees its response (`writeLeft` when the row starts), and its
  // bytes, which a read waits for when it overlaps them.
  uint64_t writeLeft = 0, writeAddress = 0, writeBytes = 0;

  // The cycles of one row: the streams' alignment within a beat repeats
  // every row when a row is a whole number of beats; otherwise rows differ
  // only in their beats, which the first and a typical row bound closely.
  // Times count from the row's start.
  const auto rowCycles = [&](uint64_t row) {
    uint64_t c = 1;
    uint64_t writeFree = writeLeft;
    writeLeft = 0;
    // The prefetch, from the first steps after a request, holds the port
    // until `portFree`.
    uint64_t portFree = 0;
    if (r.rowLoad == isa::recipe::RowLoad::Scalar) {
      c += port.read(0, 4 * r.rowLoadWords);
      requested = true;
    } else if (r.rowLoad == isa::recipe::RowLoad::Index) {
      c += port.read(0, decoded.operands[r.indexType] ? 8 : 4) + 1;
      requested = true;
    }
    for (unsigned p = 0; p < r.numPasses; ++p) {
      const isa::recipe::Pass &pass = r.passes[p];
      // The last step ends its group (a pass without steps spends a cycle on the end).
      const uint64_t groupSteps = std::max<uint64_t>(1, stepCycles(pass.firstStep, pass.numSteps));
      for (uint64_t j0 = 0; j0 < cols; j0 += kChunk) {
        const uint64_t length = std::min(kChunk, cols - j0);
        c += 1;
        for (unsigned s = 0; s < 7; ++s) {
          if (s == 4) {
            // The steps write the output buffers once the last write's beats left.
            c = std::max(c, writeFree);
            if (requested && nextFetch) {
              portFree = c + nextFetch + 1;
              nextFetch = 0;
            }
            c = satAdd(c, ceilDiv(length, kLanes) * groupSteps);
          }
          const unsigned bit = 1u << (s < 4 ? s : s - 4);
          if (!((s < 4 ? pass.inputs : pass.outputs) & bit))
            continue;
          const uint64_t base = decoded.operands[r.streamOperand[s]] +
                                (r.streamPerRow >> s & 1 ? row * rowBytes : 0) + 4 * j0;
          const uint64_t bytes = 4 * length;
          if (s < 4 && row == 0 && (r.zeroFirstRow >> s & 1)) {
            c += 1; // an accumulator's first value: +0, not read
            continue;
          }
          c = std::max(c, portFree);
          if (s < 4) {
            const bool overlaps = writeBytes && base < satAdd(writeAddress, writeBytes) &&
                                  writeAddress < satAdd(base, bytes);
            if (overlaps)
              c = std::max(c, writeFree);
            c = satAdd(c, port.read(base, bytes));
          } else {
            // Posted: the engine goes on the next cycle.
            c = std::max(c, writeFree);
            writeFree = satAdd(c, port.write(base, bytes));
            writeAddress = base;
            writeBytes = bytes;
            c += 1;
          }
          requested = true;
        }
      }
      c += 1 + (pass.reduces ? 3 : 0) + stepCycles(pass.firstAfter, pass.numAfter) + 1;
    }
    if (r.rowStoreWords) {
      // After the posted write; it waits for its own response.
      c = std::max({c, writeFree, portFree});
      c = satAdd(c, port.write(0, 4 * r.rowStoreWords));
      writeBytes = 0;
    }
    c += 1;
    writeLeft = writeFree > c ? writeFree - c : 0;
    return c;
  };
  if (rows > 0) {
    cycles = satAdd(cycles, rowCycles(0));
    if (rows > 1) {
      // The second row's requests stand for every later row's.
      const Traffic before = port.traffic();
      cycles = satAdd(cycles, satMul(rows - 1, rowCycles(1)));
      const Traffic row = port.traffic() - before;
      port.add({satMul(rows - 2, row.bytesRead), satMul(rows - 2, row.bytesWritten)});
    }
  }
  // The last write's response, then finish.
  return satAdd(cycles, writeLeft + 2);
}

// The DMA engine (rtl/npu_dma.sv): a gather of source runs (Work::runs)
// whose reads go one request at a time, a range in requests of at most
// 64 KiB, a strided run in requests of at most 2,048 elements, while the
// write side streams the landed bytes out concurrently; the packet ends
// with the last write's response. Without runs (FILL) it is one write
// request, split into bursts like any.
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
  if (runs.kind == Work::RunKind::Range && !runs.indexBytes && runs.count == 1) {
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
  const uint64_t element = uint64_t(1) << runs.elementLog2;
  const Traffic before = port.traffic();
  uint64_t run = runs.indexBytes ? port.read(0, runs.indexBytes) + 3 : 1;
  for (uint64_t done = 0; done < runs.elements;) {
    const uint64_t take = std::min(runs.elements - done, runs.kind == Work::RunKind::Range
                                                             ? kRequest >> runs.elementLog2
                                                             : kElementRows);
    switch (runs.kind) {
    case Work::RunKind::Range:
      run = satAdd(run, port.read(runs.address, take << runs.elementLog2) + 1);
      break;
    case Work::RunKind::Packed:
      run = satAdd(run, port.read(runs.address, (take - 1) * runs.pitch + element) + 1);
      break;
    case Work::RunKind::Pitched: run = satAdd(run, port.pitchedRead(take, element) + 1); break;
    }
    done += take;
  }
  // Every run reads what the first one does.
  const Traffic one = port.traffic() - before;
  port.add({satMul(runs.count - 1, one.bytesRead), 0});
  return satAdd(satAdd(3, satMul(runs.count, run)), memory.latency + 3);
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
// memory side's next request waits for it.
uint64_t matrixCycles(const Work &work, Port &port, uint64_t nextFetch) {
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
  // A request of `count` runs of `words` elements, `pitch` elements apart
  // from element `first` of a matrix at `base` (at most BR runs).
  const auto runs = [&](bool write, uint64_t base, uint64_t first, uint64_t count, uint64_t words,
                        uint64_t pitch) {
    const auto eachBurst = [&](auto &&burst) {
      for (uint64_t r = 0; r < count; ++r) {
        const uint64_t address = base + 4 * (first + r * pitch);
        forEachBurst(address, Port::beats(address, 4 * words), burst);
      }
    };
    uint64_t beats = 0, bursts = 0;
    eachBurst([&](uint64_t n) {
      beats += n;
      ++bursts;
    });
    // Only a request of more bursts than may be in flight is timed burst by burst.
    uint64_t stall = 0;
    if (bursts > isa::hw::kAxiOutstanding) {
      std::vector<uint64_t> burstBeats;
      eachBurst([&](uint64_t n) { burstBeats.push_back(n); });
      stall = port.outstandingStall(burstBeats, write);
    }
    const uint64_t bytes = satMul(count, 4 * words);
    return kRequest + stall +
           (write ? port.writeRuns(bytes, beats, bursts) : port.readRuns(bytes, beats));
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
  // Offsets in elements wrap harmlessly: only their place in a 4 KiB page counts.
  const auto batchOf = [&](uint64_t b) { return b / blocksN / blocksM; };
  const auto rowsOf = [&](uint64_t b) { return clip(m, b / blocksN % blocksM * BR, BR); };
  const auto colsOf = [&](uint64_t b) { return clip(n, b % blocksN * BR, BR); };
  // Loads panel `p` of block `b` once the load buffer is free; the time it is loaded.
  const auto loadPanel = [&](uint64_t b, uint64_t p) {
    const uint64_t bi = b / blocksN % blocksM, bj = b % blocksN, depth = clip(k, p * KC, KC);
    const uint64_t a = batchOf(b) * o.strideA, bb = batchOf(b) * o.strideB;
    waitFor(bufferFree);
    memory = satAdd(memory, 1);
    memory = satAdd(
        memory, o.transA ? runs(false, o.a, a + p * KC * o.lda + bi * BR, depth, rowsOf(b), o.lda)
                         : runs(false, o.a, a + bi * BR * o.lda + p * KC, rowsOf(b), depth, o.lda));
    memory =
        satAdd(memory,
               o.transB ? runs(false, o.b, bb + bj * BR * o.ldb + p * KC, colsOf(b), depth, o.ldb)
                        : runs(false, o.b, bb + p * KC * o.ldb + bj * BR, depth, colsOf(b), o.ldb));
    return memory;
  };
  std::optional<uint64_t> preloaded; // the block's first panels, loaded during the last block
  const auto runBlock = [&](uint64_t block) {
    const uint64_t bj = block % blocksN, bi = block / blocksN % blocksM;
    const uint64_t rows = rowsOf(block), cols = colsOf(block), c = batchOf(block) * o.strideC;
    // The accumulators: a decide cycle, then the old C, or cleared in it.
    memory = satAdd(
        memory,
        1 + (o.acc ? runs(false, o.c, c + bi * BR * o.ldc + bj * BR, rows, cols, o.ldc) : 0));
    const uint64_t accReady = memory;
    uint64_t lastCompute = compute;
    const auto panel = [&](uint64_t p) {
      const uint64_t loaded = p == 0 && preloaded ? *preloaded : loadPanel(block, p);
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
      preloaded = loadPanel(block + 1, 0);
    waitFor(lastCompute);
    memory = satAdd(memory, 1);
    memory = satAdd(memory, runs(true, o.c, c + bi * BR * o.ldc + bj * BR, rows, cols, o.ldc));
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
  const auto pagePeriod = [](uint64_t stride) {
    return 4096 / std::gcd<uint64_t>(4096, stride * 4 % 4096);
  };
  const uint64_t period = satMul(
      satMul(blocksM, blocksN),
      std::lcm(std::lcm(pagePeriod(o.strideA), pagePeriod(o.strideB)), pagePeriod(o.strideC)));
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
      satMul(satAdd(satAdd(satMul(satMul(m, k), blocksN), satMul(satMul(k, n), blocksM)),
                    o.acc ? satMul(m, n) : 0),
             satMul(work.batch, 4));
  const uint64_t writes = satMul(satMul(m, n), satMul(work.batch, 4));
  port.add(
      {reads - std::min(reads, sofar.bytesRead), writes - std::min(writes, sofar.bytesWritten)});
  return satAdd(memory, 1); // finish
}

} // namespace

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
                          const MemoryTiming &memory, Prefetch prefetch) {
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
  case isa::Engine::Matrix: cycles = satAdd(cycles, matrixCycles(work, engine, nextFetch)); break;
  case isa::Engine::Vector:
    if (const isa::recipe::Recipe *recipe = recipeOf(decoded)) {
      cycles = satAdd(cycles, vectorCycles(*recipe, decoded, engine, nextFetch));
      Traffic traffic = engine.traffic();
      traffic.upperBound = recipe->indexSkip >= 0 &&
                           int32_t(uint32_t(decoded.operands[recipe->indexSkip])) >= 0;
      return {cycles, traffic};
    }
    break;
  }
  return {cycles, engine.traffic()};
}

} // namespace npu::sim
