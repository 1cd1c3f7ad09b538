#include "npu/verify/footprint.h"

#include "npu/sim/checks.h"
#include "npu/sim/iss.h"

#include <algorithm>
#include <limits>

namespace npu::verify {

namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

Role roleOf(const isa::MemOperandInfo &m, const isa::Instruction &inst) {
  if (!m.writes)
    return Role::Read;
  const bool update = m.reads || (m.updateWhen >= 0 && inst.operands[m.updateWhen] != 0);
  return update ? Role::Update : Role::Write;
}

// An index operand's element size: its extent's element size, scaled by the
// operand that selects it (EMBEDDING's itype).
Content contentOf(const isa::MemOperandInfo &m, const isa::Instruction &inst) {
  switch (m.holds) {
  case isa::MemContent::F32: return Content::F32;
  case isa::MemContent::Bytes: return Content::Bytes;
  case isa::MemContent::Hyper: return Content::Hyper;
  case isa::MemContent::Index: break;
  }
  const isa::ProductInfo &p = m.choices[m.selector < 0 ? 0 : inst.operands[m.selector]];
  const uint64_t log2 = isa::elementLog2(isa::info(inst.opcode), p, inst);
  return log2 == 3 ? Content::Index64 : Content::Index32;
}

bool flagSet(const isa::Instruction &inst, int8_t flag) {
  return flag < 0 || inst.operands[flag] != 0;
}

} // namespace

const Buffer *Footprint::find(std::string_view operand) const {
  for (const Buffer &b : buffers)
    if (operand == b.operand)
      return &b;
  return nullptr;
}

bool Footprint::inPlaceAllowed(std::string_view written, std::string_view read) const {
  return std::any_of(inPlace.begin(), inPlace.end(),
                     [&](const auto &p) { return written == p.first && read == p.second; });
}

Footprint footprintOf(const isa::Instruction &inst) {
  const isa::InstrInfo &info = isa::info(inst.opcode);
  Footprint f;
  for (const isa::MemOperandInfo &m : info.memoryList()) {
    if (!flagSet(inst, m.when))
      continue;
    const isa::OperandInfo &op = info.operands[m.operand];
    // An extent the checks reject spans, for budgets, everything.
    const sim::OperandExtent extent =
        sim::operandExtent(inst, m).value_or(sim::OperandExtent{0, kSaturated});
    Buffer b{op.name,      inst.operands[m.operand], extent.below,
             extent.bytes, roleOf(m, inst),          contentOf(m, inst)};
    if (m.holds == isa::MemContent::Index) {
      b.indexLimit = inst.operands[m.indexBound];
      b.indexWrap = m.indexWrap >= 0 && inst.operands[m.indexWrap] != 0;
    }
    b.computedExtent = m.kind != isa::ExtentKind::Product;
    f.buffers.push_back(b);
  }
  for (const isa::DisjointInfo &d : info.disjointList()) {
    const isa::MemOperandInfo &a = info.memory[d.a], &b = info.memory[d.b];
    if (!d.inPlace || (d.inPlaceIf >= 0 && inst.operands[d.inPlaceIf] != d.inPlaceValue))
      continue;
    // The rules name the written operand first.
    const isa::MemOperandInfo &written = a.writes ? a : b, &read = a.writes ? b : a;
    f.inPlace.emplace_back(info.operands[written.operand].name, info.operands[read.operand].name);
  }
  // The work at the least aligned addresses the operands allow: placement
  // comes after the budget check and may start a buffer anywhere in its
  // 64-byte line, where each of its rows can take one more beat, so a
  // packet within its budget here stays within it once placed.
  isa::Instruction leastAligned = inst;
  for (uint32_t i = 0; i < info.numOperands; ++i) {
    const isa::OperandInfo &op = info.operands[i];
    if (op.kind == isa::OperandKind::Addr && op.align < 64)
      leastAligned.operands[i] = (inst.operands[i] & ~uint64_t(63)) | (64 - std::max(op.align, 1u));
  }
  isa::Packet packet;
  isa::encode(leastAligned, packet);
  f.work = sim::predictCycles(packet).value_or(kSaturated);
  return f;
}

void legalise(isa::Instruction &inst) {
  const isa::InstrInfo &info = isa::info(inst.opcode);
  for (const isa::MemOperandInfo &m : info.memoryList()) {
    if (m.kind != isa::ExtentKind::Matrix)
      continue;
    const bool transposed = m.trans >= 0 && inst.operands[m.trans] != 0;
    const uint64_t cols = inst.operands[transposed ? m.rows : m.cols];
    const uint64_t rows = inst.operands[transposed ? m.cols : m.rows];
    uint64_t pitch = cols;
    if (m.pitch >= 0 && inst.operands[m.pitch] != 0) {
      uint64_t &raw = inst.operands[m.pitch];
      if (raw < cols && cols + raw % 4 <= static_cast<uint64_t>(info.operands[m.pitch].max))
        raw = cols + raw % 4;
      pitch = raw;
    }
    if (!m.distinct || inst.operands[m.batch] < 2)
      continue;
    const unsigned __int128 one = static_cast<unsigned __int128>(rows - 1) * pitch + cols;
    uint64_t &stride = inst.operands[m.batchStride];
    if (stride < one && one + stride % 3 <= static_cast<uint64_t>(info.operands[m.batchStride].max))
      stride = static_cast<uint64_t>(one + stride % 3);
  }
}

const char *roleName(Role role) {
  switch (role) {
  case Role::Read: return "read";
  case Role::Write: return "write";
  case Role::Update: return "update";
  }
  return "?";
}

const char *contentName(Content content) {
  switch (content) {
  case Content::F32: return "f32";
  case Content::Bytes: return "bytes";
  case Content::Index32: return "i32 indices";
  case Content::Index64: return "i64 indices";
  case Content::Hyper: return "hyper-parameters";
  }
  return "?";
}

} // namespace npu::verify
