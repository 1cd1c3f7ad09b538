#include "npu/isa/isa.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>

#include "npu/isa/npu_isa_tables.inc"

namespace npu::isa {

namespace {

using tables::kByMnemonic;
using tables::kByOpcode;
using tables::kEnums;
using tables::kInstrs;
using tables::kPacketFields;

uint64_t widthMask(unsigned width) {
  return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
}

// Bit ranges are read and written as little-endian 64-bit words; a range
// may straddle two words.
uint64_t extractBits(std::span<const uint8_t, kPacketBytes> p, unsigned offset, unsigned width) {
  unsigned word = offset / 64, shift = offset % 64;
  uint64_t v = detail::load64(p.data(), word * 8) >> shift;
  if (shift + width > 64)
    v |= detail::load64(p.data(), (word + 1) * 8) << (64 - shift);
  return v & widthMask(width);
}

void insertBits(std::span<uint8_t, kPacketBytes> p, unsigned offset, unsigned width, uint64_t v) {
  unsigned word = offset / 64, shift = offset % 64;
  uint64_t mask = widthMask(width);
  v &= mask;
  uint64_t lo = detail::load64(p.data(), word * 8);
  detail::store64(p.data(), word * 8, (lo & ~(mask << shift)) | (v << shift));
  if (shift + width > 64) {
    uint64_t hi = detail::load64(p.data(), (word + 1) * 8);
    unsigned spill = shift + width - 64;
    uint64_t hiMask = widthMask(spill);
    detail::store64(p.data(), (word + 1) * 8, (hi & ~hiMask) | (v >> (64 - shift)));
  }
}

std::string format(const char *fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

const char *fieldName(unsigned bit) {
  for (const PacketFieldInfo &f : kPacketFields)
    if (bit >= f.bitOffset && bit < f.bitOffset + f.bitWidth)
      return f.name;
  return "?";
}

bool fail(std::string *error, std::string message, DecodeError *why = nullptr,
          DecodeError code = DecodeError::None) {
  if (error)
    *error = std::move(message);
  if (why)
    *why = code;
  return false;
}

// Explains why `raw` is not a valid value of `op` (and classifies it in
// *code), or returns an empty string.
std::string checkOperand(const InstrInfo &ins, const OperandInfo &op, uint64_t raw,
                         DecodeError *code) {
  *code = DecodeError::OutOfRange;
  if (raw & ~widthMask(op.bitWidth))
    return format("%s: operand '%s' value 0x%" PRIx64 " does not fit in %u bits", ins.mnemonic,
                  op.name, raw, op.bitWidth);
  int64_t value = operandValue(op, raw);
  if (op.hasRange && (value < op.min || value > op.max))
    return format("%s: operand '%s' = %" PRId64 " is outside [%" PRId64 ", %" PRId64 "]",
                  ins.mnemonic, op.name, value, op.min, op.max);
  *code = DecodeError::Misaligned;
  if (op.kind == OperandKind::Addr && raw % op.align)
    return format("%s: address operand '%s' = 0x%" PRIx64 " is not aligned to %u bytes",
                  ins.mnemonic, op.name, raw, op.align);
  *code = DecodeError::BadEnum;
  if (op.kind == OperandKind::Enum && !op.enumInfo->findValue(raw))
    return format("%s: operand '%s' = %" PRIu64 " is not a valid %s", ins.mnemonic, op.name, raw,
                  op.enumInfo->name);
  if (!op.accepts(raw))
    return format("%s: operand '%s' = %s is not accepted (%s accepts %s)", ins.mnemonic, op.name,
                  op.enumInfo->findValue(raw)->name, ins.mnemonic, acceptedNames(op).c_str());
  *code = DecodeError::None;
  return {};
}

// checkOperand's verdict without its message: decode asks it of every
// operand of every packet, and builds the message only for a failure.
bool operandValid(const OperandInfo &op, uint64_t raw) {
  if (raw & ~widthMask(op.bitWidth))
    return false;
  if (const int64_t value = operandValue(op, raw);
      op.hasRange && (value < op.min || value > op.max))
    return false;
  if (op.kind == OperandKind::Addr && raw % op.align)
    return false;
  if (op.kind == OperandKind::Enum && !op.enumInfo->findValue(raw))
    return false;
  return op.accepts(raw);
}

} // namespace

bool OperandInfo::accepts(uint64_t raw) const {
  if (kind != OperandKind::Enum || acceptMask == ~uint64_t(0))
    return true;
  return raw < 64 && (acceptMask >> raw & 1);
}

std::vector<uint32_t> acceptedValues(const OperandInfo &op) {
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < op.enumInfo->numValues; ++i)
    if (op.accepts(op.enumInfo->values[i].value))
      values.push_back(op.enumInfo->values[i].value);
  return values;
}

std::string acceptedNames(const OperandInfo &op) {
  std::string names;
  for (uint32_t value : acceptedValues(op))
    names += (names.empty() ? "" : ", ") + std::string(op.enumInfo->findValue(value)->name);
  return names;
}

unsigned elementLog2(const InstrInfo &info, const ProductInfo &p, const Instruction &inst) {
  if (p.sizeBy < 0)
    return p.elemLog2;
  const EnumValueInfo *value = info.operands[p.sizeBy].enumInfo->findValue(inst.operands[p.sizeBy]);
  return value ? static_cast<unsigned>(std::countr_zero(unsigned(value->bytes))) : 0;
}

unsigned elementLog2(const InstrInfo &info, const MemOperandInfo &matrix, const Instruction &inst) {
  if (matrix.sizeBy < 0)
    return 2;
  const EnumValueInfo *value =
      info.operands[matrix.sizeBy].enumInfo->findValue(inst.operands[matrix.sizeBy]);
  return value ? static_cast<unsigned>(std::countr_zero(unsigned(value->bytes))) : 0;
}

const EnumValueInfo *EnumInfo::findValue(uint64_t value) const {
  for (uint32_t i = 0; i < numValues; ++i)
    if (values[i].value == value)
      return &values[i];
  return nullptr;
}

const EnumValueInfo *EnumInfo::findName(std::string_view name) const {
  for (uint32_t i = 0; i < numValues; ++i)
    if (name == values[i].name)
      return &values[i];
  return nullptr;
}

int InstrInfo::operandIndex(std::string_view name) const {
  for (uint32_t i = 0; i < numOperands; ++i)
    if (name == operands[i].name)
      return static_cast<int>(i);
  return -1;
}

std::span<const InstrInfo> instructions() {
  return kInstrs;
}
std::span<const PacketFieldInfo> packetFields() {
  return kPacketFields;
}
std::span<const EnumInfo *const> enums() {
  return kEnums;
}

const InstrInfo *findOpcode(uint32_t opcode) {
  if (opcode < std::size(kByOpcode))
    return kByOpcode[opcode] == tables::kNoInstr ? nullptr : &kInstrs[kByOpcode[opcode]];
  auto it =
      std::lower_bound(std::begin(kInstrs), std::end(kInstrs), opcode,
                       [](const InstrInfo &i, uint32_t op) { return uint32_t(i.opcode) < op; });
  return it != std::end(kInstrs) && uint32_t(it->opcode) == opcode ? &*it : nullptr;
}

const InstrInfo &info(Opcode opcode) {
  return *findOpcode(static_cast<uint32_t>(opcode));
}

const InstrInfo *findMnemonic(std::string_view mnemonic) {
  auto it =
      std::lower_bound(std::begin(kByMnemonic), std::end(kByMnemonic), mnemonic,
                       [](uint16_t i, std::string_view m) { return kInstrs[i].mnemonic < m; });
  return it != std::end(kByMnemonic) && kInstrs[*it].mnemonic == mnemonic ? &kInstrs[*it] : nullptr;
}

const char *engineName(Engine engine) {
  switch (engine) {
  case Engine::Control: return "control";
  case Engine::Dma: return "dma";
  case Engine::Matrix: return "matrix";
  case Engine::Vector: return "vector";
  }
  return "?";
}

const char *kindName(OperandKind kind) {
  switch (kind) {
  case OperandKind::Addr: return "addr";
  case OperandKind::U32: return "u32";
  case OperandKind::I32: return "i32";
  case OperandKind::F32: return "f32";
  case OperandKind::Bits32: return "bits32";
  case OperandKind::Flag: return "flag";
  case OperandKind::Enum: return "enum";
  }
  return "?";
}

int64_t operandValue(const OperandInfo &op, uint64_t raw) {
  if (op.kind == OperandKind::I32) {
    uint64_t sign = uint64_t(1) << (op.bitWidth - 1);
    return static_cast<int64_t>((raw ^ sign) - sign);
  }
  return static_cast<int64_t>(raw);
}

Instruction makeInstruction(Opcode opcode) {
  Instruction inst;
  inst.opcode = opcode;
  const InstrInfo &ins = info(opcode);
  for (uint32_t i = 0; i < ins.numOperands; ++i)
    inst.operands[i] = ins.operands[i].defaultBits;
  return inst;
}

bool validate(const Instruction &inst, std::string *error) {
  const InstrInfo *ins = findOpcode(static_cast<uint32_t>(inst.opcode));
  if (!ins)
    return fail(error, format("unknown opcode 0x%08x", static_cast<uint32_t>(inst.opcode)));
  DecodeError code;
  for (uint32_t i = 0; i < ins->numOperands; ++i)
    if (std::string why = checkOperand(*ins, ins->operands[i], inst.operands[i], &code);
        !why.empty())
      return fail(error, std::move(why));
  for (uint32_t i = ins->numOperands; i < kMaxOperands; ++i)
    if (inst.operands[i])
      return fail(error, format("%s: operand slot %u is set but the instruction has %u operands",
                                ins->mnemonic, i, ins->numOperands));
  return true;
}

void encode(const Instruction &inst, std::span<uint8_t, kPacketBytes> out) {
  std::fill(out.begin(), out.end(), uint8_t{0});
  const InstrInfo &ins = info(inst.opcode);
  insertBits(out, 0, 32, static_cast<uint32_t>(inst.opcode));
  for (uint32_t i = 0; i < ins.numOperands; ++i)
    insertBits(out, ins.operands[i].bitOffset, ins.operands[i].bitWidth,
               inst.operands[i] & widthMask(ins.operands[i].bitWidth));
}

bool decode(std::span<const uint8_t, kPacketBytes> bytes, Instruction &out, std::string *error,
            DecodeError *why, int *operand) {
  if (why)
    *why = DecodeError::None;
  if (operand)
    *operand = -1;
  uint32_t opcode = static_cast<uint32_t>(extractBits(bytes, 0, 32));
  const InstrInfo *ins = findOpcode(opcode);
  if (!ins)
    return fail(error, format("unknown opcode 0x%08x", opcode), why, DecodeError::UnknownOpcode);
  for (unsigned word = 0; word < 8; ++word) {
    uint64_t bits = detail::load64(bytes.data(), word * 8);
    if (uint64_t reserved = bits & ~ins->usedBits[word]) {
      unsigned bit = word * 64 + static_cast<unsigned>(std::countr_zero(reserved));
      unsigned field = 0;
      for (const PacketFieldInfo &f : kPacketFields)
        if (bit >= f.bitOffset && bit < f.bitOffset + f.bitWidth)
          field = bit - f.bitOffset;
      return fail(error,
                  format("%s: reserved bit %u of field '%s' (packet bit %u) is set", ins->mnemonic,
                         field, fieldName(bit), bit),
                  why, DecodeError::ReservedBits);
    }
  }
  out = Instruction{};
  out.opcode = ins->opcode;
  for (uint32_t i = 0; i < ins->numOperands; ++i) {
    const OperandInfo &op = ins->operands[i];
    out.operands[i] = extractBits(bytes, op.bitOffset, op.bitWidth);
    if (operandValid(op, out.operands[i]))
      continue;
    DecodeError code;
    if (std::string message = checkOperand(*ins, op, out.operands[i], &code); !message.empty()) {
      if (operand)
        *operand = static_cast<int>(i);
      return fail(error, std::move(message), why, code);
    }
  }
  return true;
}

} // namespace npu::isa
