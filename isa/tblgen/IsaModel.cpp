#include "IsaModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

#include <algorithm>
#include <set>

using llvm::Record;
using llvm::Twine;

namespace npu::tblgen {

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

const char *kindEnumerator(OperandKind kind) {
  switch (kind) {
  case OperandKind::Addr: return "Addr";
  case OperandKind::U32: return "U32";
  case OperandKind::I32: return "I32";
  case OperandKind::F32: return "F32";
  case OperandKind::Bits32: return "Bits32";
  case OperandKind::Flag: return "Flag";
  case OperandKind::Enum: return "Enum";
  }
  return "?";
}

uint64_t OperandDef::defaultBits() const {
  uint64_t mask = slot.width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << slot.width) - 1);
  return static_cast<uint64_t>(defaultValue) & mask;
}

const PacketFieldDef *IsaModel::fieldContaining(unsigned bit) const {
  for (const PacketFieldDef &field : packetFields)
    if (bit >= field.bits.offset && bit < field.bits.end())
      return &field;
  return nullptr;
}

namespace {

// Collects diagnostics so that one run reports every problem it can find.
class Loader {
public:
  Loader(const llvm::RecordKeeper &records, IsaModel &model) : records_(records), model_(model) {}

  bool run() {
    loadPacketFields();
    loadEnums();
    loadInstructions();
    loadPrims();
    loadMicroPrograms();
    loadHardware();
    loadCsrs();
    loadVersion();
    if (!failed_)
      model_.hash = computeHash();
    return !failed_;
  }

private:
  void error(const Record *rec, const Twine &message) {
    llvm::PrintError(rec->getLoc(), message);
    failed_ = true;
  }
  void note(const Record *rec, const Twine &message) { llvm::PrintNote(rec->getLoc(), message); }

  // Definitions of a class in the order they were written.
  std::vector<Record *> defsOf(llvm::StringRef className) {
    std::vector<Record *> defs = records_.getAllDerivedDefinitions(className);
    llvm::sort(defs, [](const Record *a, const Record *b) { return a->getID() < b->getID(); });
    return defs;
  }

  bool readRange(const Record *owner, const Record *fieldRec, BitRange &range) {
    int64_t offset = fieldRec->getValueAsInt("Offset");
    int64_t width = fieldRec->getValueAsInt("Width");
    if (width < 1 || offset < 0 || offset + width > kPacketBits) {
      error(owner, "bit range [" + Twine(offset) + ", " + Twine(offset + width) +
                       ") does not fit in the " + Twine(kPacketBits) + "-bit packet");
      return false;
    }
    range.offset = static_cast<unsigned>(offset);
    range.width = static_cast<unsigned>(width);
    return true;
  }

  void loadPacketFields() {
    std::vector<Record *> defs = defsOf("PacketField");
    std::vector<const Record *> owners;
    for (Record *rec : defs) {
      PacketFieldDef field;
      field.name = rec->getValueAsString("Name").str();
      field.ctype = rec->getValueAsString("CType").str();
      field.doc = rec->getValueAsString("Doc").str();
      if (!readRange(rec, rec, field.bits))
        continue;
      if (field.ctype != "u32" && field.ctype != "u64")
        error(rec, "packet field type '" + field.ctype + "' must be u32 or u64");
      else if ((field.ctype == "u32" ? 32u : 64u) != field.bits.width || field.bits.offset % 32)
        error(rec, "packet field '" + field.name + "' of type " + field.ctype +
                       " must be " + (field.ctype == "u32" ? "32" : "64") +
                       " bits wide at a 32-bit boundary");
      for (size_t i = 0; i < model_.packetFields.size(); ++i) {
        if (model_.packetFields[i].bits.overlaps(field.bits)) {
          error(rec, "packet field '" + field.name + "' overlaps field '" +
                         model_.packetFields[i].name + "'");
          note(owners[i], "field '" + model_.packetFields[i].name + "' defined here");
        }
        if (model_.packetFields[i].name == field.name)
          error(rec, "duplicate packet field name '" + field.name + "'");
      }
      model_.packetFields.push_back(field);
      owners.push_back(rec);
    }
    if (defs.empty()) {
      llvm::PrintError("no PacketField definitions: the packet layout is missing");
      failed_ = true;
      return;
    }
    std::vector<bool> covered(kPacketBits, false);
    for (const PacketFieldDef &field : model_.packetFields)
      for (unsigned b = field.bits.offset; b < field.bits.end(); ++b)
        covered[b] = true;
    for (unsigned b = 0; b < kPacketBits; ++b) {
      if (covered[b])
        continue;
      unsigned end = b;
      while (end < kPacketBits && !covered[end])
        ++end;
      error(defs.back(), "packet bits [" + Twine(b) + ", " + Twine(end) +
                             ") are not covered by any PacketField");
      b = end;
    }
    llvm::sort(model_.packetFields, [](const PacketFieldDef &a, const PacketFieldDef &b) {
      return a.bits.offset < b.bits.offset;
    });
    const PacketFieldDef *opcodeField = nullptr;
    for (const PacketFieldDef &field : model_.packetFields)
      if (field.name == "opcode")
        opcodeField = &field;
    if (!opcodeField || opcodeField->bits.offset != 0 || opcodeField->bits.width != 32) {
      llvm::PrintError(defs.front()->getLoc(),
                       "the packet needs a 32-bit field named 'opcode' at bit 0");
      failed_ = true;
    }
  }

  void loadEnums() {
    std::vector<Record *> defs = defsOf("EnumType");
    // Operands point into model_.enums, so it must never reallocate.
    model_.enums.reserve(defs.size());
    for (Record *rec : defs) {
      EnumTypeDef type;
      type.name = rec->getValueAsString("Name").str();
      type.doc = rec->getValueAsString("Doc").str();
      std::set<int64_t> seenValues;
      std::set<std::string> seenNames;
      for (Record *valueRec : rec->getValueAsListOfDefs("Values")) {
        EnumValueDef value;
        value.name = valueRec->getValueAsString("Name").str();
        value.value = valueRec->getValueAsInt("Value");
        value.doc = valueRec->getValueAsString("Doc").str();
        if (!isIdentifier(value.name))
          error(rec, "enum value name '" + value.name + "' of " + type.name +
                         " is not an identifier");
        if (value.value < 0 || value.value > 0xffffffffLL)
          error(rec, "enum value " + value.name + " = " + Twine(value.value) +
                         " is not a 32-bit unsigned value");
        if (!seenValues.insert(value.value).second)
          error(rec, "duplicate value " + Twine(value.value) + " in enum " + type.name);
        if (!seenNames.insert(value.name).second)
          error(rec, "duplicate name '" + value.name + "' in enum " + type.name);
        type.values.push_back(value);
      }
      if (type.values.empty())
        error(rec, "enum " + type.name + " has no values");
      model_.enums.push_back(type);
      enumByRecord_[rec] = &model_.enums.back();
    }
  }

  static bool isIdentifier(const std::string &s) {
    if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
      return false;
    return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
  }

  static std::optional<OperandKind> kindFromName(llvm::StringRef name) {
    static const std::pair<const char *, OperandKind> kinds[] = {
        {"addr", OperandKind::Addr}, {"u32", OperandKind::U32},   {"i32", OperandKind::I32},
        {"f32", OperandKind::F32},   {"bits32", OperandKind::Bits32}, {"flag", OperandKind::Flag},
        {"enum", OperandKind::Enum}};
    for (auto &[n, k] : kinds)
      if (name == n)
        return k;
    return std::nullopt;
  }

  // Checks one operand on its own; `inst` is the record errors point at.
  bool loadOperand(const Record *inst, const std::string &mnemonic, const Record *rec,
                   OperandDef &op) {
    op.name = rec->getValueAsString("Name").str();
    op.doc = rec->getValueAsString("Doc").str();
    const std::string where = "operand '" + op.name + "' of '" + mnemonic + "'";
    if (!isIdentifier(op.name)) {
      error(inst, where + ": name is not an identifier");
      return false;
    }
    const Record *kindRec = rec->getValueAsDef("Kind");
    auto kind = kindFromName(kindRec->getValueAsString("Name"));
    if (!kind) {
      error(inst, where + ": unknown operand kind '" + kindRec->getValueAsString("Name") + "'");
      return false;
    }
    op.kind = *kind;
    if (!readRange(inst, rec->getValueAsDef("Slot"), op.slot))
      return false;
    int64_t minWidth = kindRec->getValueAsInt("MinWidth");
    int64_t maxWidth = kindRec->getValueAsInt("MaxWidth");
    if (op.slot.width < minWidth || op.slot.width > maxWidth) {
      error(inst, where + ": a " + kindName(op.kind) + " operand needs a slot of " +
                      (minWidth == maxWidth ? Twine(minWidth) : Twine(minWidth) + ".." + Twine(maxWidth)) +
                      " bits, but its slot is " + Twine(op.slot.width) + " bits wide");
      return false;
    }
    // A slot lies inside one packet field or is a run of whole fields, so that
    // every decoder reads it with whole-word loads or one shift and mask.
    const PacketFieldDef *first = model_.fieldContaining(op.slot.offset);
    const PacketFieldDef *last = model_.fieldContaining(op.slot.end() - 1);
    if (!first || !last) {
      error(inst, where + ": slot is not covered by the packet fields");
      return false;
    }
    if (first != last && (first->bits.offset != op.slot.offset || last->bits.end() != op.slot.end())) {
      error(inst, where + ": slot [" + Twine(op.slot.offset) + ", " + Twine(op.slot.end()) +
                      ") straddles packet fields '" + first->name + "' and '" + last->name +
                      "' without covering them whole");
      return false;
    }
    if (first->name == "opcode") {
      error(inst, where + ": slot overlaps the opcode field");
      return false;
    }
    op.optional = rec->getValueAsBit("Optional");
    op.defaultValue = rec->getValueAsInt("Default");
    op.align = static_cast<uint64_t>(rec->getValueAsInt("Align"));
    if (op.align == 0 || (op.align & (op.align - 1))) {
      error(inst, where + ": alignment " + Twine(op.align) + " is not a power of two");
      return false;
    }
    if (op.kind != OperandKind::Addr && op.align != 1) {
      error(inst, where + ": only address operands have an alignment");
      return false;
    }

    const int64_t width = op.slot.width;
    const int64_t rawMax = width >= 63 ? INT64_MAX : (int64_t(1) << width) - 1;
    int64_t lowest = 0, highest = rawMax;
    if (op.kind == OperandKind::I32) {
      lowest = -(int64_t(1) << (width - 1));
      highest = (int64_t(1) << (width - 1)) - 1;
    }
    if (op.kind == OperandKind::Enum) {
      if (rec->isValueUnset("Enum")) {
        error(inst, where + ": enum operand names no EnumType");
        return false;
      }
      op.enumType = enumByRecord_.lookup(rec->getValueAsDef("Enum"));
      if (!op.enumType)
        return false;
      for (const EnumValueDef &value : op.enumType->values)
        if (value.value > rawMax) {
          error(inst, where + ": enum value " + value.name + " = " + Twine(value.value) +
                          " does not fit in the " + Twine(width) + "-bit slot");
          return false;
        }
    }
    bool hasMin = !rec->isValueUnset("Min"), hasMax = !rec->isValueUnset("Max");
    if (hasMin || hasMax) {
      if (op.kind != OperandKind::U32 && op.kind != OperandKind::I32) {
        error(inst, where + ": only u32 and i32 operands take a range");
        return false;
      }
      op.hasRange = true;
      op.min = hasMin ? rec->getValueAsInt("Min") : lowest;
      op.max = hasMax ? rec->getValueAsInt("Max") : highest;
      if (op.min < lowest || op.max > highest) {
        error(inst, where + ": range [" + Twine(op.min) + ", " + Twine(op.max) +
                        "] does not fit in a " + Twine(width) + "-bit " + kindName(op.kind) +
                        " slot");
        return false;
      }
      if (op.min > op.max) {
        error(inst, where + ": empty range [" + Twine(op.min) + ", " + Twine(op.max) + "]");
        return false;
      }
    }
    if (op.optional) {
      bool fits;
      switch (op.kind) {
      case OperandKind::Enum:
        fits = llvm::any_of(op.enumType->values,
                            [&](const EnumValueDef &v) { return v.value == op.defaultValue; });
        break;
      case OperandKind::U32:
      case OperandKind::I32:
        fits = op.hasRange ? (op.defaultValue >= op.min && op.defaultValue <= op.max)
                           : (op.defaultValue >= lowest && op.defaultValue <= highest);
        break;
      case OperandKind::Addr:
        fits = op.defaultValue % static_cast<int64_t>(op.align) == 0;
        break;
      default:
        fits = op.defaultValue >= 0 && op.defaultValue <= rawMax;
      }
      if (!fits) {
        error(inst, where + ": default value " + Twine(op.defaultValue) +
                        " is not a valid value of the operand");
        return false;
      }
    } else if (op.kind == OperandKind::Flag) {
      error(inst, where + ": flag operands must be optional");
      return false;
    }
    return true;
  }

  bool parseSyntax(const Record *rec, InstructionDef &inst) {
    const std::string &s = inst.syntax;
    std::vector<int> uses(inst.operands.size(), 0);
    bool ok = true;
    bool lastWasOperand = false;
    for (size_t i = 0; i < s.size();) {
      char c = s[i];
      if (c == ' ') {
        ++i;
        continue;
      }
      if (c == '$') {
        size_t j = i + 1;
        while (j < s.size() && (llvm::isAlnum(s[j]) || s[j] == '_'))
          ++j;
        std::string name = s.substr(i + 1, j - i - 1);
        auto it = llvm::find_if(inst.operands, [&](const OperandDef &o) { return o.name == name; });
        if (name.empty()) {
          error(rec, "syntax of '" + inst.mnemonic + "': '$' at column " + Twine(i + 1) +
                         " is not followed by an operand name");
          ok = false;
        } else if (it == inst.operands.end()) {
          error(rec, "syntax of '" + inst.mnemonic + "': placeholder '$" + name +
                         "' names no operand");
          ok = false;
        } else {
          int index = static_cast<int>(it - inst.operands.begin());
          if (lastWasOperand) {
            error(rec, "syntax of '" + inst.mnemonic + "': placeholder '$" + name +
                           "' follows another placeholder without punctuation");
            ok = false;
          }
          if (it->optional) {
            error(rec, "syntax of '" + inst.mnemonic + "': optional operand '" + name +
                           "' must not appear in the syntax (it is written " + name + "=value)");
            ok = false;
          }
          ++uses[index];
          inst.syntaxItems.push_back({index, 0});
        }
        lastWasOperand = true;
        i = j;
        continue;
      }
      if (llvm::StringRef(",[]()").contains(c)) {
        inst.syntaxItems.push_back({-1, c});
        lastWasOperand = false;
        ++i;
        continue;
      }
      error(rec, "syntax of '" + inst.mnemonic + "': unexpected character '" + Twine(c) +
                     "' (only $operand placeholders and , [ ] ( ) are allowed)");
      return false;
    }
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      const OperandDef &op = inst.operands[i];
      if (!op.optional && uses[i] == 0) {
        error(rec, "syntax of '" + inst.mnemonic + "' does not cover required operand '" +
                       op.name + "'");
        ok = false;
      } else if (uses[i] > 1) {
        error(rec, "syntax of '" + inst.mnemonic + "' names operand '" + op.name + "' " +
                       Twine(uses[i]) + " times");
        ok = false;
      }
    }
    return ok;
  }

  void loadInstructions() {
    std::map<int64_t, const Record *> byOpcode;
    std::map<std::string, const Record *> byMnemonic;
    for (Record *rec : defsOf("Instruction")) {
      InstructionDef inst;
      inst.defName = rec->getName().str();
      inst.mnemonic = rec->getValueAsString("Mnemonic").str();
      inst.family = rec->getValueAsString("Family").str();
      inst.syntax = rec->getValueAsString("Syntax").str();
      inst.doc = rec->getValueAsString("Doc").str();
      inst.semantics = rec->getValueAsString("Semantics").str();
      if (rec->isAnonymous()) {
        error(rec, "instructions must be named definitions");
        continue;
      }
      if (!isIdentifier(inst.mnemonic) ||
          llvm::any_of(inst.mnemonic, [](char c) { return c >= 'A' && c <= 'Z'; })) {
        error(rec, "mnemonic '" + inst.mnemonic + "' must be a lower-case identifier");
        continue;
      }
      int64_t opcode = rec->getValueAsInt("Opcode");
      if (opcode < 0 || opcode > 0xffffffffLL) {
        error(rec, "opcode " + Twine(opcode) + " of '" + inst.mnemonic +
                       "' does not fit in the 32-bit opcode field");
        continue;
      }
      inst.opcode = static_cast<uint32_t>(opcode);
      if (auto [it, inserted] = byOpcode.emplace(opcode, rec); !inserted) {
        error(rec, "duplicate opcode 0x" + llvm::utohexstr(opcode) + ": '" + inst.mnemonic +
                       "' reuses the opcode of '" + it->second->getValueAsString("Mnemonic") + "'");
        note(it->second, "first use of opcode 0x" + llvm::utohexstr(opcode));
      }
      if (auto [it, inserted] = byMnemonic.emplace(inst.mnemonic, rec); !inserted) {
        error(rec, "duplicate mnemonic '" + inst.mnemonic + "'");
        note(it->second, "first definition of '" + inst.mnemonic + "'");
      }

      bool operandsOk = true;
      for (Record *opRec : rec->getValueAsListOfDefs("Operands")) {
        OperandDef op;
        if (!loadOperand(rec, inst.mnemonic, opRec, op)) {
          operandsOk = false;
          continue;
        }
        for (const OperandDef &other : inst.operands) {
          if (other.name == op.name) {
            error(rec, "'" + inst.mnemonic + "' has two operands named '" + op.name + "'");
            operandsOk = false;
          } else if (other.slot.overlaps(op.slot)) {
            error(rec, "'" + inst.mnemonic + "': slot of operand '" + op.name + "' [" +
                           Twine(op.slot.offset) + ", " + Twine(op.slot.end()) +
                           ") overlaps operand '" + other.name + "' [" + Twine(other.slot.offset) +
                           ", " + Twine(other.slot.end()) + ")");
            operandsOk = false;
          }
        }
        inst.operands.push_back(op);
      }
      if (!operandsOk || !parseSyntax(rec, inst))
        continue;

      const Record *cost = rec->getValueAsDef("Cost");
      inst.engine = cost->getValueAsDef("Engine")->getValueAsString("Name").str();
      inst.setupCycles = cost->getValueAsInt("Setup");
      inst.perElementCycles = cost->getValueAsInt("PerElement");
      if (inst.setupCycles < 0 || inst.setupCycles > 0xffff || inst.perElementCycles < 0 ||
          inst.perElementCycles > 0xffff) {
        error(rec, "cost of '" + inst.mnemonic + "' must be within 0..65535 cycles");
        continue;
      }
      inst.usedBits.assign(kPacketBits, false);
      for (unsigned b = 0; b < 32; ++b)
        inst.usedBits[b] = true;
      for (const OperandDef &op : inst.operands)
        for (unsigned b = op.slot.offset; b < op.slot.end(); ++b)
          inst.usedBits[b] = true;
      model_.instructions.push_back(std::move(inst));
    }
    for (Record *engine : defsOf("Engine"))
      model_.engineDocs[engine->getValueAsString("Name").str()] =
          engine->getValueAsString("Doc").str();
    if (model_.instructions.empty() && !failed_) {
      llvm::PrintError("no Instruction definitions");
      failed_ = true;
    }
    llvm::sort(model_.instructions, [](const InstructionDef &a, const InstructionDef &b) {
      return a.opcode < b.opcode;
    });
    for (const InstructionDef &inst : model_.instructions)
      if (!llvm::is_contained(model_.families, inst.family))
        model_.families.push_back(inst.family);
  }

  void loadPrims() {
    for (Record *rec : defsOf("Prim")) {
      PrimDef prim{rec->getValueAsString("Name").str(),
                   static_cast<unsigned>(rec->getValueAsInt("NumSrc")),
                   rec->getValueAsString("Doc").str()};
      if (prim.numSrc < 1 || prim.numSrc > 3)
        error(rec, "primitive '" + prim.name + "' must take 1 to 3 sources");
      primByRecord_[rec] = model_.prims.size();
      model_.prims.push_back(prim);
    }
  }

  void loadMicroPrograms() {
    for (Record *rec : defsOf("MicroProgram")) {
      MicroProgramDef prog;
      prog.defName = rec->getName().str();
      prog.name = rec->getValueAsString("Name").str();
      prog.result = rec->getValueAsString("Result").str();
      prog.doc = rec->getValueAsString("Doc").str();
      std::set<std::string> defined;
      for (llvm::StringRef input : rec->getValueAsListOfStrings("Inputs")) {
        prog.inputs.push_back(input.str());
        defined.insert(input.str());
      }
      bool ok = true;
      const llvm::ListInit *steps = rec->getValueAsListInit("Steps");
      for (unsigned i = 0; i < steps->size(); ++i) {
        const auto *dag = llvm::dyn_cast<llvm::DagInit>(steps->getElement(i));
        const std::string where = "micro-program '" + prog.name + "' step " + std::to_string(i);
        const auto *opDef = dag ? llvm::dyn_cast<llvm::DefInit>(dag->getOperator()) : nullptr;
        if (!opDef || !primByRecord_.count(opDef->getDef())) {
          error(rec, where + ": operator is not a primitive (Prim)");
          ok = false;
          continue;
        }
        MicroStep step;
        step.prim = &model_.prims[primByRecord_[opDef->getDef()]];
        step.dest = dag->getNameStr().str();
        if (step.dest.empty()) {
          error(rec, where + " (" + step.prim->name + "): result register missing, write (" +
                         step.prim->name + ":$dest ...)");
          ok = false;
        }
        if (dag->getNumArgs() != step.prim->numSrc) {
          error(rec, where + ": " + step.prim->name + " takes " + Twine(step.prim->numSrc) +
                         " sources, got " + Twine(dag->getNumArgs()));
          ok = false;
        }
        for (unsigned a = 0; a < dag->getNumArgs(); ++a) {
          MicroArg arg;
          if (const auto *intInit = llvm::dyn_cast<llvm::IntInit>(dag->getArg(a))) {
            int64_t v = intInit->getValue();
            if (v < INT32_MIN || v > 0xffffffffLL) {
              error(rec, where + ": constant " + Twine(v) + " is not a 32-bit pattern");
              ok = false;
            }
            arg.constant = static_cast<uint32_t>(v);
          } else if (llvm::isa<llvm::UnsetInit>(dag->getArg(a)) && !dag->getArgNameStr(a).empty()) {
            arg.isRegister = true;
            arg.reg = dag->getArgNameStr(a).str();
            if (!defined.count(arg.reg)) {
              error(rec, where + ": register $" + arg.reg + " is read before it is written");
              ok = false;
            }
          } else {
            error(rec, where + ": source " + Twine(a) + " must be $register or an integer constant");
            ok = false;
          }
          step.args.push_back(arg);
        }
        defined.insert(step.dest);
        prog.steps.push_back(step);
      }
      if (ok && !defined.count(prog.result)) {
        error(rec, "micro-program '" + prog.name + "': result register $" + prog.result +
                       " is never written");
        ok = false;
      }
      if (ok)
        model_.programs.push_back(std::move(prog));
    }
  }

  void loadHardware() {
    std::vector<Record *> defs = defsOf("HardwareConfig");
    if (defs.size() != 1) {
      if (defs.empty())
        llvm::PrintError("exactly one HardwareConfig definition is required, found none");
      else
        llvm::PrintError(defs[1]->getLoc(), "exactly one HardwareConfig definition is required");
      failed_ = true;
      return;
    }
    const Record *rec = defs.front();
    for (const llvm::RecordVal &value : rec->getValues()) {
      std::string name = value.getName().str();
      if (rec->isValueUnset(name)) {
        error(rec, "hardware parameter " + name + " is not set");
        continue;
      }
      int64_t v = rec->getValueAsInt(name);
      if (v < 1 || v > 0xffffff) {
        error(rec, "hardware parameter " + name + " = " + Twine(v) + " must be in 1..16777215");
        continue;
      }
      if ((name == "MatrixTile" || name == "VectorLanes" || name == "AxiDataBytes" ||
           name == "RingEntries") &&
          (v & (v - 1))) {
        error(rec, "hardware parameter " + name + " = " + Twine(v) + " must be a power of two");
        continue;
      }
      model_.hardware.push_back({name, v});
    }
  }

  void loadCsrs() {
    std::map<uint32_t, const Record *> byOffset;
    std::map<std::string, const Record *> byName;
    std::map<const Record *, size_t> index;
    for (Record *rec : defsOf("CsrRegister")) {
      CsrRegisterDef reg;
      reg.name = rec->getValueAsString("Name").str();
      reg.access = rec->getValueAsString("Access").str();
      reg.doc = rec->getValueAsString("Doc").str();
      int64_t offset = rec->getValueAsInt("Offset");
      if (offset < 0 || offset + 4 > kCsrWindowBytes || offset % 4) {
        error(rec, "register " + reg.name + " offset " + Twine(offset) +
                       " must be 4-byte aligned inside the " + Twine(kCsrWindowBytes) +
                       "-byte window");
        continue;
      }
      reg.offset = static_cast<uint32_t>(offset);
      if (reg.access != "ro" && reg.access != "rw" && reg.access != "wo")
        error(rec, "register " + reg.name + " access '" + reg.access + "' must be ro, rw or wo");
      if (!isIdentifier(reg.name))
        error(rec, "register name '" + reg.name + "' is not an identifier");
      if (auto [it, inserted] = byOffset.emplace(reg.offset, rec); !inserted) {
        error(rec, "register " + reg.name + " reuses offset 0x" + llvm::utohexstr(reg.offset));
        note(it->second, "first register at that offset");
      }
      if (!byName.emplace(reg.name, rec).second)
        error(rec, "duplicate register name " + reg.name);
      index[rec] = model_.csrs.size();
      model_.csrs.push_back(reg);
    }
    for (Record *rec : defsOf("CsrBit")) {
      const Record *regRec = rec->getValueAsDef("Register");
      CsrBitDef bit{rec->getValueAsString("Name").str(),
                    static_cast<unsigned>(rec->getValueAsInt("Bit")),
                    rec->getValueAsString("Doc").str()};
      if (!index.count(regRec))
        continue; // the register itself was rejected
      CsrRegisterDef &reg = model_.csrs[index[regRec]];
      if (rec->getValueAsInt("Bit") < 0 || bit.bit > 31) {
        error(rec, "bit " + bit.name + " of " + reg.name + " must be in 0..31");
        continue;
      }
      for (const CsrBitDef &other : reg.bits)
        if (other.bit == bit.bit || other.name == bit.name)
          error(rec, "bit " + bit.name + " clashes with bit " + other.name + " of " + reg.name);
      reg.bits.push_back(bit);
    }
    llvm::sort(model_.csrs, [](const CsrRegisterDef &a, const CsrRegisterDef &b) {
      return a.offset < b.offset;
    });
  }

  void loadVersion() {
    const Record *rec = records_.getDef("IsaVersion");
    if (!rec) {
      llvm::PrintError("missing 'def IsaVersion' with Major and Minor");
      failed_ = true;
      return;
    }
    model_.versionMajor = rec->getValueAsInt("Major");
    model_.versionMinor = rec->getValueAsInt("Minor");
  }

  // FNV-1a over everything that determines the binary encoding, so that a
  // container can tell whether it was produced for this exact ISA.
  uint64_t computeHash() const {
    uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&h](const std::string &s) {
      for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
      }
      h ^= 0xff;
      h *= 0x100000001b3ULL;
    };
    for (const PacketFieldDef &f : model_.packetFields)
      mix(f.name + ":" + std::to_string(f.bits.offset) + ":" + std::to_string(f.bits.width));
    for (const InstructionDef &inst : model_.instructions) {
      mix(inst.mnemonic + "=" + std::to_string(inst.opcode) + ":" + inst.syntax);
      for (const OperandDef &op : inst.operands) {
        std::string s = op.name + ":" + kindName(op.kind) + ":" + std::to_string(op.slot.offset) +
                        ":" + std::to_string(op.slot.width) + ":" + std::to_string(op.align) +
                        ":" + std::to_string(op.optional) + ":" + std::to_string(op.defaultValue);
        if (op.hasRange)
          s += ":" + std::to_string(op.min) + ".." + std::to_string(op.max);
        if (op.enumType)
          for (const EnumValueDef &v : op.enumType->values)
            s += ":" + v.name + "=" + std::to_string(v.value);
        mix(s);
      }
    }
    return h;
  }

  const llvm::RecordKeeper &records_;
  IsaModel &model_;
  bool failed_ = false;
  llvm::DenseMap<const Record *, const EnumTypeDef *> enumByRecord_;
  std::map<const Record *, size_t> primByRecord_;
};

} // namespace

bool loadIsa(const llvm::RecordKeeper &records, IsaModel &model) {
  return Loader(records, model).run();
}

} // namespace npu::tblgen
