#include "table_rules.h"

#include <climits>

namespace npu::verify::rules {

uint64_t slotMax(const isa::OperandInfo &op) {
  return op.bitWidth >= 64 ? ~uint64_t(0) : (uint64_t(1) << op.bitWidth) - 1;
}

bool isDimension(const isa::OperandInfo &op) {
  return op.kind == isa::OperandKind::U32 && op.hasRange && op.min >= 1;
}

bool isSizeLike(const isa::OperandInfo &op) {
  return op.kind == isa::OperandKind::U32 || op.kind == isa::OperandKind::I32;
}

bool isMode(const isa::OperandInfo &op) {
  return op.kind == isa::OperandKind::Flag || op.kind == isa::OperandKind::Enum;
}

std::vector<OutOfRange> outOfRangeValues(const isa::InstrInfo &info) {
  std::vector<OutOfRange> values;
  for (const isa::OperandInfo &op : info.operandList()) {
    if (op.kind == isa::OperandKind::Enum) {
      // Enum slots are narrow; the first unnamed values are enough.
      for (uint64_t v = 0; v <= slotMax(op) && v < 64; ++v)
        if (!op.enumInfo->findValue(v) || !op.accepts(v))
          values.push_back({&op, v});
      continue;
    }
    if (!op.hasRange || op.kind == isa::OperandKind::Addr)
      continue;
    const bool isSigned = op.kind == isa::OperandKind::I32;
    const int64_t lowest = isSigned ? INT32_MIN : 0;
    const int64_t highest = isSigned ? INT32_MAX : static_cast<int64_t>(slotMax(op));
    if (op.min > lowest)
      values.push_back({&op, static_cast<uint64_t>(op.min - 1) & slotMax(op)});
    if (op.max < highest)
      values.push_back({&op, static_cast<uint64_t>(op.max + 1) & slotMax(op)});
  }
  return values;
}

std::vector<unsigned> reservedBits(const isa::InstrInfo &info) {
  std::vector<unsigned> bits;
  for (unsigned bit = 0; bit < isa::kPacketBytes * 8; ++bit)
    if (!((info.usedBits[bit / 64] >> (bit % 64)) & 1))
      bits.push_back(bit);
  return bits;
}

std::vector<uint32_t> misalignableOperands(const isa::InstrInfo &info) {
  std::vector<uint32_t> operands;
  for (uint32_t i = 0; i < info.numOperands; ++i)
    if (info.operands[i].kind == isa::OperandKind::Addr && info.operands[i].align > 1)
      operands.push_back(i);
  return operands;
}

namespace {

std::vector<uint64_t> valuesOf(const isa::OperandInfo &op) {
  if (op.kind == isa::OperandKind::Flag)
    return {0, 1};
  const std::vector<uint32_t> accepted = isa::acceptedValues(op);
  return {accepted.begin(), accepted.end()};
}

isa::Instruction baseInstance(const isa::InstrInfo &info) {
  isa::Instruction inst = isa::makeInstruction(info.opcode);
  for (uint32_t i = 0; i < info.numOperands; ++i)
    if (isDimension(info.operands[i]))
      inst.operands[i] = 2;
  return inst;
}

size_t combinations(const isa::InstrInfo &info) {
  size_t n = 1;
  for (const isa::OperandInfo &op : info.operandList())
    if (isMode(op))
      n *= valuesOf(op).size();
  return n;
}

} // namespace

bool modesAreCrossed(const isa::InstrInfo &info) {
  return combinations(info) <= kMaxModes;
}

std::vector<isa::Instruction> modeInstances(const isa::InstrInfo &info) {
  std::vector<isa::Instruction> instances{baseInstance(info)};
  for (uint32_t i = 0; i < info.numOperands; ++i) {
    const isa::OperandInfo &op = info.operands[i];
    if (!isMode(op))
      continue;
    if (modesAreCrossed(info)) {
      std::vector<isa::Instruction> crossed;
      for (const isa::Instruction &inst : instances)
        for (uint64_t v : valuesOf(op)) {
          crossed.push_back(inst);
          crossed.back().operands[i] = v;
        }
      instances = std::move(crossed);
    } else {
      for (uint64_t v : valuesOf(op)) {
        instances.push_back(baseInstance(info));
        instances.back().operands[i] = v;
      }
    }
  }
  return instances;
}

std::string modeName(const isa::InstrInfo &info, const isa::Instruction &inst, int only) {
  std::string name;
  for (uint32_t i = 0; i < info.numOperands; ++i) {
    const isa::OperandInfo &op = info.operands[i];
    if (!isMode(op) || (only >= 0 && static_cast<uint32_t>(only) != i))
      continue;
    std::string value = std::to_string(inst.operands[i]);
    if (op.kind == isa::OperandKind::Enum)
      if (const isa::EnumValueInfo *v = op.enumInfo->findValue(inst.operands[i]))
        value = v->name;
    name += (name.empty() ? "" : ",") + std::string(op.name) + "=" + value;
  }
  return name;
}

} // namespace npu::verify::rules
