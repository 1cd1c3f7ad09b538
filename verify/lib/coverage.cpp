#include "npu/verify/coverage.h"

#include "npu/mem/address_map.h"
#include "npu/sim/checks.h"
#include "npu/verify/classes.h"
#include "table_rules.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace npu::verify {

namespace {


std::string aliasName(const std::string &a, const std::string &b) {
  return "alias/" + a + "=" + b;
}

// What the footprints of all modes of an instruction have in common or
// not: the union of in-place pairs and coinciding inputs, the address
// operands some mode leaves unused.
struct FootprintUnion {
  std::set<std::pair<std::string, std::string>> aliases;
  std::set<std::string> unusedOperands;
  bool buffers = false, reads = false, writtenAndOther = false, f32Inputs = false, indices = false;
};

FootprintUnion footprintUnion(const isa::InstrInfo &info) {
  FootprintUnion u;
  for (const isa::Instruction &inst : rules::modeInstances(info)) {
    const Footprint f = footprintOf(inst);
    u.buffers |= !f.buffers.empty();
    u.writtenAndOther |=
        f.buffers.size() >= 2 &&
        std::any_of(f.buffers.begin(), f.buffers.end(), [](const Buffer &b) { return b.writes(); });
    for (const auto &[w, r] : f.inPlace)
      u.aliases.emplace(w, r);
    for (size_t i = 0; i < f.buffers.size(); ++i) {
      const Buffer &b = f.buffers[i];
      u.reads |= b.reads();
      u.f32Inputs |= b.reads() && b.content == Content::F32;
      u.indices |= b.content == Content::Index32 || b.content == Content::Index64;
      for (size_t j = i + 1; j < f.buffers.size(); ++j) {
        const Buffer &c = f.buffers[j];
        if (b.role == Role::Read && c.role == Role::Read && b.content == Content::F32 &&
            c.content == Content::F32)
          u.aliases.emplace(b.operand, c.operand);
      }
    }
    for (const isa::OperandInfo &op : info.operandList())
      if (op.kind == isa::OperandKind::Addr && !f.find(op.name))
        u.unusedOperands.insert(op.name);
  }
  return u;
}

uint64_t fnv1a(const std::string &text, uint64_t hash) {
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

} // namespace

CoverageModel::CoverageModel() {
  const std::vector<mem::Region> regions = dataRegions();
  for (const isa::InstrInfo &info : isa::instructions()) {
    const std::string group = info.mnemonic;
    const auto add = [&](const std::string &name, mem::FaultCode fault = mem::FaultCode::None) {
      bins_.push_back({group + "/" + name, group, fault});
    };
    add("executed");
    const bool crossed = rules::modesAreCrossed(info);
    std::set<std::string> modes;
    for (const isa::Instruction &inst : rules::modeInstances(info)) {
      if (crossed) {
        modes.insert(rules::modeName(info, inst));
        continue;
      }
      for (uint32_t i = 0; i < info.numOperands; ++i)
        if (rules::isMode(info.operands[i]))
          modes.insert(rules::modeName(info, inst, static_cast<int>(i)));
    }
    for (const std::string &mode : modes)
      if (!mode.empty())
        add("mode/" + mode);
    for (const isa::OperandInfo &op : info.operandList()) {
      if (rules::isDimension(op))
        for (ShapeClass c : {ShapeClass::One, ShapeClass::TileMinus1, ShapeClass::Tile,
                             ShapeClass::TilePlus1, ShapeClass::Prime, ShapeClass::Large})
          add("shape/" + std::string(op.name) + "=" + shapeClassName(c));
    }
    const FootprintUnion u = footprintUnion(info);
    for (const isa::OperandInfo &op : info.operandList()) {
      if (op.kind != isa::OperandKind::Addr)
        continue;
      std::vector<AlignClass> classes{AlignClass::Line};
      if (op.align > 4 && op.align < 64)
        classes.push_back(AlignClass::Operand);
      if (op.align <= 4)
        classes.push_back(AlignClass::Word);
      if (op.align == 1)
        classes.push_back(AlignClass::Byte);
      for (AlignClass c : classes)
        add("align/" + std::string(op.name) + "=" + alignClassName(c));
    }
    if (u.buffers) {
      for (const mem::Region &r : regions)
        add("region/" + r.name);
      add("edge/region-end");
    }
    if (u.reads)
      add("chain");
    for (const auto &[a, b] : u.aliases)
      add(aliasName(a, b));
    for (const std::string &operand : u.unusedOperands)
      add("unused/" + operand);
    if (u.f32Inputs)
      for (int c = 0; c < kValueClasses; ++c)
        if (static_cast<ValueClass>(c) != ValueClass::Normal)
          add(std::string("value/") + valueClassName(static_cast<ValueClass>(c)));
    for (const isa::OperandInfo &op : info.operandList())
      if (op.kind == isa::OperandKind::F32)
        for (int c = 0; c < kValueClasses; ++c)
          if (static_cast<ValueClass>(c) != ValueClass::Normal)
            add("scalar/" + std::string(op.name) + "=" +
                valueClassName(static_cast<ValueClass>(c)));
    using mem::FaultCode;
    const auto fault = [&](FaultCode code) {
      add(std::string("fault/") + mem::faultCodeName(code), code);
    };
    if (!rules::reservedBits(info).empty())
      fault(FaultCode::ReservedBits);
    if (!rules::outOfRangeValues(info).empty())
      fault(FaultCode::InvalidOperand);
    if (!rules::misalignableOperands(info).empty())
      fault(FaultCode::Misaligned);
    if (u.buffers) {
      fault(FaultCode::Unmapped);
      fault(FaultCode::Permission);
      fault(FaultCode::OutOfRegion);
    }
    if (u.writtenAndOther)
      fault(FaultCode::Overlap);
    if (u.indices)
      fault(FaultCode::IndexOutOfRange);
  }
  bins_.push_back({"any/fault/unknown-opcode", "any", mem::FaultCode::UnknownOpcode});

  digest_ = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bins_.size(); ++i) {
    index_.emplace_back(bins_[i].name, i);
    digest_ = fnv1a(bins_[i].name + "\n", digest_);
  }
  std::sort(index_.begin(), index_.end());
}

const CoverageModel &CoverageModel::instance() {
  static const CoverageModel model;
  return model;
}

std::optional<size_t> CoverageModel::find(const std::string &name) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(name, size_t(0)));
  if (it == index_.end() || it->first != name)
    return std::nullopt;
  return it->second;
}

void Coverage::hit(const std::string &name) {
  const auto index = CoverageModel::instance().find(name);
  if (!index)
    throw std::logic_error("coverage: sampled bin '" + name + "' is not in the model");
  hits_[*index]++;
}

void Coverage::merge(const Coverage &other) {
  for (size_t i = 0; i < hits_.size(); ++i)
    hits_[i] += other.hits_[i];
}

void Coverage::sample(const PacketSample &s) {
  const uint32_t opcodeWord = isa::detail::load32(s.packet.data(), 0);
  const isa::InstrInfo *info = isa::findOpcode(opcodeWord);
  if (!info) {
    if (s.outcome == mem::FaultCode::UnknownOpcode)
      hit("any/fault/unknown-opcode");
    return;
  }
  const std::string group = std::string(info->mnemonic) + "/";
  if (s.outcome != mem::FaultCode::None) {
    // A fault the model does not expect of this instruction is a finding
    // of its own (the runner compares outcomes with the generator's
    // intent); it has no bin.
    if (const auto index =
            CoverageModel::instance().find(group + "fault/" + mem::faultCodeName(s.outcome)))
      hits_[*index]++;
    return;
  }
  isa::Instruction inst;
  if (!isa::decode(s.packet, inst))
    return;
  hit(group + "executed");
  if (rules::modesAreCrossed(*info)) {
    const std::string mode = rules::modeName(*info, inst);
    if (!mode.empty())
      hit(group + "mode/" + mode);
  } else {
    for (uint32_t i = 0; i < info->numOperands; ++i)
      if (rules::isMode(info->operands[i]))
        hit(group + "mode/" + rules::modeName(*info, inst, static_cast<int>(i)));
  }
  for (uint32_t i = 0; i < info->numOperands; ++i) {
    const isa::OperandInfo &op = info->operands[i];
    if (rules::isDimension(op)) {
      const ShapeClass c = shapeClass(inst.operands[i]);
      if (c != ShapeClass::Other)
        hit(group + "shape/" + op.name + "=" + shapeClassName(c));
    }
    if (op.kind == isa::OperandKind::F32) {
      const ValueClass c = valueClass(static_cast<uint32_t>(inst.operands[i]));
      if (c != ValueClass::Normal)
        hit(group + "scalar/" + op.name + "=" + valueClassName(c));
    }
  }

  const Footprint f = footprintOf(inst);
  static const std::vector<mem::Region> regions = dataRegions();
  for (uint32_t i = 0; i < info->numOperands; ++i) {
    const isa::OperandInfo &op = info->operands[i];
    if (op.kind != isa::OperandKind::Addr)
      continue;
    if (!f.find(op.name)) {
      if (inst.operands[i] != 0)
        hit(group + "unused/" + op.name);
      continue;
    }
    hit(group + "align/" + op.name + "=" + alignClassName(alignClass(inst.operands[i], op.align)));
  }
  bool chained = false;
  for (size_t i = 0; i < f.buffers.size(); ++i) {
    const Buffer &b = f.buffers[i];
    for (const mem::Region &r : regions) {
      if (!r.contains(b.begin()))
        continue;
      hit(group + "region/" + r.name);
      if (b.begin() + b.bytes == r.base + r.size)
        hit(group + "edge/region-end");
    }
    if (b.reads() && s.previousWrites)
      for (const auto &[address, bytes] : *s.previousWrites)
        chained |= b.begin() < address + bytes && address < b.begin() + b.bytes;
    for (size_t j = 0; j < f.buffers.size(); ++j) {
      const Buffer &c = f.buffers[j];
      if (i != j && b.begin() == c.begin())
        if (const auto index =
                CoverageModel::instance().find(group + aliasName(b.operand, c.operand)))
          if (i < j || b.writes())
            hits_[*index]++;
    }
  }
  if (chained)
    hit(group + "chain");
  for (int c = 0; c < kValueClasses; ++c)
    if ((s.inputValues >> c) & 1 && static_cast<ValueClass>(c) != ValueClass::Normal)
      hit(group + "value/" + valueClassName(static_cast<ValueClass>(c)));
}

uint32_t inputValueClasses(std::span<const uint8_t, isa::kPacketBytes> packet,
                           const mem::AddressMap &map, const MemoryReader &read) {
  isa::Instruction inst;
  sim::OperandRanges ranges;
  if (!isa::decode(packet, inst) || sim::checkPacket(packet, map, ranges).code != mem::FaultCode::None)
    return 0;
  uint32_t classes = 0;
  std::vector<uint32_t> words;
  for (const Buffer &b : footprintOf(inst).buffers) {
    if (!b.reads() || b.content != Content::F32)
      continue;
    words.resize(b.bytes / 4);
    try {
      read(b.begin(), words.data(), words.size() * 4);
    } catch (const mem::DeviceFault &) {
      continue;
    }
    for (uint32_t w : words)
      classes |= 1u << static_cast<int>(valueClass(w));
  }
  return classes;
}

} // namespace npu::verify
