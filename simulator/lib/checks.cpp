#include "npu/sim/checks.h"

#include "npu/mem/hex.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace npu::sim {

namespace {

using u128 = unsigned __int128;
constexpr u128 kAddressSpace = u128(1) << 64;

mem::FaultCode decodeFaultCode(isa::DecodeError error) {
  switch (error) {
  case isa::DecodeError::UnknownOpcode: return mem::FaultCode::UnknownOpcode;
  case isa::DecodeError::ReservedBits: return mem::FaultCode::ReservedBits;
  case isa::DecodeError::Misaligned: return mem::FaultCode::Misaligned;
  case isa::DecodeError::OutOfRange:
  case isa::DecodeError::BadEnum:
  case isa::DecodeError::None: break;
  }
  return mem::FaultCode::InvalidOperand;
}

// An extent, or the fault that stops computing it.
struct Extent {
  FaultFacts fault; // code None when the extent is valid
  uint64_t start = 0, bytes = 0;
};

FaultFacts invalid(int operand, uint64_t address) {
  return {.code = mem::FaultCode::InvalidOperand, .operand = operand, .address = address};
}

// The operand values of a decoded packet, by operand index.
class OperandValues {
public:
  explicit OperandValues(const isa::Instruction &inst) : inst_(inst) {}
  const isa::Instruction &instruction() const { return inst_; }
  uint64_t raw(int operand) const { return inst_.operands[operand]; }
  // The value of an optional reference (-1: absent).
  uint64_t rawOr(int operand, uint64_t absent) const { return operand < 0 ? absent : raw(operand); }
  int64_t signedValue(const isa::InstrInfo &info, int operand) const {
    return isa::operandValue(info.operands[operand], raw(operand));
  }

private:
  const isa::Instruction &inst_;
};

Extent productExtent(const isa::InstrInfo &info, const isa::MemOperandInfo &m,
                     const OperandValues &p, uint64_t address) {
  const isa::ProductInfo &choice = m.choices[m.selector < 0 ? 0 : p.raw(m.selector)];
  u128 bytes = u128(1) << isa::elementLog2(info, choice, p.instruction());
  for (int8_t factor : choice.factors) {
    if (factor < 0)
      continue;
    bytes *= p.raw(factor); // below 2^64 before, so below 2^96 now
    if (bytes >= kAddressSpace)
      return {invalid(m.operand, address)};
  }
  return {{}, address, static_cast<uint64_t>(bytes)};
}

// The check order of base.td's MatrixExtent: the pitch, one matrix's
// extent, consecutive matrices apart, the whole batch's extent.
Extent matrixExtent(const isa::InstrInfo &info, const isa::MemOperandInfo &m,
                    const OperandValues &p, uint64_t address) {
  const bool transposed = p.rawOr(m.trans, 0) != 0;
  const uint64_t rows = p.raw(transposed ? m.cols : m.rows);
  const uint64_t cols = p.raw(transposed ? m.rows : m.cols);
  const uint64_t pitch = p.rawOr(m.pitch, 0) != 0 ? p.raw(m.pitch) : cols;
  if (pitch < cols)
    return {{.code = mem::FaultCode::InvalidOperand, .operand = m.pitch, .length = cols}};
  const unsigned elemLog2 = isa::elementLog2(info, m, p.instruction());
  const u128 one = (u128(rows - 1) * pitch + cols) << elemLog2;
  if (one >= kAddressSpace)
    return {invalid(m.operand, address)};
  const uint64_t batch = p.rawOr(m.batch, 1);
  const u128 apart = u128(p.rawOr(m.batchStride, 0)) << elemLog2;
  if (m.distinct && batch > 1 && apart < one)
    return {{.code = mem::FaultCode::Overlap,
             .operand = m.operand,
             .otherOperand = m.operand,
             .address = static_cast<uint64_t>(address + apart),
             .length = static_cast<uint64_t>(one - apart)}};
  const u128 bytes = one + u128(batch - 1) * apart;
  if (bytes >= kAddressSpace)
    return {invalid(m.operand, address)};
  return {{}, address, static_cast<uint64_t>(bytes)};
}

// From the lowest to the highest element of the view.
Extent stridedExtent(const isa::InstrInfo &info, const isa::MemOperandInfo &m,
                     const OperandValues &p, uint64_t address) {
  u128 below = 0, above = 0; // elements below and above the address
  for (int d = 0; d < 4; ++d) {
    const int64_t stride = p.signedValue(info, m.strides[d]);
    const u128 reach =
        u128(p.raw(m.sizes[d]) - 1) * static_cast<uint64_t>(stride < 0 ? -stride : stride);
    (stride < 0 ? below : above) += reach;
  }
  const unsigned elemLog2 = static_cast<unsigned>(p.raw(m.esize));
  const u128 belowBytes = below << elemLog2;
  const u128 bytes = (below + above + 1) << elemLog2;
  if (belowBytes > address || bytes >= kAddressSpace)
    return {invalid(m.operand, address)};
  return {{}, address - static_cast<uint64_t>(belowBytes), static_cast<uint64_t>(bytes)};
}

Extent extentOf(const isa::InstrInfo &info, const isa::MemOperandInfo &m, const OperandValues &p,
                uint64_t address) {
  switch (m.kind) {
  case isa::ExtentKind::Product: return productExtent(info, m, p, address);
  case isa::ExtentKind::Matrix: return matrixExtent(info, m, p, address);
  case isa::ExtentKind::Strided: return stridedExtent(info, m, p, address);
  }
  return {invalid(m.operand, address)};
}

mem::Access accessOf(const isa::MemOperandInfo &m, const OperandValues &p) {
  const bool reads = m.reads || (m.updateWhen >= 0 && p.raw(m.updateWhen) != 0);
  if (reads && m.writes)
    return mem::Access::Read | mem::Access::Write;
  return m.writes ? mem::Access::Write : mem::Access::Read;
}

std::string upper(const char *text) {
  std::string out(text);
  for (char &c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Why an operand value failed decode's range or enumeration check.
std::string invalidValueText(const isa::OperandInfo &op, uint64_t raw) {
  const int64_t value = isa::operandValue(op, raw);
  if (op.kind == isa::OperandKind::Enum) {
    if (const isa::EnumValueInfo *known = op.enumInfo->findValue(raw))
      return std::string(known->name) + " is not accepted (only " + isa::acceptedNames(op) + ")";
    return std::to_string(value) + " is not a valid " + op.enumInfo->name;
  }
  return std::to_string(value) + " is outside [" + std::to_string(op.min) + ", " +
         std::to_string(op.max) + "]";
}

} // namespace

FaultFacts checkPacket(PacketBytes packet, const mem::AddressMap &map, OperandRanges &ranges,
                       isa::Instruction *decoded) {
  isa::Instruction inst;
  isa::DecodeError why;
  int failing;
  if (!isa::decode(packet, inst, nullptr, &why, &failing)) {
    FaultFacts f{.code = decodeFaultCode(why), .operand = failing};
    if (f.code == mem::FaultCode::Misaligned)
      f.address = inst.operands[failing];
    return f;
  }
  const isa::InstrInfo &info = isa::info(inst.opcode);
  const OperandValues p(inst);
  ranges = {};
  for (size_t k = 0; k < info.numMemory; ++k) {
    const isa::MemOperandInfo &m = info.memory[k];
    if (m.when >= 0 && p.raw(m.when) == 0)
      continue;
    const Extent e = extentOf(info, m, p, p.raw(m.operand));
    if (e.fault.code != mem::FaultCode::None)
      return e.fault;
    const mem::Access access = accessOf(m, p);
    if (mem::FaultCode code = map.checkEngineAccess(e.start, e.bytes, access);
        code != mem::FaultCode::None)
      return {.code = code,
              .operand = m.operand,
              .address = e.start,
              .length = e.bytes,
              .access = access};
    ranges[k] = {true, e.start, e.bytes, access};
  }
  for (size_t j = 0; j < info.numDisjoints; ++j) {
    const isa::DisjointInfo &d = info.disjoints[j];
    const OperandRange &a = ranges[d.a], &b = ranges[d.b];
    if (!a.accessed || !b.accessed)
      continue;
    const bool inPlace = d.inPlace && (d.inPlaceIf < 0 || p.raw(d.inPlaceIf) == d.inPlaceValue);
    if (inPlace && a.address == b.address && a.bytes == b.bytes)
      continue;
    // Both ranges passed the region check, so their ends are at most 2^64.
    const u128 endA = u128(a.address) + a.bytes, endB = u128(b.address) + b.bytes;
    if (a.address < endB && b.address < endA) {
      const uint64_t first = std::max(a.address, b.address);
      return {.code = mem::FaultCode::Overlap,
              .operand = info.memory[d.a].operand,
              .otherOperand = info.memory[d.b].operand,
              .address = first,
              .length = static_cast<uint64_t>(std::min(endA, endB) - first)};
    }
  }
  if (decoded)
    *decoded = inst;
  return {};
}

std::optional<OperandExtent> operandExtent(const isa::Instruction &inst,
                                           const isa::MemOperandInfo &m) {
  // At the top of the address space, so that a view reaching below its
  // address cannot wrap.
  constexpr uint64_t kTop = ~uint64_t(0);
  const Extent e = extentOf(isa::info(inst.opcode), m, OperandValues(inst), kTop);
  if (e.fault.code != mem::FaultCode::None)
    return std::nullopt;
  return OperandExtent{kTop - e.start, e.bytes};
}

mem::Fault describeFault(const FaultFacts &facts, PacketBytes packet, const mem::AddressMap &map) {
  mem::Fault fault;
  fault.code = facts.code;
  fault.address = facts.address;
  fault.length = facts.length;
  fault.access = facts.access;
  fault.packetIndex = facts.packetIndex;
  uint32_t opcode = isa::detail::load32(packet.data(), 0);
  const isa::InstrInfo *info = isa::findOpcode(opcode);
  if (!info) {
    fault.detail = mem::fmt::hex(opcode, 8);
    return fault;
  }
  fault.instruction = upper(info->mnemonic);
  // A device's facts name operands by index; one the instruction does not
  // have names none.
  const auto known = [&](int index) {
    return index >= 0 && static_cast<uint32_t>(index) < info->numOperands ? index : -1;
  };
  const auto operandName = [&](int index) {
    return index >= 0 ? std::string(info->operands[index].name) : std::string();
  };
  const int operand = known(facts.operand), other = known(facts.otherOperand);
  fault.operand = operandName(operand);
  isa::Instruction inst;
  std::string decodeMessage;
  const bool decodes = isa::decode(packet, inst, &decodeMessage);
  switch (facts.code) {
  case mem::FaultCode::ReservedBits:
    // The decoder's message names the bit; it starts with the mnemonic,
    // which the line already has.
    if (const std::string lead = std::string(info->mnemonic) + ": ";
        decodeMessage.starts_with(lead))
      decodeMessage.erase(0, lead.size());
    fault.detail = decodeMessage;
    break;
  case mem::FaultCode::Misaligned:
    map.annotate(fault);
    if (operand >= 0)
      fault.detail = "not aligned to " + std::to_string(info->operands[operand].align) + " bytes";
    break;
  case mem::FaultCode::InvalidOperand:
    if (operand < 0)
      break;
    if (info->operands[operand].kind == isa::OperandKind::Addr) {
      fault.detail = "the range at " + mem::fmt::hex(facts.address) + " does not fit in 64 bits";
    } else if (!decodes) {
      // decode() stopped at this operand, with its raw bits extracted.
      fault.detail = invalidValueText(info->operands[operand], inst.operands[operand]);
    } else {
      fault.detail = fault.operand + " = " + std::to_string(inst.operands[operand]) +
                     " is less than the stored row length " + std::to_string(facts.length);
    }
    break;
  case mem::FaultCode::Overlap:
    map.annotate(fault);
    fault.otherOperand = operandName(other);
    if (operand >= 0 && operand == other) {
      fault.detail = "consecutive batch elements overlap";
    } else if (decodes) {
      for (const isa::DisjointInfo &d : info->disjointList())
        if (info->memory[d.a].operand == operand && info->memory[d.b].operand == other && d.inPlace)
          fault.detail = "only an exact in-place alias is allowed";
    }
    break;
  case mem::FaultCode::IndexOutOfRange: {
    map.annotate(fault);
    // The operand at fault is the index array; its record names the
    // operand its indices are below and the flag that admits negative ones.
    const isa::MemOperandInfo *index = nullptr;
    for (const isa::MemOperandInfo &m : info->memoryList())
      if (m.operand == operand && m.holds == isa::MemContent::Index)
        index = &m;
    if (!decodes || !index || facts.length == 0)
      break;
    const uint64_t bound = inst.operands[index->indexBound];
    const bool wrap = index->indexWrap >= 0 && inst.operands[index->indexWrap] != 0;
    fault.detail = "index " + std::to_string(facts.index) + " at position " +
                   std::to_string((facts.address - inst.operands[operand]) / facts.length) +
                   " is outside [" + (wrap ? "-" + std::to_string(bound) : "0") + ", " +
                   std::to_string(bound) + ")";
    break;
  }
  case mem::FaultCode::Unmapped:
  case mem::FaultCode::Permission:
  case mem::FaultCode::OutOfRegion: map.annotate(fault); break;
  case mem::FaultCode::None:
  case mem::FaultCode::UnknownOpcode:
  case mem::FaultCode::Timeout:
  case mem::FaultCode::Divergence: break;
  }
  return fault;
}

} // namespace npu::sim
