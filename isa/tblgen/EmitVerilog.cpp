// The SystemVerilog package the RTL decoder imports: opcodes, packet field
// positions, every operand slot, enum encodings, reserved-bit masks and the
// hardware parameters.
#include "Emitters.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace npu::tblgen {

namespace {

std::string upper(const std::string &s) {
  return llvm::StringRef(s).upper();
}

std::string snakeUpper(const std::string &camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    if (i && std::isupper(static_cast<unsigned char>(camel[i])) &&
        std::islower(static_cast<unsigned char>(camel[i - 1])))
      out += '_';
    out += llvm::toUpper(camel[i]);
  }
  return out;
}

std::string usedMaskLiteral(const InstructionDef &inst) {
  std::string hexDigits;
  for (int nibble = kPacketBits / 4 - 1; nibble >= 0; --nibble) {
    unsigned v = 0;
    for (unsigned b = 0; b < 4; ++b)
      if (inst.usedBits[nibble * 4 + b])
        v |= 1u << b;
    hexDigits += llvm::hexdigit(v, true);
  }
  return std::to_string(kPacketBits) + "'h" + hexDigits;
}

// The Verilog condition under which operand `op` fails isa::decode's
// checks with `failure` ("range" covers ranges and enumerations, which both
// decode as invalid operands; "align" the alignment of an address), or ""
// if it cannot fail that way.
std::string operandFailure(const OperandDef &op, bool alignment) {
  const std::string field =
      "packet[" + std::to_string(op.slot.offset) + " +: " + std::to_string(op.slot.width) + "]";
  std::vector<std::string> terms;
  if (alignment) {
    if (op.kind == OperandKind::Addr && op.align > 1)
      terms.push_back("packet[" + std::to_string(op.slot.offset) +
                      " +: " + std::to_string(llvm::Log2_64(op.align)) + "] != '0");
  } else if (op.hasRange) {
    const bool isSigned = op.kind == OperandKind::I32;
    const int64_t typeMin = isSigned ? -(int64_t(1) << (op.slot.width - 1)) : 0;
    const int64_t typeMax =
        isSigned ? (int64_t(1) << (op.slot.width - 1)) - 1 : (int64_t(1) << op.slot.width) - 1;
    const std::string value = isSigned ? "$signed(" + field + ")" : field;
    const auto literal = [&](int64_t v) {
      std::string digits = std::to_string(v < 0 ? -v : v);
      return (v < 0 ? "-" : "") + std::to_string(op.slot.width) + (isSigned ? "'sd" : "'d") +
             digits;
    };
    if (op.min > typeMin)
      terms.push_back(value + " < " + literal(op.min));
    if (op.max < typeMax)
      terms.push_back(value + " > " + literal(op.max));
  } else if (op.kind == OperandKind::Enum) {
    std::string valid;
    for (int64_t value : op.accepts)
      valid += (valid.empty() ? "" : " || ") + field + " == " + std::to_string(op.slot.width) +
               "'d" + std::to_string(value);
    if (op.accepts.size() < (size_t(1) << op.slot.width))
      terms.push_back("!(" + valid + ")");
  }
  std::string condition;
  for (const std::string &t : terms)
    condition += (condition.empty() ? "" : " || ") + t;
  return condition;
}

// All operands the check stage reads are at most 32 bits wide.
std::string slot32(const InstructionDef &inst, int index) {
  return verilogSlot32(inst, index);
}

std::string operandIndex(int index) {
  return index < 0 ? "NO_OPERAND" : "8'd" + std::to_string(index);
}

// The fields of one memory operand as Verilog expressions on `packet`.
struct MemFields {
  std::string valid = "1'b1", reads, writes, kind, address, shift, trans = "1'b0",
              distinct = "1'b0", pitchOperand = "NO_OPERAND";
  std::string f[4], s[4];
};

MemFields memFields(const InstructionDef &inst, const MemOperandDef &m) {
  MemFields out;
  const OperandDef &addr = inst.operands[m.operand];
  out.address = "packet[" + std::to_string(addr.slot.offset) + " +: 64]";
  if (m.when >= 0)
    out.valid = "packet[" + std::to_string(inst.operands[m.when].slot.offset) + "]";
  out.writes = m.writes ? "1'b1" : "1'b0";
  out.reads = m.reads ? "1'b1" : "1'b0";
  if (!m.reads && m.updateWhen >= 0)
    out.reads = "packet[" + std::to_string(inst.operands[m.updateWhen].slot.offset) + "]";
  for (unsigned i = 0; i < 4; ++i)
    out.s[i] = "32'd0";
  const auto ref = [&](int index, const char *none) {
    return index < 0 ? std::string(none) : slot32(inst, index);
  };
  // The element size's log2: a fixed one, or the size of the value of the
  // sizeBy operand (its check has already refused any other value).
  const auto elementLog2 = [&](int sizeBy, unsigned fixedLog2) {
    if (sizeBy < 0)
      return "4'd" + std::to_string(fixedLog2);
    const OperandDef &op = inst.operands[sizeBy];
    std::string e = "4'd0";
    for (auto v = op.enumType->values.rbegin(); v != op.enumType->values.rend(); ++v)
      e = "(" + slot32(inst, sizeBy) + " == 32'd" + std::to_string(v->value) + " ? 4'd" +
          std::to_string(llvm::Log2_32(v->bytes)) + " : " + e + ")";
    return e;
  };
  switch (m.kind) {
  case ExtentKind::Product: {
    out.kind = "EXTENT_PRODUCT";
    const auto productField = [&](const ProductDef &p, int i) {
      return i < 0 ? elementLog2(p.sizeBy, p.elemLog2)
                   : ref(i < int(p.factors.size()) ? p.factors[i] : -1, "32'd1");
    };
    // One choice, or a choice per value of the selector.
    const auto choose = [&](int i) {
      const bool same = llvm::all_of(m.choices, [&](const ProductDef &p) {
        return productField(p, i) == productField(m.choices[0], i);
      });
      if (m.selector < 0 || same)
        return productField(m.choices[0], i);
      std::string e = productField(m.choices.back(), i);
      for (size_t c = m.choices.size() - 1; c-- > 0;)
        e = "(" + slot32(inst, m.selector) + " == 32'd" + std::to_string(c) + " ? " +
            productField(m.choices[c], i) + " : " + e + ")";
      return e;
    };
    for (int i = 0; i < 4; ++i)
      out.f[i] = choose(i);
    out.shift = choose(-1);
    break;
  }
  case ExtentKind::Matrix:
    out.kind = "EXTENT_MATRIX";
    out.f[0] = slot32(inst, m.rows);
    out.f[1] = slot32(inst, m.cols);
    out.f[2] = ref(m.pitch, "32'd0");
    out.f[3] = ref(m.batch, "32'd1");
    out.s[0] = ref(m.batchStride, "32'd0");
    out.shift = elementLog2(m.sizeBy, 2);
    if (m.trans >= 0)
      out.trans = "packet[" + std::to_string(inst.operands[m.trans].slot.offset) + "]";
    out.distinct = m.distinct ? "1'b1" : "1'b0";
    out.pitchOperand = operandIndex(m.pitch);
    break;
  case ExtentKind::Strided:
    out.kind = "EXTENT_STRIDED";
    for (int i = 0; i < 4; ++i) {
      out.f[i] = slot32(inst, m.sizes[i]);
      out.s[i] = slot32(inst, m.strides[i]);
    }
    out.shift = "4'(" + slot32(inst, m.esize) + ")";
    break;
  }
  return out;
}

} // namespace

namespace {

// mem_operand(packet, k) and disjoint_rule(packet, j): the per-instruction
// data of the check stage (npu_cmd), from the instructions' Memory and
// Disjoints.
void emitMemoryChecks(const IsaModel &model, llvm::raw_ostream &os) {
  const unsigned maxMem = maxMemOperands(model), maxRules = maxDisjoints(model);
  os << "  // Memory operands and overlap rules (isa/base.td, \"Memory operands\").\n";
  os << "  localparam int unsigned MEM_OPERANDS_MAX = " << maxMem << ";\n";
  os << "  localparam int unsigned DISJOINTS_MAX = " << maxRules << ";\n";
  os << "  localparam int unsigned MEM_INDEX_BITS = " << llvm::Log2_32_Ceil(maxMem + 1) << ";\n";
  os << "  localparam int unsigned DISJOINT_INDEX_BITS = " << llvm::Log2_32_Ceil(maxRules + 1)
     << ";\n";
  os << "  localparam logic [7:0] NO_OPERAND = 8'hff;\n";
  os << "  localparam logic [1:0] EXTENT_PRODUCT = 2'd0;\n"
        "  localparam logic [1:0] EXTENT_MATRIX = 2'd1;\n"
        "  localparam logic [1:0] EXTENT_STRIDED = 2'd2;\n";
  // The fields of mem_operand's result, LSB first.
  const std::pair<const char *, unsigned> fields[] = {
      {"VALID", 1},    {"OPERAND", 8},  {"READS", 1},        {"WRITES", 1}, {"KIND", 2},
      {"ADDRESS", 64}, {"F0", 32},      {"F1", 32},          {"F2", 32},    {"F3", 32},
      {"S0", 32},      {"S1", 32},      {"S2", 32},          {"S3", 32},    {"SHIFT", 4},
      {"TRANS", 1},    {"DISTINCT", 1}, {"PITCH_OPERAND", 8}};
  unsigned lsb = 0;
  for (const auto &[name, width] : fields) {
    os << "  localparam int unsigned MO_" << name << "_LSB = " << lsb << ";\n";
    lsb += width;
  }
  os << "  localparam int unsigned MO_BITS = " << lsb << ";\n\n";

  const auto emitCount = [&](const char *name, const char *bits, auto size) {
    os << "  function automatic logic [" << bits << "-1:0] " << name
       << "(input logic [31:0] opcode);\n    case (opcode)\n";
    for (const InstructionDef &inst : model.instructions)
      if (size(inst))
        os << "      OP_" << inst.defName << ": " << name << " = " << bits << "'(" << size(inst)
           << ");\n";
    os << "      default: " << name << " = '0;\n    endcase\n  endfunction\n\n";
  };
  os << "  // How many memory operands and overlap rules an instruction has.\n";
  emitCount("mem_operand_count", "MEM_INDEX_BITS",
            [](const InstructionDef &inst) { return inst.memory.size(); });
  emitCount("disjoint_count", "DISJOINT_INDEX_BITS",
            [](const InstructionDef &inst) { return inst.disjoints.size(); });

  os << "  // Memory operand k of a packet, in check order: VALID (k exists and its\n"
        "  // condition flag is set), OPERAND (its index in the instruction), READS and\n"
        "  // WRITES, the extent KIND, ADDRESS, and the extent's arguments: PRODUCT:\n"
        "  // factors F0..F3 and SHIFT = log2 of the element size; MATRIX: rows F0,\n"
        "  // cols F1, pitch F2 (0 = dense), batch F3, batch stride S0, TRANS,\n"
        "  // DISTINCT, PITCH_OPERAND; STRIDED: sizes F0..F3, signed strides S0..S3,\n"
        "  // SHIFT = log2 of the element size. Only for a packet that decodes.\n";
  os << "  /* verilator lint_off UNUSEDSIGNAL */ // only the operand bits\n";
  os << "  function automatic logic [MO_BITS-1:0] mem_operand(input logic [PACKET_BITS-1:0] "
        "packet,\n"
        "                                                    input logic [MEM_INDEX_BITS-1:0] "
        "k);\n";
  os << "    mem_operand = '0;\n    case (packet[31:0])\n";
  for (const InstructionDef &inst : model.instructions) {
    if (inst.memory.empty())
      continue;
    os << "      OP_" << inst.defName << ":\n        case (k)\n";
    for (size_t k = 0; k < inst.memory.size(); ++k) {
      const MemFields f = memFields(inst, inst.memory[k]);
      os << "          " << k << ": mem_operand = {" << f.pitchOperand << ", " << f.distinct << ", "
         << f.trans << ", " << f.shift << ", " << f.s[3] << ", " << f.s[2] << ", " << f.s[1] << ", "
         << f.s[0] << ",\n            " << f.f[3] << ", " << f.f[2] << ", " << f.f[1] << ", "
         << f.f[0] << ",\n            " << f.address << ", " << f.kind << ", " << f.writes << ", "
         << f.reads << ", " << operandIndex(inst.memory[k].operand) << ", " << f.valid << "};\n";
    }
    os << "          default: ;\n        endcase\n";
  }
  os << "      default: ;\n    endcase\n  endfunction\n\n";

  os << "  // Overlap rule j of a packet, in check order: {IN_PLACE (an exact alias\n"
        "  // is allowed), B, A (memory operand positions), VALID}. A rule applies\n"
        "  // when both its operands are accessed.\n";
  os << "  localparam int unsigned DR_BITS = 2 + 2 * MEM_INDEX_BITS;\n";
  os << "  function automatic logic [DR_BITS-1:0] disjoint_rule(input logic [PACKET_BITS-1:0] "
        "packet,\n"
        "                                                     input logic "
        "[DISJOINT_INDEX_BITS-1:0] j);\n";
  os << "    disjoint_rule = '0;\n    case (packet[31:0])\n";
  for (const InstructionDef &inst : model.instructions) {
    if (inst.disjoints.empty())
      continue;
    os << "      OP_" << inst.defName << ":\n        case (j)\n";
    for (size_t j = 0; j < inst.disjoints.size(); ++j) {
      const DisjointDef &d = inst.disjoints[j];
      std::string inPlace = d.inPlace ? "1'b1" : "1'b0";
      if (d.inPlace && d.inPlaceIf >= 0)
        inPlace =
            "(" + slot32(inst, d.inPlaceIf) + " == 32'd" + std::to_string(d.inPlaceValue) + ")";
      os << "          " << j << ": disjoint_rule = {" << inPlace << ", MEM_INDEX_BITS'(" << d.b
         << "), MEM_INDEX_BITS'(" << d.a << "), 1'b1};\n";
    }
    os << "          default: ;\n        endcase\n";
  }
  os << "      default: ;\n    endcase\n  endfunction\n"
        "  /* verilator lint_on UNUSEDSIGNAL */\n\n";
}

} // namespace

void emitVerilogPackage(const IsaModel &model, llvm::raw_ostream &os) {
  os << "// Generated by npu-tblgen from isa/*.td. Do not edit.\n"
        "// The package is a library of constants; most users need only a few.\n"
        "/* verilator lint_off UNUSEDPARAM */\n"
        "package npu_isa_pkg;\n\n";
  os << "  localparam int unsigned ISA_VERSION_MAJOR = " << model.versionMajor << ";\n";
  os << "  localparam int unsigned ISA_VERSION_MINOR = " << model.versionMinor << ";\n";
  os << "  localparam int unsigned PACKET_BITS = " << kPacketBits << ";\n";
  os << "  localparam int unsigned PACKET_BYTES = " << kPacketBits / 8 << ";\n\n";

  os << "  // Packet fields (bit positions within the little-endian packet).\n";
  for (const PacketFieldDef &f : model.packetFields) {
    os << "  localparam int unsigned PF_" << upper(f.name) << "_LSB = " << f.bits.offset << ";\n";
    os << "  localparam int unsigned PF_" << upper(f.name) << "_WIDTH = " << f.bits.width << ";\n";
  }

  os << "\n  // Hardware configuration (isa/hardware.td).\n";
  for (const HardwareParam &p : model.hardware)
    os << "  localparam int unsigned HW_" << snakeUpper(p.name) << " = " << p.value << ";\n";

  os << "\n  // CSR window (isa/csr.td): byte offsets and bit positions.\n";
  for (const CsrRegisterDef &reg : model.csrs) {
    os << "  localparam logic [11:0] CSR_" << reg.name << " = 12'h"
       << llvm::format_hex_no_prefix(reg.offset, 3) << ";\n";
    for (const CsrBitDef &bit : reg.bits)
      os << "  localparam int unsigned " << reg.name << "_" << bit.name << "_BIT = " << bit.bit
         << ";\n";
  }

  os << "\n  // Opcodes.\n";
  for (const InstructionDef &inst : model.instructions)
    os << "  localparam logic [31:0] OP_" << inst.defName << " = 32'h"
       << llvm::format_hex_no_prefix(inst.opcode, 8) << ";\n";
  os << "  localparam int unsigned NUM_OPCODES = " << model.instructions.size() << ";\n";

  os << "\n  // Enumerations.\n";
  for (const EnumTypeDef &e : model.enums)
    for (const EnumValueDef &v : e.values)
      os << "  localparam int unsigned " << snakeUpper(e.name) << "_" << upper(v.name) << " = "
         << v.value << ";\n";
  // The element sizes of DType, the enumeration of the vector engine's
  // stream types (isa/recipe.td), whose streams move elements of the type a
  // packet names (docs/types.md §1).
  for (const EnumTypeDef &e : model.enums) {
    if (e.name != "DType")
      continue;
    uint64_t largest = 0;
    for (const EnumValueDef &v : e.values)
      largest = std::max<uint64_t>(largest, v.value);
    const unsigned width = std::max(1u, llvm::Log2_64_Ceil(largest + 1));
    const std::string name = llvm::StringRef(snakeUpper(e.name)).lower() + "_bytes_log2";
    os << "  // log2 of the bytes of an element of each " << e.name
       << " value (0 for a value it lacks).\n"
          "  function automatic logic [1:0] "
       << name << "(input logic [" << width - 1 << ":0] value);\n    unique case (value)\n";
    for (const EnumValueDef &v : e.values)
      os << "      " << width << "'d" << v.value << ": " << name << " = 2'd"
         << llvm::Log2_64(v.bytes) << ";\n";
    os << "      default: " << name << " = 2'd0;\n    endcase\n  endfunction\n";
  }

  os << "\n  // Operand slots: <INSTR>_<OPERAND>_LSB / _WIDTH.\n";
  for (const InstructionDef &inst : model.instructions)
    for (const OperandDef &op : inst.operands) {
      std::string base = inst.defName + "_" + upper(op.name);
      os << "  localparam int unsigned " << base << "_LSB = " << op.slot.offset << ";\n";
      os << "  localparam int unsigned " << base << "_WIDTH = " << op.slot.width << ";\n";
      os << "  localparam logic [7:0] " << base << "_INDEX = 8'd" << (&op - inst.operands.data())
         << ";\n";
    }

  os << "\n  // Bits an instruction may set (opcode and operand slots); all others\n"
        "  // are reserved and must be zero.\n";
  os << "  function automatic logic [PACKET_BITS-1:0] used_bits(input logic [31:0] opcode);\n";
  os << "    case (opcode)\n";
  for (const InstructionDef &inst : model.instructions)
    os << "      OP_" << inst.defName << ": used_bits = " << usedMaskLiteral(inst) << ";\n";
  os << "      default: used_bits = '0;\n    endcase\n  endfunction\n\n";

  emitMemoryChecks(model, os);

  os << "  // The operand checks of isa::decode in operand order, the first failing\n"
        "  // operand deciding: {its value, its index in the instruction, status},\n"
        "  // the status OPERAND_INVALID for a value outside its range or\n"
        "  // enumeration, OPERAND_MISALIGNED for a misaligned address (index\n"
        "  // NO_OPERAND with OPERAND_OK). Only meaningful for a known opcode\n"
        "  // without reserved bits set.\n";
  os << "  localparam logic [1:0] OPERAND_OK = 2'd0;\n"
        "  localparam logic [1:0] OPERAND_INVALID = 2'd1;\n"
        "  localparam logic [1:0] OPERAND_MISALIGNED = 2'd2;\n";
  os << "  /* verilator lint_off UNUSEDSIGNAL */ // only the checked operand bits\n";
  os << "  function automatic logic [73:0] operand_check(input logic [PACKET_BITS-1:0] packet);\n";
  os << "    operand_check = {64'd0, NO_OPERAND, OPERAND_OK};\n    case (packet[31:0])\n";
  for (const InstructionDef &inst : model.instructions) {
    std::vector<std::pair<std::string, std::string>> checks;
    for (size_t index = 0; index < inst.operands.size(); ++index)
      for (bool alignment : {false, true})
        if (std::string c = operandFailure(inst.operands[index], alignment); !c.empty())
          checks.emplace_back(c, "{64'(packet[" + std::to_string(inst.operands[index].slot.offset) +
                                     " +: " + std::to_string(inst.operands[index].slot.width) +
                                     "]), " + operandIndex(static_cast<int>(index)) + ", " +
                                     (alignment ? "OPERAND_MISALIGNED" : "OPERAND_INVALID") + "}");
    if (checks.empty())
      continue;
    os << "      OP_" << inst.defName << ":\n";
    for (size_t i = 0; i < checks.size(); ++i)
      os << (i ? "        else if (" : "        if (") << checks[i].first
         << ") operand_check = " << checks[i].second << ";\n";
  }
  os << "      default: ;\n    endcase\n  endfunction\n  /* verilator lint_on UNUSEDSIGNAL */\n\n";

  os << "  // Fault codes (isa/faults.td), the devices' ERROR_CODE.\n  typedef enum logic ["
     << kFaultCodeBits - 1 << ":0] {\n";
  for (const FaultCodeDef &f : model.faultCodes)
    os << "    FAULT_" << upper(f.name) << " = " << kFaultCodeBits << "'d" << f.value
       << (&f == &model.faultCodes.back() ? "" : ",") << "  // " << f.doc << "\n";
  os << "  } fault_e;\n\n";

  const unsigned engineBits = llvm::Log2_32_Ceil(model.engines.size() + 1);
  os << "  // The engine of each instruction (its Cost's Engine); ENGINE_ILLEGAL for\n"
        "  // an opcode that names no instruction.\n  typedef enum logic ["
     << engineBits - 1 << ":0] {\n    ENGINE_ILLEGAL = " << engineBits << "'d0";
  for (size_t e = 0; e < model.engines.size(); ++e)
    os << ",\n    ENGINE_" << upper(model.engines[e]) << " = " << engineBits << "'d" << e + 1;
  os << "\n  } engine_e;\n\n";
  // (Qualified names: Yosys 0.23 does not resolve a package's enumerators
  // inside its functions otherwise.)
  os << "  function automatic engine_e engine_of(input logic [31:0] opcode);\n"
        "    unique case (opcode)\n";
  for (const InstructionDef &inst : model.instructions)
    os << "      npu_isa_pkg::OP_" << inst.defName << ": engine_of = npu_isa_pkg::ENGINE_"
       << upper(inst.engine) << ";\n";
  os << "      default: engine_of = npu_isa_pkg::ENGINE_ILLEGAL;\n    endcase\n  endfunction\n\n";

  os << "  function automatic logic is_known_opcode(input logic [31:0] opcode);\n";
  os << "    case (opcode)\n      ";
  for (size_t i = 0; i < model.instructions.size(); ++i)
    os << "OP_" << model.instructions[i].defName
       << (i + 1 < model.instructions.size() ? (i % 4 == 3 ? ",\n      " : ", ") : ":");
  os << " is_known_opcode = 1'b1;\n      default: is_known_opcode = 1'b0;\n    endcase\n"
        "  endfunction\n\n";

  // ASCII rather than an enumeration: an FST enum table of every opcode
  // is longer than the 512 characters fstapi's readers (GTKWave's) keep.
  size_t longest = 1;
  for (const InstructionDef &inst : model.instructions)
    longest = std::max(longest, inst.mnemonic.size());
  os << "  // An instruction's mnemonic in ASCII, right-aligned (for waveforms:\n"
        "  // GTKWave's ASCII format shows it); \"?\" for an unknown opcode.\n"
        "  localparam int unsigned MNEMONIC_BITS = "
     << 8 * longest
     << ";\n  function automatic logic [MNEMONIC_BITS-1:0] mnemonic_of(input logic [31:0] "
        "opcode);\n    case (opcode)\n";
  for (const InstructionDef &inst : model.instructions)
    os << "      OP_" << inst.defName << ": mnemonic_of = MNEMONIC_BITS'(\"" << inst.mnemonic
       << "\");\n";
  os << "      default: mnemonic_of = MNEMONIC_BITS'(\"?\");\n    endcase\n  endfunction\n\n"
        "endpackage\n/* verilator lint_on UNUSEDPARAM */\n";
}

} // namespace npu::tblgen
