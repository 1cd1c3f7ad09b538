#include "npu/verify/generator.h"

#include "npu/mem/address_map.h"
#include "npu/sim/checks.h"
#include "npu/verify/classes.h"
#include "npu/verify/coverage.h"
#include "npu/verify/footprint.h"
#include "table_rules.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>

namespace npu::verify {

namespace {

// Only raw engine outputs are used (no std distributions, whose results
// differ between standard libraries), so a seed means the same stream
// everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  uint64_t next() { return engine_(); }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool percent(uint32_t p) { return below(100) < p; }
  int64_t between(int64_t lo, int64_t hi) { // inclusive
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  template <class T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

private:
  std::mt19937_64 engine_;
};

uint64_t alignUp(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}
uint64_t alignDown(uint64_t v, uint64_t a) {
  return v / a * a;
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A binary32 pattern; `specialPercent` of them from the special classes.
uint32_t randomFloat(Rng &rng, uint32_t specialPercent) {
  if (!rng.percent(specialPercent)) {
    // Mostly in [-4, 4): values whose sums and products stay in range.
    const double unit = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
    return floatBits(static_cast<float>(unit * 8.0 - 4.0));
  }
  const uint32_t sign = static_cast<uint32_t>(rng.below(2)) << 31;
  switch (rng.below(8)) {
  case 0: return sign;                                                                // ±0
  case 1: return sign | 0x7f800000u;                                                  // ±inf
  case 2: return sign | 0x7f800000u | static_cast<uint32_t>(1 + rng.below(0x7fffff)); // NaN
  case 3: return sign | static_cast<uint32_t>(1 + rng.below(0x7fffff));               // subnormal
  case 4:
    return sign | (static_cast<uint32_t>(0xfe - rng.below(24)) << 23) |
           static_cast<uint32_t>(rng.below(0x800000)); // huge
  case 5:
    return sign | (static_cast<uint32_t>(1 + rng.below(24)) << 23) |
           static_cast<uint32_t>(rng.below(0x800000)); // tiny
  case 6:
    return sign | (static_cast<uint32_t>(1 + rng.below(254)) << 23) |
           static_cast<uint32_t>(rng.below(0x800000));               // any normal
  default: return floatBits(static_cast<float>(rng.between(-4, 4))); // small integer
  }
}

// A size of one of the shape classes (classes.h).
uint64_t randomSize(Rng &rng, bool large) {
  constexpr uint64_t tile = isa::hw::kMatrixTile;
  if (large && rng.percent(50))
    return kLargeShape + rng.below(4 * kLargeShape);
  switch (rng.below(8)) {
  case 0: return 1;
  case 1: return tile - 1;
  case 2: return tile;
  case 3: return tile + 1;
  case 4: { // a prime above the tile
    uint64_t p = tile + 2 + rng.below(large ? 2000 : 120);
    while (!isPrime(p))
      ++p;
    return p;
  }
  case 5: return tile * (2 + rng.below(8)); // multiples of the tile
  case 6: return kLargeShape + rng.below(kLargeShape);
  default: return 1 + rng.below(64);
  }
}

uint64_t rawOf(const isa::OperandInfo &op, int64_t value) {
  return static_cast<uint64_t>(value) & rules::slotMax(op);
}

int64_t clampToRange(const isa::OperandInfo &op, int64_t v) {
  if (!op.hasRange)
    return v;
  return std::clamp(v, op.min, op.max);
}

// Draws every non-address operand from its table description.
// `scalars` decides which float scalars become small integers: a stream of
// its own, so that the other draws, and with them every stream's shapes,
// addresses and cycles, are those of a generator without it.
void drawOperands(Rng &rng, Rng &scalars, isa::Instruction &inst, bool large,
                  uint32_t specialPercent) {
  const isa::InstrInfo &info = isa::info(inst.opcode);
  for (uint32_t i = 0; i < info.numOperands; ++i) {
    const isa::OperandInfo &op = info.operands[i];
    uint64_t &raw = inst.operands[i];
    if (op.optional && rng.percent(20)) {
      raw = op.defaultBits;
      continue;
    }
    switch (op.kind) {
    case isa::OperandKind::Addr: break; // placed later
    case isa::OperandKind::Flag: raw = rng.below(2); break;
    case isa::OperandKind::Enum: {
      const std::vector<uint32_t> values = isa::acceptedValues(op);
      raw = values[rng.below(values.size())];
      break;
    }
    case isa::OperandKind::F32:
      // Scalars are exponents, bounds and fill values: integral ones (the
      // negative integral exponents of POWS among them) take paths that
      // general values miss.
      raw = randomFloat(rng, std::min(100u, specialPercent * 2));
      if (scalars.percent(20))
        raw = floatBits(static_cast<float>(scalars.between(-3, 3)));
      break;
    case isa::OperandKind::Bits32:
      raw = rng.percent(50) ? randomFloat(rng, specialPercent) : static_cast<uint32_t>(rng.next());
      break;
    case isa::OperandKind::U32: {
      int64_t v;
      if (rules::isDimension(op))
        v = static_cast<int64_t>(randomSize(rng, large));
      else if (rng.percent(35))
        v = 0; // pitches and strides: 0 means dense or broadcast
      else
        v = static_cast<int64_t>(randomSize(rng, large) + (rng.percent(50) ? rng.below(5) : 0));
      raw = rawOf(op, clampToRange(op, v));
      break;
    }
    case isa::OperandKind::I32: {
      int64_t v;
      const uint64_t pick = rng.below(100);
      if (pick < 40)
        v = rng.between(-8, 8);
      else if (pick < 65)
        v = rng.between(-64, 64);
      else if (pick < 75)
        v = std::vector<int64_t>{op.min, op.max, op.min + 1, op.max - 1, 0}[rng.below(5)];
      else
        v = static_cast<int32_t>(rng.next());
      raw = rawOf(op, clampToRange(op, v));
      break;
    }
    }
  }
  legalise(inst);
}

uint64_t totalBytes(const Footprint &f) {
  uint64_t sum = 0;
  for (const Buffer &b : f.buffers)
    sum = b.bytes > UINT64_MAX - sum ? UINT64_MAX : sum + b.bytes;
  return sum;
}

bool fits(const Footprint &f, const Budget &budget) {
  return totalBytes(f) <= budget.bytes && f.work <= budget.work;
}

// A contiguous block of memory the stream placed.
struct Block {
  uint64_t begin, bytes;
  Content content;
  bool overlaps(uint64_t b, uint64_t n) const { return begin < b + n && b < begin + bytes; }
};

// Fresh memory: per data region, a pointer growing up from the bottom and
// one growing down from the top (buffers that end exactly at the region's
// end).
struct Arena {
  mem::Region region;
  uint64_t bottom, top;
};

class StreamBuilder {
public:
  explicit StreamBuilder(const GeneratorOptions &options)
      : options_(options), rng_(options.seed), scalarRng_(~options.seed),
        map_(mem::AddressMap::defaults()) {
    for (const mem::Region &r : dataRegions())
      arenas_.push_back({r, r.base, r.base + r.size});
    for (const isa::InstrInfo &info : isa::instructions()) {
      if (info.opcode == isa::Opcode::HALT)
        continue;
      if (!options.opcodes.empty() && std::find(options.opcodes.begin(), options.opcodes.end(),
                                                info.opcode) == options.opcodes.end())
        continue;
      // Packets that do nothing are a small share of the mix.
      const int weight = info.numOperands == 0 ? 1 : 4;
      for (int w = 0; w < weight; ++w)
        mix_.push_back(info.opcode);
    }
    faultClasses_ = options.faultClasses.empty() ? injectableFaults() : options.faultClasses;
  }

  Stream build() {
    Stream stream;
    const bool endWithHalt = options_.packets > 0 && (mix_.empty() || rng_.percent(50));
    const uint32_t body = options_.packets - (endWithHalt ? 1 : 0);
    for (uint32_t i = 0; i < body && !mix_.empty(); ++i)
      stream.intents.push_back(packet(stream.object));
    if (endWithHalt) {
      // The final HALT can be made to fault too (it has no operands: only
      // its reserved bits can be wrong).
      isa::Packet halt = isa::packetOf(isa::inst::Halt{});
      PacketIntent intent{static_cast<uint32_t>(isa::Opcode::HALT), mem::FaultCode::None, ""};
      const bool reserved = std::find(faultClasses_.begin(), faultClasses_.end(),
                                      mem::FaultCode::ReservedBits) != faultClasses_.end();
      if (reserved && rng_.percent(options_.faultPercent)) {
        intent.injected = mem::FaultCode::ReservedBits;
        setReservedBit(isa::makeInstruction(isa::Opcode::HALT), halt, intent.note);
      }
      stream.object.text.push_back(halt);
      stream.intents.push_back(intent);
    }
    std::sort(
        stream.object.data.begin(), stream.object.data.end(),
        [](const bin::DataSegment &a, const bin::DataSegment &b) { return a.address < b.address; });
    return stream;
  }

private:
  PacketIntent packet(bin::Object &object) {
    // A faulting packet is an instruction that can raise the chosen class
    // (the coverage model's fault bins say which can), so that a class few
    // instructions have, index-out-of-range, is as frequent as the others.
    mem::FaultCode planned = mem::FaultCode::None;
    if (!faultClasses_.empty() && rng_.percent(options_.faultPercent))
      planned = rng_.pick(faultClasses_);
    std::vector<isa::Opcode> able;
    if (planned != mem::FaultCode::None && planned != mem::FaultCode::UnknownOpcode) {
      const std::string suffix = std::string("/fault/") + mem::faultCodeName(planned);
      for (isa::Opcode o : mix_)
        if (CoverageModel::instance().find(isa::info(o).mnemonic + suffix))
          able.push_back(o);
    }
    // Half the out-of-region and invalid-operand faults go to instructions
    // with a matrix or strided view: their extents are computed from several
    // operands, where an engine's bound check has the most to get wrong.
    if ((planned == mem::FaultCode::OutOfRegion || planned == mem::FaultCode::InvalidOperand) &&
        rng_.percent(50)) {
      std::vector<isa::Opcode> viewed;
      std::copy_if(able.begin(), able.end(), std::back_inserter(viewed), hasComputedExtent);
      if (!viewed.empty())
        able = std::move(viewed);
    }
    // A third of the overlap faults go to instructions with a batch of
    // matrices that must not overlap one another (BMM's C): that check is
    // on one view alone, and few instructions have it.
    if (planned == mem::FaultCode::Overlap && rng_.percent(33)) {
      std::vector<isa::Opcode> batched;
      std::copy_if(able.begin(), able.end(), std::back_inserter(batched), hasDistinctBatch);
      if (!batched.empty())
        able = std::move(batched);
    }
    const isa::Opcode opcode = rng_.pick(able.empty() ? mix_ : able);
    current_ = opcode;
    isa::Instruction inst = isa::makeInstruction(opcode);
    const bool large = rng_.percent(options_.largePercent);
    drawOperands(rng_, scalarRng_, inst, large, options_.specialPercent);
    // A large packet has one large size, and sometimes a second just past
    // a blocking edge (256..319: a full GEMM depth panel beside more than
    // 2048 columns); the others give way to them.
    uint64_t keepMask = 0;
    if (large) {
      const isa::InstrInfo &info = isa::info(opcode);
      std::vector<uint32_t> sizes;
      for (uint32_t i = 0; i < info.numOperands; ++i)
        if (rules::isDimension(info.operands[i]))
          sizes.push_back(i);
      const auto enlarge = [&](uint32_t at, uint64_t span) {
        const isa::OperandInfo &op = info.operands[at];
        inst.operands[at] =
            rawOf(op, clampToRange(op, static_cast<int64_t>(kLargeShape + rng_.below(span))));
        keepMask |= uint64_t(1) << at;
      };
      if (!sizes.empty()) {
        const size_t first = rng_.below(sizes.size());
        // Up to 13 x 256: past the blockings an implementation is likely
        // to use (the ISS's GEMM packs 2048 columns of B at a time).
        enlarge(sizes[first], 12 * kLargeShape);
        if (sizes.size() > 1 && rng_.percent(options_.pairPercent))
          enlarge(sizes[(first + 1 + rng_.below(sizes.size() - 1)) % sizes.size()],
                  kLargeShape / 4);
        legalise(inst);
      }
    }
    const Budget &budget = std::popcount(keepMask) > 1 ? kBlockingBudget
                           : large                     ? kLargeBudget
                                                       : kSmallBudget;
    // Each step halves an operand; 32 halvings empty a 32-bit operand.
    for (uint32_t step = 0; step < 32 * isa::kMaxOperands && !fits(footprintOf(inst), budget);
         ++step)
      // Mostly the largest operand, sometimes another.
      if (!shrinkOperand(inst, rng_.percent(50) ? 0 : rng_.below(8), keepMask) &&
          !shrinkOperand(inst))
        break;
    Footprint f = footprintOf(inst);

    PacketIntent intent;
    intent.opcodeWord = static_cast<uint32_t>(opcode);
    if (planned != mem::FaultCode::None && canFault(inst, f, planned))
      intent.injected = planned;

    // Address faults take one buffer out of the placement.
    const Buffer *victim = nullptr;
    if (isAddressFault(intent.injected))
      victim = chooseVictim(f, intent.injected);
    if (isAddressFault(intent.injected) && !victim)
      intent.injected = mem::FaultCode::None;

    place(f, victim, object);
    if (victim) {
      Buffer &b = *std::find_if(f.buffers.begin(), f.buffers.end(),
                                [&](const Buffer &x) { return &x == victim; });
      b.address = faultingAddress(b, f, intent.injected, intent.note);
    }
    const isa::InstrInfo &info = isa::info(opcode);
    for (uint32_t i = 0; i < info.numOperands; ++i) {
      const isa::OperandInfo &op = info.operands[i];
      if (op.kind != isa::OperandKind::Addr)
        continue;
      if (const Buffer *b = f.find(op.name)) {
        inst.operands[i] = b->address;
      } else {
        // An operand the packet does not use: mostly 0, sometimes an
        // address that would fault if it were touched.
        inst.operands[i] =
            rng_.percent(85) ? 0 : alignDown(rng_.next() >> rng_.below(40), op.align);
      }
    }

    if (intent.injected == mem::FaultCode::OutOfRegion && victim && rng_.percent(50))
      stretchStride(inst, *victim, intent.note);
    if (intent.injected == mem::FaultCode::Overlap &&
        !(rng_.percent(75) && overlapBatches(inst, intent.note)) &&
        !makeOverlap(inst, f, intent.note))
      intent.injected = mem::FaultCode::None;
    if (intent.injected == mem::FaultCode::IndexOutOfRange && !corruptIndex(f, object, intent.note))
      intent.injected = mem::FaultCode::None;

    isa::Packet packet;
    isa::encode(inst, packet);
    if (intent.injected == mem::FaultCode::InvalidOperand && !breakRange(inst, packet, intent.note))
      intent.injected = mem::FaultCode::None;
    if (intent.injected == mem::FaultCode::Misaligned && !misalign(inst, packet, intent.note))
      intent.injected = mem::FaultCode::None;
    if (intent.injected == mem::FaultCode::ReservedBits)
      setReservedBit(inst, packet, intent.note);
    if (intent.injected == mem::FaultCode::UnknownOpcode)
      unknownOpcode(packet, intent);
    object.text.push_back(packet);

    if (intent.injected == mem::FaultCode::None)
      for (const Buffer &b : f.buffers)
        if (b.writes())
          written_.push_back({b.begin(), b.bytes, b.content});
    return intent;
  }

  bool canFault(const isa::Instruction &inst, const Footprint &f, mem::FaultCode code) const {
    const isa::InstrInfo &info = isa::info(inst.opcode);
    switch (code) {
    case mem::FaultCode::Unmapped:
    case mem::FaultCode::Permission: return !f.buffers.empty();
    case mem::FaultCode::OutOfRegion:
      return std::any_of(f.buffers.begin(), f.buffers.end(),
                         [&](const Buffer &b) { return b.bytes > 2 * alignOf(b.operand); });
    case mem::FaultCode::Misaligned: return !rules::misalignableOperands(info).empty();
    case mem::FaultCode::InvalidOperand: return !rules::outOfRangeValues(info).empty();
    case mem::FaultCode::Overlap:
      for (const Buffer &w : f.buffers)
        for (const Buffer &o : f.buffers)
          if (&w != &o && w.writes())
            return true;
      return false;
    case mem::FaultCode::IndexOutOfRange:
      return std::any_of(f.buffers.begin(), f.buffers.end(), [](const Buffer &b) {
        return b.content == Content::Index32 || b.content == Content::Index64;
      });
    default: return true; // unknown opcode, reserved bits
    }
  }

  static bool isAddressFault(mem::FaultCode code) {
    return code == mem::FaultCode::Unmapped || code == mem::FaultCode::Permission ||
           code == mem::FaultCode::OutOfRegion;
  }

  static bool hasComputedExtent(isa::Opcode opcode) {
    const auto memory = isa::info(opcode).memoryList();
    return std::any_of(memory.begin(), memory.end(), [](const isa::MemOperandInfo &m) {
      return m.kind != isa::ExtentKind::Product;
    });
  }

  static bool hasDistinctBatch(isa::Opcode opcode) {
    const auto memory = isa::info(opcode).memoryList();
    return std::any_of(memory.begin(), memory.end(), [](const isa::MemOperandInfo &m) {
      return m.kind == isa::ExtentKind::Matrix && m.distinct && m.batch >= 0;
    });
  }

  const Buffer *chooseVictim(const Footprint &f, mem::FaultCode code) {
    std::vector<const Buffer *> candidates, computed;
    for (const Buffer &b : f.buffers)
      // A range can only straddle a region's end if it is longer than its alignment step.
      if (code != mem::FaultCode::OutOfRegion || b.bytes > 2 * alignOf(b.operand)) {
        candidates.push_back(&b);
        if (b.computedExtent)
          computed.push_back(&b);
      }
    if (code == mem::FaultCode::OutOfRegion && !computed.empty() && rng_.percent(75))
      return rng_.pick(computed);
    return candidates.empty() ? nullptr : rng_.pick(candidates);
  }

  uint32_t alignOf(std::string_view operand) const {
    const isa::InstrInfo &info = isa::info(current_);
    const int i = info.operandIndex(operand);
    return i < 0 ? 1 : info.operands[i].align;
  }

  uint64_t faultingAddress(const Buffer &b, const Footprint &f, mem::FaultCode code,
                           std::string &note) {
    const uint64_t align = std::max<uint64_t>(alignOf(b.operand), 1);
    std::vector<const mem::Region *> regions;
    for (const mem::Region &r : map_.regions)
      regions.push_back(&r);
    std::sort(regions.begin(), regions.end(),
              [](const mem::Region *a, const mem::Region *c) { return a->base < c->base; });
    if (code == mem::FaultCode::Permission) {
      // The CSR window, the command ring, or a region without the access.
      std::vector<const mem::Region *> forbidden;
      for (const mem::Region *r : regions)
        if ((b.reads() && !r->engineReadable()) || (b.writes() && !r->engineWritable()))
          forbidden.push_back(r);
      if (!forbidden.empty()) {
        const mem::Region &r = *forbidden[rng_.below(forbidden.size())];
        note = std::string(b.operand) + " in '" + r.name + "'";
        return alignUp(r.base + b.lowBytes, align);
      }
    }
    if (code == mem::FaultCode::OutOfRegion) {
      // Across the end of a region, clear of the packet's other buffers (an
      // overlap would be found first).
      const auto clear = [&](uint64_t begin) {
        for (const Buffer &other : f.buffers)
          if (&other != &b && begin < other.begin() + other.bytes &&
              other.begin() < begin + b.bytes)
            return false;
        return true;
      };
      for (int attempt = 0; attempt < 32; ++attempt) {
        const Arena &a = arenas_[rng_.below(arenas_.size())];
        // Half of them by a single alignment step: a bound computed a step
        // short lets exactly these through.
        const uint64_t inside =
            rng_.percent(50) ? b.bytes - align : alignUp(1 + rng_.below(b.bytes - align), align);
        const uint64_t end = a.region.base + a.region.size;
        const uint64_t address = alignDown(end - inside + b.lowBytes, align);
        if (!clear(address - b.lowBytes))
          continue;
        note = std::string(b.operand) + " runs " +
               std::to_string(b.bytes - (end - (address - b.lowBytes))) +
               " bytes past the end of '" + a.region.name + "'";
        return address;
      }
    }
    // Unmapped: a gap of the address map large enough for the whole buffer.
    std::vector<std::pair<uint64_t, uint64_t>> gaps;
    uint64_t cursor = 0;
    for (const mem::Region *r : regions) {
      if (r->base > cursor)
        gaps.emplace_back(cursor, r->base - cursor);
      cursor = r->base + r->size;
    }
    if (cursor != 0)
      gaps.emplace_back(cursor, ~uint64_t(0) - cursor);
    std::vector<std::pair<uint64_t, uint64_t>> roomy;
    for (const auto &g : gaps)
      if (g.second > b.bytes + 2 * align + (1u << 20))
        roomy.push_back(g);
    const auto &[start, size] = roomy[rng_.below(roomy.size())];
    note = std::string(b.operand) + " in an unmapped gap";
    const uint64_t offset = rng_.below(std::min<uint64_t>(size - b.bytes - align, 1u << 20));
    return alignUp(start + b.lowBytes + offset, align);
  }

  // Places every buffer of the footprint, writing data segments for fresh
  // inputs.
  void place(Footprint &f, const Buffer *victim, bin::Object &object) {
    std::vector<Buffer *> order;
    for (Buffer &b : f.buffers)
      if (!b.writes())
        order.push_back(&b);
    for (Buffer &b : f.buffers)
      if (b.writes())
        order.push_back(&b);
    std::vector<const Buffer *> placed;
    for (Buffer *b : order) {
      if (b == victim)
        continue;
      b->address = chooseAddress(*b, f, placed, object);
      placed.push_back(b);
    }
    // A written buffer that ended up overlapping another buffer where the
    // ISA does not allow it gets fresh memory.
    for (Buffer *b : order) {
      if (b == victim || !b->writes())
        continue;
      for (const Buffer &other : f.buffers) {
        if (&other == b || &other == victim)
          continue;
        const bool identical = other.begin() == b->begin() && other.bytes == b->bytes;
        const bool overlapping =
            Block{b->begin(), b->bytes, b->content}.overlaps(other.begin(), other.bytes);
        if (overlapping && !(identical && f.inPlaceAllowed(b->operand, other.operand))) {
          b->address = fresh(*b, object);
          break;
        }
      }
    }
  }

  uint64_t chooseAddress(const Buffer &b, const Footprint &f,
                         const std::vector<const Buffer *> &placed, bin::Object &object) {
    const uint32_t align = alignOf(b.operand);
    const auto usable = [&](uint64_t begin, uint64_t bytes) {
      return bytes >= b.bytes && (begin + b.lowBytes) % align == 0;
    };
    if (b.writes()) {
      // In place, where the ISA allows it.
      if (rng_.percent(options_.aliasPercent))
        for (const Buffer *p : placed)
          if (f.inPlaceAllowed(b.operand, p->operand) && p->bytes == b.bytes &&
              p->lowBytes == b.lowBytes)
            return p->address;
      if (b.role == Role::Update && rng_.percent(options_.chainPercent))
        if (auto a = fromEarlier(b, usable))
          return *a;
      // Overwrite memory an earlier packet used.
      if (rng_.percent(20) && !written_.empty()) {
        const Block &blk = written_[rng_.below(written_.size())];
        if (usable(blk.begin, blk.bytes))
          return blk.begin + b.lowBytes;
      }
      return fresh(b, object);
    }
    if (b.content == Content::F32 || b.content == Content::Bytes) {
      // Two inputs on the same memory.
      if (rng_.percent(options_.aliasPercent))
        for (const Buffer *p : placed)
          if (!p->writes() && p->content == b.content && usable(p->begin(), p->bytes))
            return p->begin() + b.lowBytes;
      if (rng_.percent(options_.chainPercent))
        if (auto a = fromEarlier(b, usable))
          return *a;
    }
    return fresh(b, object);
  }

  template <class Usable> std::optional<uint64_t> fromEarlier(const Buffer &b, Usable usable) {
    // The most recent outputs first: an op's output feeds the next op.
    const size_t look = std::min<size_t>(written_.size(), 6);
    for (size_t i = 0; i < look; ++i) {
      const Block &blk = written_[written_.size() - 1 - i];
      const bool compatible = b.content == Content::Bytes || blk.content == b.content;
      if (compatible && usable(blk.begin, blk.bytes))
        return blk.begin + b.lowBytes;
    }
    return std::nullopt;
  }

  // Fresh memory in some data region, 64-byte aligned or only as aligned as
  // the operand requires, sometimes ending exactly at the region's end.
  uint64_t fresh(const Buffer &b, bin::Object &object) {
    const uint64_t align = alignOf(b.operand);
    for (int attempt = 0; attempt < 8; ++attempt) {
      Arena &arena = arenas_[rng_.below(arenas_.size())];
      uint64_t address;
      if (rng_.percent(6)) {
        if (arena.top - arena.bottom < b.bytes + 128)
          continue;
        address = alignDown(arena.top - b.bytes + b.lowBytes, align);
        if (address - b.lowBytes < arena.bottom)
          continue;
        arena.top = address - b.lowBytes;
      } else {
        uint64_t offset = 0;
        const uint64_t pick = rng_.below(100);
        if (pick >= 60 && align < 64)
          offset = align * (1 + rng_.below(64 / align - 1)); // aligned as required, not to a line
        if (pick >= 90 && align < 4)
          offset = 1 + rng_.below(63); // byte-aligned
        address = alignUp(arena.bottom + b.lowBytes, 64) + offset;
        if (address - b.lowBytes + b.bytes + 128 > arena.top)
          continue;
        // A gap after each buffer keeps overruns visible.
        arena.bottom = address - b.lowBytes + b.bytes + rng_.below(96);
      }
      fillInitial(b, address, object);
      return address;
    }
    throw std::runtime_error("npu-randgen: the data regions are full (seed " +
                             std::to_string(options_.seed) + "); use a shorter stream");
  }

  // An index in range: [0, limit), or [-limit, limit) with wrap.
  int64_t legalIndex(const Buffer &b) {
    const int64_t limit = static_cast<int64_t>(b.indexLimit);
    return b.indexWrap ? static_cast<int64_t>(rng_.below(2 * b.indexLimit)) - limit
                       : static_cast<int64_t>(rng_.below(b.indexLimit));
  }

  void fillInitial(const Buffer &b, uint64_t address, bin::Object &object) {
    if (b.role == Role::Write || b.bytes == 0)
      return;
    bin::DataSegment seg;
    seg.address = address - b.lowBytes;
    seg.bytes.resize(b.bytes);
    auto put32 = [&](size_t at, uint32_t v) { std::memcpy(seg.bytes.data() + at, &v, 4); };
    switch (b.content) {
    case Content::Bytes:
      for (uint8_t &x : seg.bytes)
        x = static_cast<uint8_t>(rng_.next());
      break;
    case Content::F32:
      for (size_t i = 0; i + 4 <= seg.bytes.size(); i += 4)
        put32(i, randomFloat(rng_, options_.specialPercent));
      break;
    case Content::Index32:
      for (size_t i = 0; i + 4 <= seg.bytes.size(); i += 4)
        put32(i, static_cast<uint32_t>(legalIndex(b)));
      break;
    case Content::Index64:
      for (size_t i = 0; i + 8 <= seg.bytes.size(); i += 8) {
        const int64_t v = legalIndex(b);
        std::memcpy(seg.bytes.data() + i, &v, 8);
      }
      break;
    case Content::Hyper: {
      // lr, beta1, beta2, eps, weight_decay, bias_correction1, sqrt(bias_correction2), 0
      const float typical[8] = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.1f, 0.03f, 0.0f};
      for (int i = 0; i < 8; ++i) {
        const float scale = static_cast<float>(1 + rng_.below(9)) / 4.0f;
        const uint32_t v = i < 7 && rng_.percent(options_.specialPercent)
                               ? randomFloat(rng_, 100)
                               : floatBits(typical[i] * (i == 7 ? 0.0f : scale));
        put32(4 * static_cast<size_t>(i), v);
      }
      break;
    }
    }
    object.data.push_back(std::move(seg));
  }

  // The devices check every range against the region table before the
  // overlap rules, so an overlapping buffer must stay in accessible memory.
  bool insideOneArena(uint64_t begin, uint64_t bytes) const {
    return std::any_of(arenas_.begin(), arenas_.end(), [&](const Arena &a) {
      return a.region.contains(begin) && bytes <= a.region.size - (begin - a.region.base);
    });
  }

  // Moves a buffer so that it partly overlaps a written one (or coincides
  // with it where the ISA allows no in-place form).
  bool makeOverlap(isa::Instruction &inst, Footprint &f, std::string &note) {
    std::vector<std::pair<Buffer *, Buffer *>> pairs;
    for (Buffer &w : f.buffers)
      if (w.writes())
        for (Buffer &o : f.buffers)
          if (&o != &w)
            pairs.emplace_back(&w, &o);
    while (!pairs.empty()) {
      const size_t i = rng_.below(pairs.size());
      auto [w, o] = pairs[i];
      pairs.erase(pairs.begin() + static_cast<std::ptrdiff_t>(i));
      const uint64_t align = alignOf(o->operand);
      const uint64_t wEnd = w->begin() + w->bytes;
      // Exactly on w, somewhere inside it, on its last bytes only, or ending
      // on its first bytes only: the edges catch an extent that is off by
      // one element in either model's overlap check.
      uint64_t address;
      switch (rng_.below(4)) {
      case 0: address = alignUp(w->begin() + o->lowBytes, align); break;
      case 1: address = alignUp(w->begin() + rng_.below(w->bytes) + o->lowBytes, align); break;
      case 2: address = alignDown(wEnd - 1 + o->lowBytes, align); break;
      default:
        if (w->begin() + 1 < o->bytes)
          continue;
        address = alignUp(w->begin() + 1 - o->bytes + o->lowBytes, align);
        break;
      }
      const uint64_t begin = address - o->lowBytes;
      const bool identical = begin == w->begin() && o->bytes == w->bytes;
      const bool overlapping = begin < w->begin() + w->bytes && w->begin() < begin + o->bytes;
      if (!overlapping || !insideOneArena(begin, o->bytes) ||
          (identical &&
           (f.inPlaceAllowed(w->operand, o->operand) || f.inPlaceAllowed(o->operand, w->operand))))
        continue;
      o->address = address;
      const isa::InstrInfo &info = isa::info(inst.opcode);
      inst.operands[info.operandIndex(o->operand)] = o->address;
      note = std::string(o->operand) + " overlaps " + w->operand +
             (identical ? std::string(" exactly")
                        : " from " + std::to_string(static_cast<int64_t>(begin - w->begin())));
      return true;
    }
    return false;
  }

  // A batch of matrices that must not overlap one another (BMM's C) placed
  // closer than one matrix apart: the engines check this before the region
  // table, on the view alone. Only batches of two or more, whose extent
  // shrinks with the stride, so no other check comes first.
  bool overlapBatches(isa::Instruction &inst, std::string &note) {
    const isa::InstrInfo &info = isa::info(inst.opcode);
    std::vector<const isa::MemOperandInfo *> batches;
    for (const isa::MemOperandInfo &m : info.memoryList())
      if (m.kind == isa::ExtentKind::Matrix && m.distinct && m.batch >= 0 && m.batchStride >= 0 &&
          inst.operands[m.batch] > 1)
        batches.push_back(&m);
    if (batches.empty())
      return false;
    const isa::MemOperandInfo &m = *rng_.pick(batches);
    const uint64_t matrix = inst.operands[m.rows] * inst.operands[m.cols];
    const isa::OperandInfo &stride = info.operands[m.batchStride];
    const uint64_t least =
        stride.hasRange ? static_cast<uint64_t>(std::max<int64_t>(stride.min, 0)) : 0;
    if (matrix <= least)
      return false;
    isa::Instruction closer = inst;
    closer.operands[m.batchStride] = least + rng_.below(matrix - least);
    isa::Packet candidate;
    isa::encode(closer, candidate);
    sim::OperandRanges ranges;
    const sim::FaultFacts facts = sim::checkPacket(candidate, map_, ranges);
    if (facts.code != mem::FaultCode::Overlap || facts.operand != m.operand ||
        facts.otherOperand != m.operand)
      return false;
    inst = closer;
    note = std::string(info.operands[m.operand].name) + "'s matrices overlap (" + stride.name +
           " = " + std::to_string(closer.operands[m.batchStride]) + ")";
    return true;
  }

  bool corruptIndex(const Footprint &f, bin::Object &object, std::string &note) {
    for (const Buffer &b : f.buffers) {
      if (b.content != Content::Index32 && b.content != Content::Index64)
        continue;
      // The index buffer's data segment starts at its address (a chained
      // index buffer has none; indices are always fresh).
      for (bin::DataSegment &seg : object.data) {
        if (seg.address != b.begin())
          continue;
        const size_t width = b.content == Content::Index64 ? 8 : 4;
        const size_t count = seg.bytes.size() / width;
        const size_t at = rng_.below(count);
        const int64_t low = b.indexWrap ? -static_cast<int64_t>(b.indexLimit) : 0;
        const int64_t bad = rng_.percent(50) ? static_cast<int64_t>(b.indexLimit + rng_.below(3))
                                             : low - 1 - static_cast<int64_t>(rng_.below(3));
        std::memcpy(seg.bytes.data() + at * width, &bad, width);
        note = "index " + std::to_string(bad) + " at position " + std::to_string(at);
        return true;
      }
    }
    return false;
  }

  static void setBits(isa::Packet &packet, unsigned offset, unsigned width, uint64_t value) {
    for (unsigned i = 0; i < width; ++i) {
      const unsigned bit = offset + i;
      const uint8_t mask = static_cast<uint8_t>(1u << (bit % 8));
      packet[bit / 8] =
          static_cast<uint8_t>((value >> i) & 1 ? packet[bit / 8] | mask : packet[bit / 8] & ~mask);
    }
  }

  // An operand outside the range the table gives it (a size of 0, an enum
  // value that names nothing).
  bool breakRange(const isa::Instruction &inst, isa::Packet &packet, std::string &note) {
    if (rng_.percent(75) && reachBelowZero(inst, packet, note))
      return true;
    if (rng_.percent(50) && overflowExtent(inst, packet, note))
      return true;
    const std::vector<rules::OutOfRange> values = rules::outOfRangeValues(isa::info(inst.opcode));
    if (values.empty())
      return false;
    const rules::OutOfRange &v = values[rng_.below(values.size())];
    setBits(packet, v.op->bitOffset, v.op->bitWidth, v.raw);
    note = std::string(v.op->name) + " = " + std::to_string(isa::operandValue(*v.op, v.raw)) +
           " is out of range";
    return true;
  }

  // A strided view whose negative stride reaches below address 0, which
  // makes the operand invalid: the view's sign and magnitude arithmetic is
  // where an engine's check goes wrong, so three quarters of the strides are
  // past 2^30 in magnitude (their bit 30 differs from the sign bit).
  bool reachBelowZero(const isa::Instruction &inst, isa::Packet &packet, std::string &note) {
    constexpr uint64_t kMostNegative = uint64_t(1) << 31;
    const isa::InstrInfo &info = isa::info(inst.opcode);
    struct Choice {
      const isa::MemOperandInfo *view;
      int dimension;
      uint64_t least; // the least stride magnitude that reaches below 0
    };
    std::vector<Choice> choices;
    for (const isa::MemOperandInfo &m : info.memoryList()) {
      if (m.kind != isa::ExtentKind::Strided || (m.when >= 0 && inst.operands[m.when] == 0))
        continue;
      const uint64_t elements = inst.operands[m.operand] >> inst.operands[m.esize];
      for (int d = 0; d < 4; ++d) {
        const uint64_t size = inst.operands[m.sizes[d]];
        const isa::OperandInfo &stride = info.operands[m.strides[d]];
        const uint64_t least = size < 2 ? 0 : elements / (size - 1) + 1;
        if (least && least <= kMostNegative && (!stride.hasRange || stride.min <= -int64_t(least)))
          choices.push_back({&m, d, least});
      }
    }
    if (choices.empty())
      return false;
    const Choice &c = rng_.pick(choices);
    const isa::OperandInfo &stride = info.operands[c.view->strides[c.dimension]];
    const uint64_t most =
        stride.hasRange ? std::min<uint64_t>(kMostNegative, -stride.min) : kMostNegative;
    uint64_t least = c.least;
    if (rng_.percent(75) && most > (uint64_t(1) << 30))
      least = std::max<uint64_t>(least, (uint64_t(1) << 30) + 1);
    const uint64_t magnitude = least + rng_.below(most - least + 1);
    setBits(packet, stride.bitOffset, stride.bitWidth, (~magnitude + 1) & rules::slotMax(stride));
    note = std::string(info.operands[c.view->operand].name) + " reaches below address 0 (" +
           stride.name + " = -" + std::to_string(magnitude) + ")";
    return true;
  }

  // The victim of an out-of-region fault, a strided view, runs far past its
  // region on a positive stride of more than 2^30 elements: bit 30 of such
  // a stride is set and its sign bit clear, so an engine that takes the sign
  // or the magnitude from the wrong bit reports a different range.
  void stretchStride(isa::Instruction &inst, const Buffer &victim, std::string &note) {
    constexpr int64_t kHuge = int64_t(1) << 30;
    const isa::InstrInfo &info = isa::info(inst.opcode);
    std::vector<std::pair<const isa::MemOperandInfo *, int>> choices;
    for (const isa::MemOperandInfo &m : info.memoryList())
      if (m.kind == isa::ExtentKind::Strided && info.operands[m.operand].name == victim.operand)
        for (int d = 0; d < 4; ++d) {
          const isa::OperandInfo &stride = info.operands[m.strides[d]];
          if (inst.operands[m.sizes[d]] > 1 && (!stride.hasRange || stride.max > kHuge))
            choices.emplace_back(&m, d);
        }
    if (choices.empty())
      return;
    const auto [view, d] = rng_.pick(choices);
    const isa::OperandInfo &stride = info.operands[view->strides[d]];
    const int64_t most = stride.hasRange ? std::min<int64_t>(stride.max, INT32_MAX) : INT32_MAX;
    isa::Instruction stretched = inst;
    const int64_t value = kHuge + 1 + static_cast<int64_t>(rng_.below(most - kHuge));
    stretched.operands[view->strides[d]] = rawOf(stride, value);
    isa::Packet candidate;
    isa::encode(stretched, candidate);
    sim::OperandRanges ranges;
    const sim::FaultFacts facts = sim::checkPacket(candidate, map_, ranges);
    if (facts.code != mem::FaultCode::OutOfRegion || facts.operand != view->operand)
      return;
    inst = stretched;
    note += " (" + std::string(stride.name) + " = " + std::to_string(value) + ")";
  }

  // Sizes so large that a memory operand's extent does not fit in 64 bits,
  // which makes the operand invalid: the engines compute extents in words
  // wider than their operands, and a lost carry there would let a wrapped
  // range through. Taken only where the ISS's checks fault that way first.
  bool overflowExtent(const isa::Instruction &inst, isa::Packet &packet, std::string &note) {
    const isa::InstrInfo &info = isa::info(inst.opcode);
    std::vector<uint32_t> sizes;
    for (uint32_t i = 0; i < info.numOperands; ++i)
      if (rules::isDimension(info.operands[i]))
        sizes.push_back(i);
    // Half the time only a batch and its stride grow, past 64 bits together
    // while each matrix stays small: the batch's own overflow check.
    std::vector<const isa::MemOperandInfo *> batched;
    for (const isa::MemOperandInfo &m : info.memoryList())
      if (m.kind == isa::ExtentKind::Matrix && m.batch >= 0 && m.batchStride >= 0)
        batched.push_back(&m);
    if (!batched.empty() && rng_.percent(50)) {
      const isa::MemOperandInfo &m = *rng_.pick(batched);
      sizes = {static_cast<uint32_t>(m.batch), static_cast<uint32_t>(m.batchStride)};
    }
    for (int attempt = 0; attempt < 8 && !sizes.empty(); ++attempt) {
      isa::Instruction large = inst;
      for (uint32_t i : sizes) {
        const isa::OperandInfo &op = info.operands[i];
        const uint64_t most = op.hasRange ? static_cast<uint64_t>(op.max) : rules::slotMax(op);
        if (rng_.percent(60))
          large.operands[i] = most - rng_.below(most / 2 + 1);
      }
      isa::Packet candidate;
      isa::encode(large, candidate);
      sim::OperandRanges ranges;
      const sim::FaultFacts facts = sim::checkPacket(candidate, map_, ranges);
      if (facts.code != mem::FaultCode::InvalidOperand || facts.operand < 0 ||
          info.operands[facts.operand].kind != isa::OperandKind::Addr)
        continue;
      packet = candidate;
      note = std::string(info.operands[facts.operand].name) + "'s extent does not fit in 64 bits";
      return true;
    }
    return false;
  }

  bool misalign(const isa::Instruction &inst, isa::Packet &packet, std::string &note) {
    const isa::InstrInfo &info = isa::info(inst.opcode);
    const std::vector<uint32_t> candidates = rules::misalignableOperands(info);
    if (candidates.empty())
      return false;
    const uint32_t i = candidates[rng_.below(candidates.size())];
    const isa::OperandInfo &op = info.operands[i];
    setBits(packet, op.bitOffset, op.bitWidth, inst.operands[i] + 1 + rng_.below(op.align - 1));
    note = std::string(op.name) + " misaligned for its " + std::to_string(op.align) +
           "-byte alignment";
    return true;
  }

  void setReservedBit(const isa::Instruction &inst, isa::Packet &packet, std::string &note) {
    const std::vector<unsigned> reserved = rules::reservedBits(isa::info(inst.opcode));
    const unsigned bit = reserved[rng_.below(reserved.size())];
    packet[bit / 8] = static_cast<uint8_t>(packet[bit / 8] | (1u << (bit % 8)));
    note = "reserved bit " + std::to_string(bit);
  }

  void unknownOpcode(isa::Packet &packet, PacketIntent &intent) {
    uint32_t word;
    do
      word = rng_.percent(50) ? static_cast<uint32_t>(rng_.below(256))
                              : static_cast<uint32_t>(rng_.next());
    while (isa::findOpcode(word));
    setBits(packet, 0, 32, word);
    intent.opcodeWord = word;
    intent.note = "opcode " + std::to_string(word);
  }

  const GeneratorOptions &options_;
  Rng rng_;
  Rng scalarRng_; // drawOperands' `scalars`
  mem::AddressMap map_;
  std::vector<Arena> arenas_;
  std::vector<isa::Opcode> mix_;
  std::vector<mem::FaultCode> faultClasses_;
  std::vector<Block> written_;
  isa::Opcode current_ = isa::Opcode::NOP; // of the packet being built
};

} // namespace

bool shrinkOperand(isa::Instruction &inst, size_t rank, uint64_t keepMask) {
  const isa::InstrInfo &info = isa::info(inst.opcode);
  const auto magnitude = [&](const isa::Instruction &x, uint32_t i) {
    const int64_t v = isa::operandValue(info.operands[i], x.operands[i]);
    return v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
  };
  std::vector<uint32_t> candidates;
  for (uint32_t i = 0; i < info.numOperands; ++i)
    if (rules::isSizeLike(info.operands[i]) && magnitude(inst, i) > 1 && !(keepMask >> i & 1))
      candidates.push_back(i);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](uint32_t a, uint32_t b) { return magnitude(inst, a) > magnitude(inst, b); });
  // The rank-th largest operand, or the next one whose halving legalise()
  // does not undo (a pitch halved below its row is raised back to it).
  if (candidates.empty())
    return false;
  std::rotate(candidates.begin(),
              candidates.begin() + static_cast<std::ptrdiff_t>(rank % candidates.size()),
              candidates.end());
  for (uint32_t i : candidates) {
    const isa::OperandInfo &op = info.operands[i];
    isa::Instruction halved = inst;
    halved.operands[i] = rawOf(op, clampToRange(op, isa::operandValue(op, inst.operands[i]) / 2));
    legalise(halved);
    if (magnitude(halved, i) < magnitude(inst, i)) {
      inst = halved;
      return true;
    }
  }
  return false;
}

Stream generate(const GeneratorOptions &options) {
  StreamBuilder builder(options);
  Stream stream = builder.build();
  bin::Object &object = stream.object;
  object.metadata.emplace_back("producer", "npu-randgen");
  object.metadata.emplace_back("generator-arguments", optionsArguments(options));
  return stream;
}

std::string optionsArguments(const GeneratorOptions &options) {
  std::string text = "--seed " + std::to_string(options.seed) + " --packets " +
                     std::to_string(options.packets) + " --fault-percent " +
                     std::to_string(options.faultPercent);
  const auto list = [&](const char *flag, const auto &items, auto name) {
    if (items.empty())
      return;
    text += std::string(" ") + flag + " ";
    for (size_t i = 0; i < items.size(); ++i)
      text += (i ? "," : "") + std::string(name(items[i]));
  };
  list("--faults", options.faultClasses, [](mem::FaultCode c) { return mem::faultCodeName(c); });
  list("--opcodes", options.opcodes, [](isa::Opcode o) { return isa::info(o).mnemonic; });
  const GeneratorOptions defaults;
  const auto percent = [&](const char *flag, uint32_t value, uint32_t standard) {
    if (value != standard)
      text += std::string(" ") + flag + " " + std::to_string(value);
  };
  percent("--large-percent", options.largePercent, defaults.largePercent);
  percent("--pair-percent", options.pairPercent, defaults.pairPercent);
  percent("--chain-percent", options.chainPercent, defaults.chainPercent);
  percent("--alias-percent", options.aliasPercent, defaults.aliasPercent);
  percent("--special-percent", options.specialPercent, defaults.specialPercent);
  return text;
}

std::vector<mem::FaultCode> injectableFaults() {
  using mem::FaultCode;
  return {FaultCode::Unmapped,     FaultCode::Permission,     FaultCode::OutOfRegion,
          FaultCode::Misaligned,   FaultCode::InvalidOperand, FaultCode::UnknownOpcode,
          FaultCode::ReservedBits, FaultCode::Overlap,        FaultCode::IndexOutOfRange};
}

mem::FaultCode parseFaultClass(const std::string &name) {
  std::string valid;
  for (mem::FaultCode code : injectableFaults()) {
    if (name == mem::faultCodeName(code))
      return code;
    valid += std::string(valid.empty() ? "" : ", ") + mem::faultCodeName(code);
  }
  throw std::invalid_argument("unknown fault class '" + name + "' (valid: " + valid + ")");
}

} // namespace npu::verify
