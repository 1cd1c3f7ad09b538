// docs/isa.md: the ISA reference a kernel writer and an RTL engineer read.
#include "Emitters.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace npu::tblgen {

namespace {

std::string hex(uint64_t v, unsigned digits = 2) {
  std::string s = llvm::utohexstr(v, /*LowerCase=*/true);
  while (s.size() < digits)
    s = "0" + s;
  return "0x" + s;
}

std::string floatText(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", static_cast<double>(f));
  return os.str();
}

// Markdown table cells must not contain a bare '|'.
std::string cell(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string defaultText(const OperandDef &op) {
  switch (op.kind) {
  case OperandKind::F32: return floatText(static_cast<uint32_t>(op.defaultBits()));
  case OperandKind::Flag: return op.defaultValue ? "set" : "clear";
  case OperandKind::Enum:
    for (const EnumValueDef &v : op.enumType->values)
      if (v.value == op.defaultValue)
        return v.name;
    return "?";
  default: return std::to_string(op.defaultValue);
  }
}

std::string constraintText(const OperandDef &op) {
  std::vector<std::string> parts;
  if (op.hasRange)
    parts.push_back(std::to_string(op.min) + " ≤ value ≤ " + std::to_string(op.max));
  if (op.kind == OperandKind::Addr && op.align > 1)
    parts.push_back("aligned to " + std::to_string(op.align) + " bytes");
  if (op.enumType) {
    std::string values;
    for (int64_t value : op.accepts)
      values += (values.empty() ? "" : ", ") + op.enumType->find(value)->name + "=" +
                std::to_string(value);
    parts.push_back(op.enumType->name + (op.acceptsAll() ? ": " : " (accepted): ") + values);
  }
  if (op.optional)
    parts.push_back("optional, default " + defaultText(op));
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : "; ") + p;
  return out.empty() ? "—" : out;
}

std::string syntaxLine(const InstructionDef &inst) {
  std::string s = inst.mnemonic;
  bool first = true;
  for (const SyntaxItem &item : inst.syntaxItems) {
    if (item.operand >= 0) {
      s += (first ? " " : "") + inst.operands[item.operand].name;
    } else {
      s += item.literal;
      if (item.literal == ',')
        s += ' ';
    }
    first = false;
  }
  for (const OperandDef &op : inst.operands) {
    if (!op.optional)
      continue;
    s += std::string(first ? " " : "") + "[, " + op.name +
         (op.kind == OperandKind::Flag ? "" : "=" + defaultText(op)) + "]";
    first = false;
  }
  return s;
}

std::string enumValueName(const EnumTypeDef &type, int64_t value) {
  for (const EnumValueDef &v : type.values)
    if (v.value == value)
      return v.name;
  return std::to_string(value);
}

std::string productText(const InstructionDef &inst, const ProductDef &p) {
  std::string out;
  for (int factor : p.factors)
    out += inst.operands[factor].name + " × ";
  if (p.sizeBy >= 0)
    return out + "size of " + inst.operands[p.sizeBy].name;
  return out + std::to_string(1u << p.elemLog2);
}

// "rows × cols × 4 bytes", in words, for the instruction reference.
std::string extentText(const InstructionDef &inst, const MemOperandDef &m) {
  const auto name = [&](int index) { return inst.operands[index].name; };
  switch (m.kind) {
  case ExtentKind::Product: {
    if (m.selector < 0)
      return productText(inst, m.choices[0]) + " bytes";
    const EnumTypeDef &type = *inst.operands[m.selector].enumType;
    std::string out = "by " + name(m.selector) + ": ";
    for (size_t c = 0; c < m.choices.size(); ++c)
      out += (c ? "; " : "") + type.values[c].name + " " + productText(inst, m.choices[c]);
    return out + " bytes";
  }
  case ExtentKind::Matrix: {
    std::string out = name(m.rows) + " × " + name(m.cols) +
                      (m.sizeBy >= 0 ? " elements of the type " + name(m.sizeBy) + " names"
                                     : std::string(" f32"));
    if (m.trans >= 0)
      out += " (stored " + name(m.cols) + " × " + name(m.rows) + " with " + name(m.trans) + ")";
    out +=
        m.pitch >= 0 ? ", stored rows " + name(m.pitch) + " elements apart (0: dense)" : ", dense";
    if (m.batch >= 0)
      out += "; " + name(m.batch) + " of them " + name(m.batchStride) + " elements apart" +
             (m.distinct ? ", not overlapping" : "");
    return out;
  }
  case ExtentKind::Strided: {
    std::string out = "the strided view of " + name(m.sizes[0]);
    for (size_t d = 1; d < m.sizes.size(); ++d)
      out += " × " + name(m.sizes[d]);
    return out + " elements of 2^" + name(m.esize) +
           " bytes, from its lowest to its highest element";
  }
  }
  return "?";
}

void emitMemory(const InstructionDef &inst, llvm::raw_ostream &os) {
  if (inst.memory.empty())
    return;
  os << "Memory operands, checked in this order:\n\n";
  for (const MemOperandDef &m : inst.memory) {
    os << "* `" << inst.operands[m.operand].name << "` "
       << (m.reads && m.writes ? "read and written"
           : m.writes          ? "written"
                               : "read");
    if (m.updateWhen >= 0)
      os << " (also read with " << inst.operands[m.updateWhen].name << ")";
    if (m.when >= 0)
      os << " when " << inst.operands[m.when].name << " is set";
    os << ": " << extentText(inst, m);
    switch (m.holds) {
    case MemContent::F32: break;
    case MemContent::Bytes: os << "; raw bytes"; break;
    case MemContent::Index:
      os << "; integer indices, each below " << inst.operands[m.indexBound].name;
      if (m.indexWrap >= 0)
        os << " and, with " << inst.operands[m.indexWrap].name << ", at least -"
           << inst.operands[m.indexBound].name << " (counting from the end)";
      os << " (an index-out-of-range fault otherwise)";
      break;
    case MemContent::Hyper: os << "; f32 hyper-parameters"; break;
    }
    os << "\n";
  }
  if (!inst.disjoints.empty()) {
    os << "\nMust not overlap:";
    for (size_t j = 0; j < inst.disjoints.size(); ++j) {
      const DisjointDef &d = inst.disjoints[j];
      os << (j ? "," : "") << " `" << inst.operands[inst.memory[d.a].operand].name << "` and `"
         << inst.operands[inst.memory[d.b].operand].name << "`";
      if (d.inPlace)
        os << " (an exact alias allowed"
           << (d.inPlaceIf >= 0
                   ? " when " + inst.operands[d.inPlaceIf].name + " = " +
                         enumValueName(*inst.operands[d.inPlaceIf].enumType, d.inPlaceValue)
                   : std::string())
           << ")";
    }
    os << ".\n";
  }
  os << "\n";
}

} // namespace

std::string describeSlot(const IsaModel &model, const BitRange &slot) {
  const PacketFieldDef *first = model.fieldContaining(slot.offset);
  const PacketFieldDef *last = model.fieldContaining(slot.end() - 1);
  if (!first || !last)
    return "?";
  if (first != last)
    return first->name + ".." + last->name;
  if (first->bits.offset == slot.offset && first->bits.width == slot.width)
    return first->name;
  unsigned lo = slot.offset - first->bits.offset;
  unsigned hi = lo + slot.width - 1;
  return first->name + "[" +
         (hi == lo ? std::to_string(lo) : std::to_string(hi) + ":" + std::to_string(lo)) + "]";
}

void emitIsaDoc(const IsaModel &model, llvm::raw_ostream &os) {
  os << "<!-- Generated by npu-tblgen --gen-isa-doc from isa/*.td. Do not edit;\n"
        "     scripts/check-generated verifies this file is up to date. -->\n\n";
  os << "# NPU instruction set reference, v" << model.versionMajor << "." << model.versionMinor
     << "\n\n";
  os << "ISA hash `" << hex(model.hash, 16) << "` (recorded in every `.npubin`). "
     << model.instructions.size() << " instructions in " << model.families.size()
     << " families. Everything on this page is generated from `isa/*.td`, the single source "
        "of truth that the assembler, the ISS, the RTL decoder and this reference share.\n\n";

  os << "## Command packet\n\n"
        "A command stream is a sequence of 64-byte packets. All multi-byte fields are "
        "little-endian; bit *n* of the packet is bit *n* mod 8 of byte *n* / 8. Every bit "
        "that the instruction does not assign to an operand is reserved and must be zero: "
        "decoders reject a packet with a reserved bit set, or an unknown opcode, with an "
        "error naming the packet index.\n\n";
  os << "| field | bytes | bits | type | description |\n|---|---|---|---|---|\n";
  for (const PacketFieldDef &f : model.packetFields)
    os << "| `" << f.name << "` | " << f.bits.offset / 8 << "–" << f.bits.end() / 8 - 1 << " | "
       << f.bits.offset << "–" << f.bits.end() - 1 << " | " << f.ctype << " | " << cell(f.doc)
       << " |\n";

  os << "\n## Operand kinds\n\n| kind | meaning |\n|---|---|\n"
        "| addr | 64-bit physical byte address |\n"
        "| u32 | unsigned integer |\n"
        "| i32 | signed integer, two's complement |\n"
        "| f32 | IEEE binary32, stored as its bit pattern |\n"
        "| bits32 | 32-bit pattern; the assembler accepts an integer or a float literal |\n"
        "| flag | one modifier bit |\n"
        "| enum | one of a fixed set of named values |\n\n"
        "In assembly, positional operands follow the mnemonic as the syntax line shows. "
        "Optional operands come after them in any order, written `name=value`, or just "
        "`name` for a flag; an omitted optional operand takes its default.\n\n";

  os << "## Hardware configuration\n\nThe ISS timing model and the RTL are built from "
        "the same parameters (`isa/hardware.td`).\n\n| parameter | value |\n|---|---|\n";
  for (const HardwareParam &p : model.hardware)
    os << "| " << p.name << " | " << p.value << " |\n";
  os << "\n| engine | role |\n|---|---|\n";
  for (const auto &[name, doc] : model.engineDocs)
    os << "| " << name << " | " << cell(doc) << " |\n";

  os << "\n## Device registers\n\nThe CSR window (an AXI4-Lite slave, " << kCsrWindowBytes
     << " bytes) through which a driver programs the command ring (`isa/csr.td`). All "
        "registers are 32 bits wide.\n\n| offset | register | access | description "
        "|\n|---|---|---|---|\n";
  for (const CsrRegisterDef &reg : model.csrs) {
    std::string doc = reg.doc;
    for (const CsrBitDef &bit : reg.bits)
      doc += " Bit " + std::to_string(bit.bit) + " " + bit.name + ": " + bit.doc;
    os << "| " << hex(reg.offset, 3) << " | `" << reg.name << "` | " << reg.access << " | "
       << cell(doc) << " |\n";
  }

  os << "\n## Enumerations\n\n";
  for (const EnumTypeDef &e : model.enums) {
    os << "**" << e.name << "** — " << e.doc << "\n\n| name | value | meaning |\n|---|---|---|\n";
    for (const EnumValueDef &v : e.values)
      os << "| `" << v.name << "` | " << v.value << " | " << cell(v.doc) << " |\n";
    os << "\n";
  }

  os << "## Operand checks\n\n"
        "Before a packet's engine starts, every device checks the packet in this order "
        "and faults at the first failure, before any memory access: the decode checks "
        "(unknown opcode, reserved bits, then per operand a value outside its range or "
        "enumeration, or a misaligned address); then per memory operand, in the order "
        "each instruction lists them, its extent (the byte count, computed exactly; a "
        "start or length that does not fit in 64 bits is an invalid operand, as is a "
        "matrix pitch below the stored row length) and its range against the region "
        "table (unmapped, permission — the CSR window and the command ring belong to no "
        "engine —, or running out of its region); then the overlap rules in their "
        "order. Only data-dependent faults (an embedding index out of range) happen "
        "during execution.\n\n";
  os << "## Summary\n\n| opcode | mnemonic | family | engine | description "
        "|\n|---|---|---|---|---|\n";
  for (const InstructionDef &inst : model.instructions)
    os << "| " << hex(inst.opcode) << " | [`" << inst.mnemonic << "`](#" << inst.mnemonic << ") | "
       << inst.family << " | " << inst.engine << " | " << cell(inst.doc) << " |\n";

  for (const std::string &family : model.families) {
    os << "\n## Family: " << family << "\n";
    for (const InstructionDef &inst : model.instructions) {
      if (inst.family != family)
        continue;
      os << "\n### " << inst.mnemonic << "\n\n";
      os << inst.doc << " Opcode " << hex(inst.opcode) << ", `" << inst.defName << "`.\n\n";
      os << "```\n" << syntaxLine(inst) << "\n```\n\n";
      if (!inst.semantics.empty())
        os << inst.semantics << "\n\n";
      if (!inst.operands.empty()) {
        os << "| operand | kind | slot | bits | constraints | description |\n"
              "|---|---|---|---|---|---|\n";
        for (const OperandDef &op : inst.operands)
          os << "| `" << op.name << "` | " << kindName(op.kind) << " | "
             << describeSlot(model, op.slot) << " | " << op.slot.offset << "–" << op.slot.end() - 1
             << " | " << cell(constraintText(op)) << " | " << cell(op.doc) << " |\n";
        os << "\n";
      }
      emitMemory(inst, os);
      unsigned reserved = 0;
      for (bool used : inst.usedBits)
        reserved += !used;
      os << "Cost: " << inst.engine << " engine, " << inst.setupCycles << " setup cycles";
      if (inst.perElementCycles)
        os << ", " << inst.perElementCycles << " cycles per lane-element";
      os << ". Reserved bits: " << reserved << " of " << kPacketBits << ".\n";
    }
  }

  os << "\n## Micro-program primitives\n\n"
        "Transcendental functions and division are straight-line programs of these "
        "32-bit lane operations (see `docs/arith.md`). Float operations use "
        "round-to-nearest-even, flush denormal inputs and outputs to zero and return "
        "the canonical quiet NaN `0x7fc00000`.\n\n| primitive | sources | operation "
        "|\n|---|---|---|\n";
  for (const PrimDef &p : model.prims)
    os << "| `" << p.name << "` | " << p.numSrc << " | " << cell(p.doc) << " |\n";
  if (!model.programs.empty()) {
    os << "\n## Micro-programs\n";
    for (const MicroProgramDef &prog : model.programs) {
      os << "\n### " << prog.name << "\n\n" << prog.doc << "\n\n```\n";
      for (const MicroStep &step : prog.steps) {
        os << "$" << step.dest << " = " << step.prim->name;
        for (size_t i = 0; i < step.args.size(); ++i) {
          const MicroArg &a = step.args[i];
          os << (i ? ", " : " ");
          if (a.isRegister)
            os << "$" << a.reg;
          else if (step.prim->cls == PrimClass::Shift)
            os << a.constant;
          else if (step.prim->cls == PrimClass::Integer ||
                   step.prim->cls == PrimClass::IntCompare ||
                   step.prim->cls == PrimClass::IntToFloat)
            os << hex(a.constant, 8);
          else
            os << hex(a.constant, 8) << " (" << floatText(a.constant) << ")";
        }
        os << "\n";
      }
      os << "result $" << prog.result << "\n```\n";
    }
  }
}

} // namespace npu::tblgen
