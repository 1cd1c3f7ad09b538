#include "IsaModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
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

uint64_t OperandDef::acceptMask() const {
  if (acceptsAll())
    return ~uint64_t(0);
  uint64_t mask = 0;
  for (int64_t value : accepts)
    mask |= uint64_t(1) << value;
  return mask;
}

const EnumValueDef *EnumTypeDef::find(int64_t value) const {
  for (const EnumValueDef &v : values)
    if (v.value == value)
      return &v;
  return nullptr;
}

const PacketFieldDef *IsaModel::fieldContaining(unsigned bit) const {
  for (const PacketFieldDef &field : packetFields)
    if (bit >= field.bits.offset && bit < field.bits.end())
      return &field;
  return nullptr;
}

const char *extentKindName(ExtentKind kind) {
  switch (kind) {
  case ExtentKind::Product: return "Product";
  case ExtentKind::Matrix: return "Matrix";
  case ExtentKind::Strided: return "Strided";
  }
  return "?";
}

const char *memContentName(MemContent content) {
  switch (content) {
  case MemContent::F32: return "F32";
  case MemContent::Bytes: return "Bytes";
  case MemContent::Index: return "Index";
  case MemContent::Hyper: return "Hyper";
  }
  return "?";
}

unsigned maxMemOperands(const IsaModel &model) {
  size_t n = 1;
  for (const InstructionDef &inst : model.instructions)
    n = std::max(n, inst.memory.size());
  return static_cast<unsigned>(n);
}

unsigned maxDisjoints(const IsaModel &model) {
  size_t n = 1;
  for (const InstructionDef &inst : model.instructions)
    n = std::max(n, inst.disjoints.size());
  return static_cast<unsigned>(n);
}

std::string recipeSourceName(unsigned code) {
  if (code < SrcOB0)
    return "IB" + std::to_string(code);
  if (code < SrcZero)
    return "OB" + std::to_string(code - SrcOB0);
  if (code == SrcZero)
    return "ZERO";
  if (code >= SrcT0 && code < SrcT0 + kRecipeTemps)
    return "T" + std::to_string(code - SrcT0);
  if (code == SrcOne)
    return "ONE";
  if (code == SrcCols)
    return "COLS";
  if (code == SrcCol)
    return "COL";
  if (code == SrcRow)
    return "ROW";
  if (code >= SrcK0 && code < SrcK0 + kRecipeScalars)
    return "K" + std::to_string(code - SrcK0);
  return "";
}

std::string familyListMacro(const std::string &family) {
  return "NPU_FOR_EACH_" + llvm::StringRef(family).upper();
}

std::string classListMacro(const std::string &className) {
  const auto isUpper = [](char c) { return c >= 'A' && c <= 'Z'; };
  std::string snake;
  for (size_t i = 0; i < className.size(); ++i) {
    const char c = className[i];
    if (i > 0 && isUpper(c) && !isUpper(className[i - 1]) && className[i - 1] != '_')
      snake += '_';
    snake += llvm::toUpper(c);
  }
  return "NPU_FOR_EACH_" + snake;
}

int64_t IsaModel::hardwareParam(const std::string &name) const {
  for (const HardwareParam &p : hardware)
    if (p.name == name)
      return p.value;
  return 0;
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
    loadHardware();
    loadPrims();
    loadMicroPrograms();
    loadCsrs();
    linkPrograms();
    linkScalarForms();
    loadRecipes();
    loadFaultCodes();
    loadVersion();
    if (!failed_)
      model_.hash = computeHash();
    return !failed_;
  }

private:
  void error(const Record *rec, const Twine &message) {
    llvm::PrintError((recipeOwner_ ? recipeOwner_ : rec)->getLoc(), message);
    failed_ = true;
  }
  void note(const Record *rec, const Twine &message) { llvm::PrintNote(rec->getLoc(), message); }

  // ScalarForm / ReverseScalarForm of a binary instruction name a ScalarOp
  // definition: the bridge lowers `tensor op scalar` through them. Both
  // empty: the instruction has no scalar form (POW's is the unary POWS).
  void linkScalarForms() {
    for (InstructionDef &inst : model_.instructions) {
      const Record *rec = records_.getDef(inst.defName);
      for (auto [field, target] : {std::pair{"ScalarForm", &inst.scalarForm},
                                   std::pair{"ReverseScalarForm", &inst.reverseScalarForm}}) {
        if (!rec->getValue(field))
          continue;
        const std::string name = rec->getValueAsString(field).str();
        if (name.empty())
          continue;
        const Record *form = records_.getDef(name);
        if (!form || !form->isSubClassOf("ScalarOp")) {
          error(rec, Twine(field) + " of '" + inst.mnemonic + "' is '" + name +
                         "', which is not a ScalarOp definition");
          continue;
        }
        *target = name;
      }
      if (inst.scalarForm.empty() != inst.reverseScalarForm.empty())
        error(rec, "'" + inst.mnemonic +
                       "' names one of ScalarForm and ReverseScalarForm: give both or neither");
    }
  }

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
        error(rec, "packet field '" + field.name + "' of type " + field.ctype + " must be " +
                       (field.ctype == "u32" ? "32" : "64") + " bits wide at a 32-bit boundary");
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
        const int64_t bytes = valueRec->getValueAsInt("Bytes");
        if (bytes != 0 && bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
          error(rec, "enum value " + value.name + " of " + type.name + ": element size " +
                         Twine(bytes) + " is not 1, 2, 4 or 8");
        else
          value.bytes = static_cast<unsigned>(bytes);
        if (!type.values.empty() && (value.bytes == 0) != (type.values.front().bytes == 0))
          error(rec, "enum " + type.name + ": value " + value.name +
                         (value.bytes ? " has an element size and " : " has no element size but ") +
                         type.values.front().name + (value.bytes ? " has none" : " has one") +
                         " (an enumeration of types sizes every value)");
        if (!isIdentifier(value.name) || isCppKeyword(value.name))
          error(rec, "enum value name '" + value.name + "' of " + type.name +
                         " is not an identifier (or is a C++ keyword)");
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

  // Enum values become C++ enumerators (npu_isa_gen.h).
  static bool isCppKeyword(const std::string &s) {
    static const char *const keywords[] = {
        "alignas",  "alignof",  "and",    "asm",     "auto",      "bool",      "break",
        "case",     "catch",    "char",   "class",   "const",     "constexpr", "continue",
        "default",  "delete",   "do",     "double",  "else",      "enum",      "explicit",
        "export",   "extern",   "false",  "float",   "for",       "friend",    "goto",
        "if",       "inline",   "int",    "long",    "mutable",   "namespace", "new",
        "not",      "operator", "or",     "private", "protected", "public",    "register",
        "return",   "short",    "signed", "sizeof",  "static",    "struct",    "switch",
        "template", "this",     "throw",  "true",    "try",       "typedef",   "typename",
        "union",    "unsigned", "using",  "virtual", "void",      "volatile",  "while",
        "xor"};
    return llvm::is_contained(keywords, s);
  }

  static std::optional<OperandKind> kindFromName(llvm::StringRef name) {
    static const std::pair<const char *, OperandKind> kinds[] = {
        {"addr", OperandKind::Addr}, {"u32", OperandKind::U32},       {"i32", OperandKind::I32},
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
                      (minWidth == maxWidth ? Twine(minWidth)
                                            : Twine(minWidth) + ".." + Twine(maxWidth)) +
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
    if (first != last &&
        (first->bits.offset != op.slot.offset || last->bits.end() != op.slot.end())) {
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
      if (!loadAccepts(inst, rec, op, where))
        return false;
    } else if (!rec->getValueAsListOfStrings("Accepts").empty()) {
      error(inst, where + ": only enum operands take Accepts");
      return false;
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
      case OperandKind::Enum: fits = llvm::is_contained(op.accepts, op.defaultValue); break;
      case OperandKind::U32:
      case OperandKind::I32:
        fits = op.hasRange ? (op.defaultValue >= op.min && op.defaultValue <= op.max)
                           : (op.defaultValue >= lowest && op.defaultValue <= highest);
        break;
      case OperandKind::Addr: fits = op.defaultValue % static_cast<int64_t>(op.align) == 0; break;
      default: fits = op.defaultValue >= 0 && op.defaultValue <= rawMax;
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

  // The values an enum operand accepts: its Accepts (names of values of
  // its enumeration, each once), or every value.
  bool loadAccepts(const Record *inst, const Record *rec, OperandDef &op,
                   const std::string &where) {
    const std::vector<llvm::StringRef> names = rec->getValueAsListOfStrings("Accepts");
    if (names.empty()) {
      for (const EnumValueDef &value : op.enumType->values)
        op.accepts.push_back(value.value);
    }
    for (llvm::StringRef name : names) {
      const auto value =
          llvm::find_if(op.enumType->values, [&](const EnumValueDef &v) { return v.name == name; });
      if (value == op.enumType->values.end()) {
        error(inst,
              where + ": accepts '" + name + "', which is not a value of " + op.enumType->name);
        return false;
      }
      if (llvm::is_contained(op.accepts, value->value)) {
        error(inst, where + ": accepts '" + name + "' twice");
        return false;
      }
      op.accepts.push_back(value->value);
    }
    llvm::sort(op.accepts);
    if (!names.empty() && op.accepts.back() >= 64) {
      error(inst, where + ": an operand that accepts enum value " + Twine(op.accepts.back()) +
                      " (64 or more) cannot be restricted; accept all values");
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
          error(rec,
                "syntax of '" + inst.mnemonic + "': placeholder '$" + name + "' names no operand");
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
        error(rec, "syntax of '" + inst.mnemonic + "' does not cover required operand '" + op.name +
                       "'");
        ok = false;
      } else if (uses[i] > 1) {
        error(rec, "syntax of '" + inst.mnemonic + "' names operand '" + op.name + "' " +
                       Twine(uses[i]) + " times");
        ok = false;
      }
    }
    return ok;
  }

  // The index of the operand `name` of `inst` whose kind is one of `kinds`,
  // or -1 after reporting why not. `what` names the reference in errors.
  int operandRef(const Record *rec, const InstructionDef &inst, const std::string &name,
                 std::initializer_list<OperandKind> kinds, const std::string &what) {
    auto it = llvm::find_if(inst.operands, [&](const OperandDef &o) { return o.name == name; });
    if (it == inst.operands.end()) {
      error(rec, "'" + inst.mnemonic + "': " + what + " names no operand '" + name + "'");
      return -1;
    }
    if (!llvm::is_contained(kinds, it->kind)) {
      error(rec, "'" + inst.mnemonic + "': " + what + " '" + name + "' is a " + kindName(it->kind) +
                     " operand");
      return -1;
    }
    return static_cast<int>(it - inst.operands.begin());
  }

  // An optional reference: "" is -1 without an error.
  int optionalRef(const Record *rec, const InstructionDef &inst, const std::string &name,
                  std::initializer_list<OperandKind> kinds, const std::string &what, bool &ok) {
    if (name.empty())
      return -1;
    int index = operandRef(rec, inst, name, kinds, what);
    ok = ok && index >= 0;
    return index;
  }

  // A size factor: a u32 operand of at least 1, so that the products of the
  // check stage are exact whatever order they are computed in.
  int factorRef(const Record *rec, const InstructionDef &inst, const std::string &name,
                const std::string &what, bool &ok) {
    int index = operandRef(rec, inst, name, {OperandKind::U32}, what);
    if (index >= 0 && (!inst.operands[index].hasRange || inst.operands[index].min < 1)) {
      error(rec, "'" + inst.mnemonic + "': " + what + " '" + name + "' may be 0 (use a DimOp)");
      index = -1;
    }
    ok = ok && index >= 0;
    return index;
  }

  bool loadProduct(const Record *rec, const InstructionDef &inst, const Record *product,
                   const std::string &where, ProductDef &out) {
    bool ok = true;
    for (llvm::StringRef factor : product->getValueAsListOfStrings("Factors"))
      out.factors.push_back(factorRef(rec, inst, factor.str(), where + " factor", ok));
    if (out.factors.size() > 4) {
      error(rec, "'" + inst.mnemonic + "': " + where + " has more than 4 factors");
      ok = false;
    }
    int64_t bytes = product->getValueAsInt("ElemBytes");
    if (bytes < 1 || bytes > 256 || (bytes & (bytes - 1))) {
      error(rec, "'" + inst.mnemonic + "': " + where + " element size " + Twine(bytes) +
                     " is not a power of two from 1 to 256");
      ok = false;
    } else {
      out.elemLog2 = static_cast<unsigned>(llvm::Log2_64(static_cast<uint64_t>(bytes)));
    }
    out.sizeBy = optionalRef(rec, inst, product->getValueAsString("SizeBy").str(),
                             {OperandKind::Enum}, where + " element size", ok);
    if (out.sizeBy >= 0 && !inst.operands[out.sizeBy].enumType->sized()) {
      error(rec, "'" + inst.mnemonic + "': " + where + " takes its element size from '" +
                     inst.operands[out.sizeBy].name + "', whose enumeration " +
                     inst.operands[out.sizeBy].enumType->name + " has no sizes");
      ok = false;
    } else if (out.sizeBy >= 0 && out.elemLog2 != 0) {
      error(rec, "'" + inst.mnemonic + "': " + where +
                     " has an element size operand and ElemBytes " + Twine(1u << out.elemLog2) +
                     " (it must be 1)");
      ok = false;
    }
    return ok;
  }

  // Memory and Disjoints: every address operand has exactly one memory
  // operand, so that no range escapes the devices' checks.
  bool loadMemory(const Record *rec, InstructionDef &inst) {
    bool ok = true;
    for (const Record *memRec : rec->getValueAsListOfDefs("Memory")) {
      MemOperandDef mem;
      const std::string name = memRec->getValueAsString("Operand").str();
      const std::string where = "memory operand '" + name + "'";
      mem.operand = operandRef(rec, inst, name, {OperandKind::Addr}, "memory operand");
      if (mem.operand < 0) {
        ok = false;
        continue;
      }
      if (llvm::any_of(inst.memory,
                       [&](const MemOperandDef &m) { return m.operand == mem.operand; })) {
        error(rec, "'" + inst.mnemonic + "': two memory operands for '" + name + "'");
        ok = false;
      }
      const std::string access = memRec->getValueAsString("Access").str();
      mem.reads = access == "r" || access == "rw";
      mem.writes = access == "w" || access == "rw";
      if (!mem.reads && !mem.writes) {
        error(rec,
              "'" + inst.mnemonic + "': " + where + ": access '" + access + "' is not r, w or rw");
        ok = false;
      }
      mem.when = optionalRef(rec, inst, memRec->getValueAsString("When").str(), {OperandKind::Flag},
                             where + " condition", ok);
      mem.updateWhen = optionalRef(rec, inst, memRec->getValueAsString("UpdateWhen").str(),
                                   {OperandKind::Flag}, where + " update condition", ok);
      const std::string holds = memRec->getValueAsString("Holds").str();
      const std::string indexBound = memRec->getValueAsString("IndexBound").str();
      if (holds == "f32" || holds == "bytes" || holds == "hyper") {
        mem.holds = holds == "f32"     ? MemContent::F32
                    : holds == "bytes" ? MemContent::Bytes
                                       : MemContent::Hyper;
        if (!indexBound.empty() || !memRec->getValueAsString("IndexWrap").empty()) {
          error(rec, "'" + inst.mnemonic + "': " + where + " holds " + holds +
                         ", not indices, but has an index bound or wrap");
          ok = false;
        }
      } else if (holds == "index") {
        mem.holds = MemContent::Index;
        mem.indexBound =
            operandRef(rec, inst, indexBound, {OperandKind::U32}, where + " index bound");
        ok = ok && mem.indexBound >= 0;
        mem.indexWrap = optionalRef(rec, inst, memRec->getValueAsString("IndexWrap").str(),
                                    {OperandKind::Flag}, where + " index wrap", ok);
        if (mem.writes) {
          error(rec, "'" + inst.mnemonic + "': " + where + " holds indices but is written");
          ok = false;
        }
      } else {
        error(rec, "'" + inst.mnemonic + "': " + where + ": holds '" + holds +
                       "', not f32, bytes, index or hyper");
        ok = false;
      }
      const Record *extent = memRec->getValueAsDef("Extent");
      const std::string kind = extent->getValueAsString("Kind").str();
      if (kind == "product") {
        mem.kind = ExtentKind::Product;
        mem.choices.emplace_back();
        ok = loadProduct(rec, inst, extent, where, mem.choices.back()) && ok;
      } else if (kind == "select") {
        mem.kind = ExtentKind::Product;
        mem.selector = optionalRef(rec, inst, extent->getValueAsString("Selector").str(),
                                   {OperandKind::Enum}, where + " selector", ok);
        for (const Record *choice : extent->getValueAsListOfDefs("Choices")) {
          mem.choices.emplace_back();
          ok = loadProduct(rec, inst, choice, where, mem.choices.back()) && ok;
        }
        if (mem.choices.size() > 4) {
          error(rec, "'" + inst.mnemonic + "': " + where + " has more than 4 choices");
          ok = false;
        }
        if (mem.selector >= 0) {
          const EnumTypeDef &type = *inst.operands[mem.selector].enumType;
          for (size_t v = 0; v < type.values.size(); ++v)
            if (type.values[v].value != static_cast<int64_t>(v)) {
              error(rec, "'" + inst.mnemonic + "': " + where + ": selector enum " + type.name +
                             " is not numbered 0, 1, ...");
              ok = false;
            }
          if (mem.choices.size() != type.values.size()) {
            error(rec, "'" + inst.mnemonic + "': " + where + " has " + Twine(mem.choices.size()) +
                           " choices for the " + Twine(type.values.size()) + " values of " +
                           type.name);
            ok = false;
          }
        }
      } else if (kind == "matrix") {
        mem.kind = ExtentKind::Matrix;
        mem.rows =
            factorRef(rec, inst, extent->getValueAsString("Rows").str(), where + " rows", ok);
        mem.cols =
            factorRef(rec, inst, extent->getValueAsString("Cols").str(), where + " cols", ok);
        mem.pitch = optionalRef(rec, inst, extent->getValueAsString("Pitch").str(),
                                {OperandKind::U32}, where + " pitch", ok);
        mem.trans = optionalRef(rec, inst, extent->getValueAsString("Trans").str(),
                                {OperandKind::Flag}, where + " transpose flag", ok);
        const std::string batch = extent->getValueAsString("Batch").str();
        if (!batch.empty()) {
          mem.batch = factorRef(rec, inst, batch, where + " batch", ok);
          mem.batchStride = operandRef(rec, inst, extent->getValueAsString("BatchStride").str(),
                                       {OperandKind::U32}, where + " batch stride");
          ok = ok && mem.batchStride >= 0;
        }
        mem.distinct = extent->getValueAsBit("Distinct");
        mem.sizeBy = optionalRef(rec, inst, extent->getValueAsString("SizeBy").str(),
                                 {OperandKind::Enum}, where + " element size", ok);
        if (mem.sizeBy >= 0 && !inst.operands[mem.sizeBy].enumType->sized()) {
          error(rec, "'" + inst.mnemonic + "': " + where + " takes its element size from '" +
                         inst.operands[mem.sizeBy].name + "', whose enumeration " +
                         inst.operands[mem.sizeBy].enumType->name + " has no sizes");
          ok = false;
        }
        if (mem.distinct && mem.batch < 0) {
          error(rec, "'" + inst.mnemonic + "': " + where + " is distinct but has no batch");
          ok = false;
        }
      } else if (kind == "strided") {
        mem.kind = ExtentKind::Strided;
        for (llvm::StringRef size : extent->getValueAsListOfStrings("Sizes"))
          mem.sizes.push_back(factorRef(rec, inst, size.str(), where + " size", ok));
        for (llvm::StringRef stride : extent->getValueAsListOfStrings("Strides"))
          mem.strides.push_back(
              operandRef(rec, inst, stride.str(), {OperandKind::I32}, where + " stride"));
        ok = ok && !llvm::is_contained(mem.strides, -1);
        if (mem.sizes.size() != 4 || mem.strides.size() != 4) {
          error(rec, "'" + inst.mnemonic + "': " + where + " needs 4 sizes and 4 strides");
          ok = false;
        }
        mem.esize = operandRef(rec, inst, extent->getValueAsString("ESize").str(),
                               {OperandKind::Enum}, where + " element size");
        ok = ok && mem.esize >= 0;
      } else {
        error(rec, "'" + inst.mnemonic + "': " + where + ": unknown extent kind '" + kind + "'");
        ok = false;
      }
      inst.memory.push_back(std::move(mem));
    }
    for (size_t i = 0; i < inst.operands.size(); ++i)
      if (inst.operands[i].kind == OperandKind::Addr &&
          llvm::none_of(inst.memory, [&](const MemOperandDef &m) { return m.operand == int(i); })) {
        error(rec, "'" + inst.mnemonic + "': address operand '" + inst.operands[i].name +
                       "' has no memory operand (its range would go unchecked)");
        ok = false;
      }
    const auto memIndex = [&](const std::string &name, unsigned &out) {
      for (size_t m = 0; m < inst.memory.size(); ++m)
        if (inst.memory[m].operand >= 0 && inst.operands[inst.memory[m].operand].name == name) {
          out = static_cast<unsigned>(m);
          return true;
        }
      error(rec, "'" + inst.mnemonic + "': disjoint rule names no memory operand '" + name + "'");
      return false;
    };
    for (const Record *ruleRec : rec->getValueAsListOfDefs("Disjoints")) {
      DisjointDef rule;
      if (!memIndex(ruleRec->getValueAsString("A").str(), rule.a) ||
          !memIndex(ruleRec->getValueAsString("B").str(), rule.b)) {
        ok = false;
        continue;
      }
      if (rule.a == rule.b) {
        error(rec, "'" + inst.mnemonic + "': a disjoint rule pairs an operand with itself");
        ok = false;
      }
      rule.inPlace = ruleRec->getValueAsBit("InPlace");
      rule.inPlaceIf = optionalRef(rec, inst, ruleRec->getValueAsString("InPlaceIf").str(),
                                   {OperandKind::Enum}, "in-place condition", ok);
      rule.inPlaceValue = ruleRec->getValueAsInt("InPlaceValue");
      if (rule.inPlaceIf >= 0 && !rule.inPlace) {
        error(rec, "'" + inst.mnemonic + "': an in-place condition without InPlace");
        ok = false;
      }
      if (rule.inPlaceIf >= 0 &&
          llvm::none_of(inst.operands[rule.inPlaceIf].enumType->values,
                        [&](const EnumValueDef &v) { return v.value == rule.inPlaceValue; })) {
        error(rec, "'" + inst.mnemonic + "': in-place condition value " + Twine(rule.inPlaceValue) +
                       " is not a value of the enum");
        ok = false;
      }
      inst.disjoints.push_back(rule);
    }
    // A written range that may overlap another leaves the result to the
    // order of the engine's reads and writes, which no two devices share.
    for (unsigned a = 0; a < inst.memory.size(); ++a)
      for (unsigned b = a + 1; b < inst.memory.size(); ++b)
        if ((inst.memory[a].writes || inst.memory[b].writes) &&
            llvm::none_of(inst.disjoints,
                          [&](const DisjointDef &d) {
                            return (d.a == a && d.b == b) || (d.a == b && d.b == a);
                          }) &&
            inst.memory[a].operand >= 0 && inst.memory[b].operand >= 0) {
          error(rec, "'" + inst.mnemonic + "': memory operands '" +
                         inst.operands[inst.memory[a].operand].name + "' and '" +
                         inst.operands[inst.memory[b].operand].name +
                         "' have no disjoint rule, and one of them is written");
          ok = false;
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
      for (const auto &[cls, range] : rec->getSuperClasses())
        if (cls->getName() != "Instruction" && cls->isSubClassOf("Instruction"))
          inst.classes.push_back(cls->getName().str());
      inst.syntax = rec->getValueAsString("Syntax").str();
      inst.doc = rec->getValueAsString("Doc").str();
      inst.semantics = rec->getValueAsString("Semantics").str();
      if (rec->isAnonymous()) {
        error(rec, "instructions must be named definitions");
        continue;
      }
      if (!isIdentifier(inst.family) ||
          llvm::any_of(inst.family, [](char c) { return c >= 'A' && c <= 'Z'; })) {
        error(rec, "family '" + inst.family + "' of '" + inst.mnemonic +
                       "' must be a lower-case identifier (it names the generated list " +
                       familyListMacro(inst.family) + ")");
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
      if (!loadMemory(rec, inst))
        continue;
      inst.usedBits.assign(kPacketBits, false);
      for (unsigned b = 0; b < 32; ++b)
        inst.usedBits[b] = true;
      for (const OperandDef &op : inst.operands)
        for (unsigned b = op.slot.offset; b < op.slot.end(); ++b)
          inst.usedBits[b] = true;
      model_.instructions.push_back(std::move(inst));
    }
    for (Record *engine : defsOf("Engine")) {
      model_.engines.push_back(engine->getValueAsString("Name").str());
      model_.engineDocs[model_.engines.back()] = engine->getValueAsString("Doc").str();
    }
    if (model_.instructions.empty() && !failed_) {
      llvm::PrintError("no Instruction definitions");
      failed_ = true;
    }
    llvm::sort(model_.instructions, [](const InstructionDef &a, const InstructionDef &b) {
      return a.opcode < b.opcode;
    });
    for (const InstructionDef &inst : model_.instructions) {
      if (!llvm::is_contained(model_.families, inst.family))
        model_.families.push_back(inst.family);
      for (const std::string &cls : inst.classes)
        if (!llvm::is_contained(model_.classes, cls))
          model_.classes.push_back(cls);
    }
    checkListMacros();
  }

  // A family and an instruction class must not name the same generated list,
  // or one list would silently stand for the other.
  void checkListMacros() {
    std::map<std::string, std::string> owner;
    for (const std::string &family : model_.families)
      owner.emplace(familyListMacro(family), "family '" + family + "'");
    for (const std::string &cls : model_.classes) {
      auto [it, inserted] = owner.emplace(classListMacro(cls), "class '" + cls + "'");
      if (!inserted)
        error(records_.getClass(cls), "instruction class '" + cls + "' and " + it->second +
                                          " would both generate the list " + it->first +
                                          "; rename one of them");
    }
  }

  void loadPrims() {
    struct Known {
      const char *name;
      unsigned numSrc;
      PrimClass cls;
    };
    static const Known known[] = {
        {"fadd", 2, PrimClass::FloatArith},  {"fsub", 2, PrimClass::FloatArith},
        {"fmul", 2, PrimClass::FloatArith},  {"ffma", 3, PrimClass::FloatArith},
        {"fmin", 2, PrimClass::FloatArith},  {"fmax", 2, PrimClass::FloatArith},
        {"fabs", 1, PrimClass::SignOp},      {"fneg", 1, PrimClass::SignOp},
        {"flt", 2, PrimClass::Compare},      {"fle", 2, PrimClass::Compare},
        {"fisnan", 1, PrimClass::Compare},   {"fround", 1, PrimClass::FloatArith},
        {"f2i", 1, PrimClass::FloatToInt},   {"i2f", 1, PrimClass::IntToFloat},
        {"iadd", 2, PrimClass::Integer},     {"isub", 2, PrimClass::Integer},
        {"ishl", 2, PrimClass::Shift},       {"ishr", 2, PrimClass::Shift},
        {"isra", 2, PrimClass::Shift},       {"iand", 2, PrimClass::Integer},
        {"ior", 2, PrimClass::Integer},      {"ixor", 2, PrimClass::Integer},
        {"sel", 3, PrimClass::Select},       {"imul", 2, PrimClass::Integer},
        {"imulhu", 2, PrimClass::Integer},   {"ieq", 2, PrimClass::IntCompare},
        {"ilt", 2, PrimClass::IntCompare},   {"iltu", 2, PrimClass::IntCompare},
        {"ishlv", 2, PrimClass::Integer},    {"ishrv", 2, PrimClass::Integer},
        {"israv", 2, PrimClass::Integer},    {"l2f", 2, PrimClass::IntToFloat},
        {"f2iz", 1, PrimClass::FloatToInt},  {"f2lzlo", 1, PrimClass::FloatToInt},
        {"f2lzhi", 1, PrimClass::FloatToInt}};
    for (Record *rec : defsOf("Prim")) {
      PrimDef prim{rec->getValueAsString("Name").str(),
                   static_cast<unsigned>(rec->getValueAsInt("NumSrc")),
                   rec->getValueAsString("Doc").str(), static_cast<unsigned>(model_.prims.size())};
      const Known *k = llvm::find_if(known, [&](const Known &kn) { return prim.name == kn.name; });
      if (k == std::end(known)) {
        error(rec, "primitive '" + prim.name +
                       "' has no semantics in npu-tblgen: add it to the host providers, the "
                       "reference model and the loader's table first");
        continue;
      }
      if (prim.numSrc != k->numSrc)
        error(rec, "primitive '" + prim.name + "' takes " + Twine(k->numSrc) + " sources, not " +
                       Twine(prim.numSrc));
      if (prim.opcode >= (1u << kMicroPrimBits))
        error(rec, "more than " + Twine(1u << kMicroPrimBits) +
                       " primitives do not fit the micro-code opcode field");
      prim.cls = k->cls;
      primByRecord_[rec] = model_.prims.size();
      model_.prims.push_back(prim);
    }
  }

  static bool isCppKeyword(llvm::StringRef name) {
    static const char *const keywords[] = {
        "and",      "and_eq",  "asm",       "auto",   "bitand",   "bitor",    "bool",     "break",
        "case",     "catch",   "char",      "class",  "compl",    "const",    "continue", "default",
        "delete",   "do",      "double",    "else",   "enum",     "explicit", "export",   "extern",
        "false",    "float",   "for",       "friend", "goto",     "if",       "inline",   "int",
        "long",     "mutable", "namespace", "new",    "not",      "not_eq",   "operator", "or",
        "or_eq",    "private", "protected", "public", "register", "return",   "short",    "signed",
        "sizeof",   "static",  "struct",    "switch", "template", "this",     "throw",    "true",
        "try",      "typedef", "typename",  "union",  "unsigned", "using",    "virtual",  "void",
        "volatile", "while",   "xor",       "xor_eq", "run"};
    return llvm::is_contained(keywords, name);
  }

  // One value a micro-program computes: an input or the result of a step.
  struct MicroValue {
    std::string reg;
    int step = -1;     // -1 for an input
    int lastRead = -1; // step that reads it last; steps.size() for the result
    bool mask = false; // all-ones or all-zero in every lane
  };

  // x * 1, x * -1, x + 0 and x - 0 only canonicalise x; hosts fold them away.
  static bool isIdentityStep(const MicroStep &step) {
    const std::string &p = step.prim->name;
    auto constantAt = [&](size_t i, std::initializer_list<uint32_t> values) {
      return !step.args[i].isRegister && llvm::is_contained(values, step.args[i].constant);
    };
    if (p == "fmul")
      return constantAt(0, {0x3f800000u, 0xbf800000u}) || constantAt(1, {0x3f800000u, 0xbf800000u});
    if (p == "fadd")
      return constantAt(0, {0u, 0x80000000u}) || constantAt(1, {0u, 0x80000000u});
    if (p == "fsub")
      return constantAt(1, {0u, 0x80000000u});
    return false;
  }

  void loadMicroPrograms() {
    const int64_t registers = model_.hardwareParam("VectorRegisters");
    std::map<uint32_t, unsigned> constantIndex;
    std::map<std::string, const Record *> byName;
    for (Record *rec : defsOf("MicroProgram")) {
      MicroProgramDef prog;
      prog.defName = rec->getName().str();
      prog.name = rec->getValueAsString("Name").str();
      prog.result = rec->getValueAsString("Result").str();
      prog.doc = rec->getValueAsString("Doc").str();
      prog.reference = rec->getValueAsString("Reference").str();
      prog.rawInputs = rec->getValueAsBit("RawInputs");
      const std::string what = "micro-program '" + prog.name + "'";
      if (!isIdentifier(prog.name) ||
          llvm::any_of(prog.name, [](char c) { return c >= 'A' && c <= 'Z'; }) ||
          isCppKeyword(prog.name)) {
        error(rec, what + ": the name must be a lower-case identifier and not a C++ keyword");
        continue;
      }
      // npu_microcode_pkg names each program MC_PROG_<NAME> next to its own
      // parameter MC_PROG_BITS.
      if (prog.name == "bits") {
        error(rec, what + ": the name would generate MC_PROG_BITS, the width parameter of "
                          "npu_microcode_pkg");
        continue;
      }
      if (auto [it, inserted] = byName.emplace(prog.name, rec); !inserted) {
        error(rec, "duplicate " + what);
        note(it->second, "first definition of '" + prog.name + "'");
        continue;
      }
      std::vector<MicroValue> values;
      std::map<std::string, size_t> current; // register name -> its latest value
      bool ok = true;
      for (llvm::StringRef input : rec->getValueAsListOfStrings("Inputs")) {
        if (!isIdentifier(input.str()) || current.count(input.str())) {
          error(rec, what + ": input '" + input + "' is not a distinct identifier");
          ok = false;
        }
        prog.inputs.push_back(input.str());
        current[input.str()] = values.size();
        values.push_back({input.str()});
      }
      if (prog.inputs.empty()) {
        error(rec, what + " has no inputs");
        ok = false;
      }
      // Per step, the value each source reads (-1 for a constant).
      std::vector<std::vector<int>> reads;
      const llvm::ListInit *steps = rec->getValueAsListInit("Steps");
      for (unsigned i = 0; i < steps->size(); ++i) {
        const auto *dag = llvm::dyn_cast<llvm::DagInit>(steps->getElement(i));
        const std::string where = what + " step " + std::to_string(i);
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
          continue;
        }
        if (dag->getNumArgs() != step.prim->numSrc) {
          error(rec, where + ": " + step.prim->name + " takes " + Twine(step.prim->numSrc) +
                         " sources, got " + Twine(dag->getNumArgs()));
          ok = false;
          continue;
        }
        std::vector<int> stepReads;
        bool argsOk = true;
        for (unsigned a = 0; a < dag->getNumArgs(); ++a) {
          MicroArg arg;
          if (const auto *intInit = llvm::dyn_cast<llvm::IntInit>(dag->getArg(a))) {
            int64_t v = intInit->getValue();
            if (v < INT32_MIN || v > 0xffffffffLL) {
              error(rec, where + ": constant " + Twine(v) + " is not a 32-bit pattern");
              argsOk = false;
            }
            arg.constant = static_cast<uint32_t>(v);
            stepReads.push_back(-1);
          } else if (llvm::isa<llvm::UnsetInit>(dag->getArg(a)) && !dag->getArgNameStr(a).empty()) {
            arg.isRegister = true;
            arg.reg = dag->getArgNameStr(a).str();
            auto it = current.find(arg.reg);
            if (it == current.end()) {
              error(rec, where + ": register $" + arg.reg + " is read before it is written");
              argsOk = false;
              stepReads.push_back(-1);
            } else {
              stepReads.push_back(static_cast<int>(it->second));
            }
          } else {
            error(rec,
                  where + ": source " + Twine(a) + " must be $register or an integer constant");
            argsOk = false;
            stepReads.push_back(-1);
          }
          step.args.push_back(arg);
        }
        if (!argsOk) {
          ok = false;
          continue;
        }
        if (llvm::none_of(step.args, [](const MicroArg &a) { return a.isRegister; })) {
          error(rec, where + ": every source is a constant; fold the step into a constant");
          ok = false;
        }
        const PrimClass cls = step.prim->cls;
        if (cls == PrimClass::Shift && (step.args[1].isRegister || step.args[1].constant > 31)) {
          error(rec, where + ": the shift amount of " + step.prim->name +
                         " must be a constant from 0 to 31");
          ok = false;
        }
        if (cls == PrimClass::Select &&
            (!step.args[0].isRegister || stepReads[0] < 0 || !values[stepReads[0]].mask)) {
          error(rec, where + ": the first source of sel must be a mask (a result of flt, fle, "
                             "fisnan, ieq, ilt, iltu, isra by 31, or iand/ior/ixor/sel "
                             "of masks)");
          ok = false;
        }
        if (isIdentityStep(step)) {
          error(rec, where + ": " + step.prim->name +
                         " with this constant only canonicalises its operand; remove the step");
          ok = false;
        }
        // Whether the step's result is a mask.
        auto isMaskSource = [&](unsigned a) {
          if (!step.args[a].isRegister)
            return step.args[a].constant == 0 || step.args[a].constant == ~0u;
          return stepReads[a] >= 0 && values[stepReads[a]].mask;
        };
        bool mask = false;
        if (cls == PrimClass::Compare || cls == PrimClass::IntCompare)
          mask = true;
        else if (step.prim->name == "isra")
          mask = !step.args[1].isRegister && step.args[1].constant == 31;
        else if (step.prim->name == "iand" || step.prim->name == "ior" || step.prim->name == "ixor")
          mask = isMaskSource(0) && isMaskSource(1);
        else if (cls == PrimClass::Select)
          mask = isMaskSource(1) && isMaskSource(2);
        for (int v : stepReads)
          if (v >= 0)
            values[v].lastRead = static_cast<int>(i);
        current[step.dest] = values.size();
        values.push_back({step.dest, static_cast<int>(i), -1, mask});
        reads.push_back(std::move(stepReads));
        prog.steps.push_back(step);
      }
      if (!ok)
        continue;
      auto result = current.find(prog.result);
      if (result == current.end()) {
        error(rec, what + ": result register $" + prog.result + " is never written");
        continue;
      }
      values[result->second].lastRead = static_cast<int>(prog.steps.size());
      for (const MicroValue &v : values) {
        if (v.lastRead >= 0)
          continue;
        if (v.step < 0)
          error(rec, what + ": input $" + v.reg + " is never read");
        else
          error(rec, what + " step " + Twine(v.step) + ": the value written to $" + v.reg +
                         " is never read");
        ok = false;
      }
      if (!ok)
        continue;
      if (!allocateRegisters(rec, prog, values, reads, registers))
        continue;
      for (MicroStep &step : prog.steps)
        for (MicroArg &arg : step.args) {
          if (arg.isRegister)
            continue;
          auto [it, inserted] = constantIndex.emplace(arg.constant, model_.microConstants.size());
          if (inserted)
            model_.microConstants.push_back(arg.constant);
          arg.slot = it->second;
        }
      if (model_.microConstants.size() > kMaxMicroConstants) {
        error(rec, what + ": the micro-code constant pool overflows its " +
                       Twine(kMaxMicroConstants) + " entries");
        continue;
      }
      // npu-ulp measures the program against its Reference (docs/arith.md §7).
      if (prog.reference.empty() && prog.steps.size() > 1) {
        error(rec, what + " has " + Twine(prog.steps.size()) +
                       " steps and no Reference: name the exact function npu-ulp measures it "
                       "against, e.g. let Reference = \"std::erf(x)\"");
        continue;
      }
      if (!prog.reference.empty() && prog.inputs.size() > kMaxReferenceInputs) {
        error(rec, what + ": a Reference is measured by npu-ulp, which takes one to " +
                       Twine(kMaxReferenceInputs) + " inputs, not " + Twine(prog.inputs.size()));
        continue;
      }
      programByRecord_[rec] = model_.programs.size();
      model_.programs.push_back(std::move(prog));
    }
  }

  // Linear scan over the straight-line code: a register is freed after the
  // step that reads its value for the last time, and that step may write its
  // result into it. Inputs start in registers 0, 1, ...
  bool allocateRegisters(const Record *rec, MicroProgramDef &prog,
                         const std::vector<MicroValue> &values,
                         const std::vector<std::vector<int>> &reads, int64_t registers) {
    const std::string what = "micro-program '" + prog.name + "'";
    std::vector<unsigned> registerOf(values.size(), 0);
    std::vector<bool> busy(static_cast<size_t>(std::max<int64_t>(registers, 0)), false);
    if (prog.inputs.size() > busy.size()) {
      error(rec, what + " has " + Twine(prog.inputs.size()) + " inputs but a lane has only " +
                     Twine(registers) + " registers (VectorRegisters)");
      return false;
    }
    unsigned live = 0;
    for (size_t v = 0; v < prog.inputs.size(); ++v) {
      registerOf[v] = static_cast<unsigned>(v);
      busy[v] = true;
      ++live;
    }
    prog.numRegisters = live;
    for (size_t i = 0; i < prog.steps.size(); ++i) {
      MicroStep &step = prog.steps[i];
      for (size_t a = 0; a < step.args.size(); ++a)
        if (reads[i][a] >= 0)
          step.args[a].slot = registerOf[reads[i][a]];
      for (size_t a = 0; a < step.args.size(); ++a) {
        int v = reads[i][a];
        if (v >= 0 && values[v].lastRead == static_cast<int>(i) && busy[registerOf[v]]) {
          busy[registerOf[v]] = false;
          --live;
        }
      }
      auto freeRegister = llvm::find(busy, false);
      if (freeRegister == busy.end()) {
        error(rec, what + " step " + Twine(i) + ": " + Twine(live + 1) +
                       " values are live but a lane has only " + Twine(registers) +
                       " registers (VectorRegisters in hardware.td)");
        return false;
      }
      *freeRegister = true;
      ++live;
      const size_t value = prog.inputs.size() + i;
      registerOf[value] = static_cast<unsigned>(freeRegister - busy.begin());
      step.destRegister = registerOf[value];
      prog.numRegisters = std::max(prog.numRegisters, live);
    }
    for (size_t v = 0; v < values.size(); ++v)
      if (values[v].lastRead == static_cast<int>(prog.steps.size()))
        prog.resultRegister = registerOf[v];
    return true;
  }

  // Links instructions to the micro-program named by their Program field.
  void linkPrograms() {
    for (Record *rec : defsOf("Instruction")) {
      const llvm::RecordVal *field = rec->getValue("Program");
      if (!field || rec->isValueUnset("Program"))
        continue;
      const Record *programRec = rec->getValueAsDef("Program");
      auto it = programByRecord_.find(programRec);
      if (it == programByRecord_.end()) {
        if (!programRec->isSubClassOf("MicroProgram"))
          error(rec, "the Program of an instruction must be a MicroProgram");
        continue; // an invalid program was reported already
      }
      for (InstructionDef &inst : model_.instructions)
        if (inst.defName == rec->getName())
          inst.program = static_cast<int>(it->second);
    }
  }

  void loadFaultCodes() {
    for (Record *rec : defsOf("FaultCode")) {
      FaultCodeDef code{rec->getValueAsString("Name").str(), 0, rec->getValueAsString("Doc").str()};
      const int64_t value = rec->getValueAsInt("Value");
      if (value < 0 || value >= (int64_t(1) << kFaultCodeBits)) {
        error(rec, "fault code '" + code.name + "' = " + Twine(value) + " does not fit in " +
                       Twine(kFaultCodeBits) + " bits");
        continue;
      }
      code.value = static_cast<uint32_t>(value);
      for (const FaultCodeDef &other : model_.faultCodes)
        if (other.value == code.value || other.name == code.name)
          error(rec, "fault code '" + code.name + "' = " + Twine(value) + " repeats '" +
                         other.name + "' = " + Twine(other.value));
      model_.faultCodes.push_back(code);
    }
    llvm::sort(model_.faultCodes,
               [](const FaultCodeDef &a, const FaultCodeDef &b) { return a.value < b.value; });
  }

  // ---- vector-engine recipes (isa/recipe.td) --------------------------------------------

  // Reads the Recipes of every instruction: the vector engine's need them,
  // no other engine's may have them.
  void loadRecipes() {
    for (Record *rec : defsOf("Instruction")) {
      auto inst = llvm::find_if(model_.instructions, [&](const InstructionDef &i) {
        return i.defName == rec->getName();
      });
      if (inst == model_.instructions.end())
        continue; // reported already
      std::vector<Record *> recipes = rec->getValueAsListOfDefs("Recipes");
      if (inst->engine != "vector") {
        if (!recipes.empty())
          error(rec, "'" + inst->mnemonic + "' runs on the " + inst->engine +
                         " engine but has vector-engine Recipes");
        continue;
      }
      if (recipes.empty()) {
        error(rec, "'" + inst->mnemonic +
                       "' runs on the vector engine but has no Recipes (isa/recipe.td)");
        continue;
      }
      bool ok = true;
      recipeOwner_ = rec;
      for (Record *recipeRec : recipes) {
        RecipeDef recipe;
        recipe.name = "R_" + inst->defName + "_" + std::to_string(inst->recipes.size());
        if (!loadRecipe(recipeRec, *inst, recipe)) {
          note(rec, "in recipe " + Twine(inst->recipes.size()) + " of '" + inst->mnemonic + "'");
          ok = false;
        }
        inst->recipes.push_back(std::move(recipe));
      }
      recipeOwner_ = nullptr;
      if (ok)
        checkVariants(rec, *inst);
    }
  }

  // A source or destination name of a step.
  bool sourceCode(const std::string &name, unsigned &code) {
    for (unsigned c = 0; c < 32; ++c)
      if (!name.empty() && recipeSourceName(c) == name) {
        code = c;
        return true;
      }
    return false;
  }

  // Scalar register K<n> named `name`.
  bool scalarRegister(const Record *rec, const InstructionDef &inst, const std::string &name,
                      const std::string &what, unsigned &k) {
    unsigned code = 0;
    if (!sourceCode(name, code) || code < SrcK0) {
      error(rec, "'" + inst.mnemonic + "': " + what + " '" + name +
                     "' is not a scalar register K0..K" + Twine(kRecipeScalars - 1));
      return false;
    }
    k = code - SrcK0;
    return true;
  }

  // A load into K<first>.. keeps the recipe's packet scalars (K0..) intact.
  bool keepsScalars(const Record *rec, const InstructionDef &inst, const RecipeDef &recipe,
                    unsigned first, const std::string &what) {
    if (first >= recipe.scalars.size())
      return true;
    error(rec, "'" + inst.mnemonic + "': the " + what + " into K" + Twine(first) +
                   " overwrites the operand '" + inst.operands[recipe.scalars[first]].name +
                   "' the recipe loads there");
    return false;
  }

  // The Words of a row load or store from K<first>: 1..kRecipeRowWords
  // registers that exist.
  bool rowWords(const Record *rec, const InstructionDef &inst, const Record *access, unsigned first,
                const std::string &what, unsigned &words) {
    const int64_t value = access->getValueAsInt("Words");
    if (value < 1 || value > kRecipeRowWords || first + value > kRecipeScalars) {
      error(rec, "'" + inst.mnemonic + "': a " + what + " moves 1.." + Twine(kRecipeRowWords) +
                     " words of the scalar registers, not " + Twine(value) + " from K" +
                     Twine(first));
      return false;
    }
    words = static_cast<unsigned>(value);
    return true;
  }

  // The Type of a pre-load, row load or row store (`what`) on the address
  // operand `operand`, K<first>.. its registers: a typed access moves one
  // element (Words 1), its high word in K<first+1> when it can be an i64.
  bool loadAccessType(const Record *rec, const InstructionDef &inst, const RecipeDef &recipe,
                      const Record *access, int operand, unsigned first, const std::string &what,
                      ElementType &element) {
    if (!loadElementType(rec, inst, access->getValueAsString("Type").str(), "the " + what, element))
      return false;
    if (!element.typed())
      return true;
    bool ok = true;
    if (access->getValueAsInt("Words") != 1) {
      error(rec, "'" + inst.mnemonic + "': the typed " + what +
                     " moves one element, not Words = " + Twine(access->getValueAsInt("Words")));
      ok = false;
    }
    // (The packet scalars lie below `first`, which the caller checked.)
    if (mayBe(inst, recipe, element, typeValue("i64")) && first + 2 > kRecipeScalars) {
      error(rec, "'" + inst.mnemonic + "': the " + what +
                     " can move an i64, whose high word has no register after K" + Twine(first));
      ok = false;
    }
    return checkExtent(rec, inst, element, operand, "the " + what) && ok;
  }

  // A stream name: IB0..IB3 (0..3) or OB0..OB2 (4..6).
  bool streamSlot(const Record *rec, const InstructionDef &inst, const std::string &name,
                  unsigned &slot) {
    unsigned code = 0;
    if (!sourceCode(name, code) || code >= SrcZero) {
      error(rec, "'" + inst.mnemonic + "': unknown stream '" + name + "' (IB0..IB3, OB0..OB2)");
      return false;
    }
    slot = code;
    return true;
  }

  bool loadSteps(const Record *rec, const InstructionDef &inst, const std::vector<Record *> &steps,
                 bool scalar, const RecipePass *pass, const std::string &where,
                 std::vector<RecipeStep> &out) {
    bool ok = true;
    if (steps.size() > kRecipeMaxSteps) {
      error(rec, "'" + inst.mnemonic + "': " + where + " has " + Twine(steps.size()) +
                     " steps, the engine runs at most " + Twine(kRecipeMaxSteps));
      ok = false;
    }
    unsigned written = 0; // output streams written by earlier steps of the pass
    for (size_t i = 0; i < steps.size(); ++i) {
      const Record *stepRec = steps[i];
      const std::string at = where + " step " + std::to_string(i);
      const std::string kind = stepRec->getValueAsString("Kind").str();
      RecipeStep step;
      const auto source = [&](const char *field, unsigned &code, bool isDst) {
        const std::string name = stepRec->getValueAsString(field).str();
        if (name.empty() && !isDst && std::string(field) == "Src1") {
          code = SrcZero;
          return true;
        }
        if (!sourceCode(name, code)) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": unknown " +
                         (isDst ? "destination" : "source") + " '" + name + "'");
          return false;
        }
        const bool isStream = code < SrcZero, isTemp = code >= SrcT0 && code < SrcT0 + kRecipeTemps;
        if (scalar && (isStream || isTemp)) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": scalar steps take scalars, not '" +
                         name + "'");
          return false;
        }
        // A scalar step runs once, not per element: it has no column.
        if (scalar && code == SrcCol) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": scalar steps have no column ('" +
                         name + "')");
          return false;
        }
        if (isDst && (code < SrcOB0 || code == SrcZero || code == SrcOne || code == SrcCols ||
                      code == SrcCol || code == SrcRow)) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": cannot write '" + name + "'");
          return false;
        }
        if (isDst && code < SrcZero && pass && !(pass->outputs & (1u << (code - SrcOB0)))) {
          error(rec, "'" + inst.mnemonic + "': " + at + " writes stream '" + name +
                         "' that its pass does not write");
          return false;
        }
        if (!isDst && code < SrcOB0 && pass && !(pass->inputs & (1u << code))) {
          error(rec, "'" + inst.mnemonic + "': " + at + " reads stream '" + name +
                         "' that its pass does not load");
          return false;
        }
        if (!isDst && code >= SrcOB0 && code < SrcZero && !(written & (1u << (code - SrcOB0)))) {
          error(rec, "'" + inst.mnemonic + "': " + at + " reads output stream '" + name +
                         "' before a step of its pass writes it");
          return false;
        }
        return true;
      };
      if (kind == "run") {
        step.kind = StepKind::Run;
        const std::string program = stepRec->getValueAsString("Program").str();
        auto prog = llvm::find_if(model_.programs,
                                  [&](const MicroProgramDef &p) { return p.name == program; });
        if (prog == model_.programs.end()) {
          error(rec,
                "'" + inst.mnemonic + "': " + at + ": unknown micro-program '" + program + "'");
          ok = false;
          continue;
        }
        step.program = static_cast<int>(prog - model_.programs.begin());
        const bool twoInputs = prog->inputs.size() >= 2;
        if (prog->inputs.size() > 2 || twoInputs == stepRec->getValueAsString("Src1").empty()) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": micro-program '" + program + "' takes " +
                         Twine(prog->inputs.size()) + " inputs");
          ok = false;
          continue;
        }
        ok = source("Src0", step.src0, false) && source("Src1", step.src1, false) &&
             source("Dst", step.dst, true) && ok;
      } else if (kind == "scan") {
        // One primitive a lane, the carry a K register the step also writes.
        step.kind = StepKind::Scan;
        const std::string program = stepRec->getValueAsString("Program").str();
        auto prog = llvm::find_if(model_.programs,
                                  [&](const MicroProgramDef &p) { return p.name == program; });
        if (prog == model_.programs.end() || prog->inputs.size() != 2 || prog->steps.size() != 1) {
          error(rec, "'" + inst.mnemonic + "': " + at +
                         ": a scan step runs a micro-program of one primitive and two inputs, "
                         "not '" +
                         program + "'");
          ok = false;
          continue;
        }
        step.program = static_cast<int>(prog - model_.programs.begin());
        if (scalar || !pass) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": a scan step is per element");
          ok = false;
        }
        ok = source("Src0", step.src0, false) && source("Src1", step.src1, false) &&
             source("Dst", step.dst, true) && ok;
        if (step.src0 < SrcK0 || step.src1 >= SrcK0 || step.dst >= SrcK0) {
          error(rec, "'" + inst.mnemonic + "': " + at +
                         ": a scan step's carry is a K register and its source and destination "
                         "are per element");
          ok = false;
        }
      } else if (kind == "mask") {
        step.kind = StepKind::Mask;
        if (scalar) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": a mask step is per element");
          ok = false;
        }
        ok = source("Src0", step.src0, false) && source("Dst", step.dst, true) && ok;
      } else if (kind == "reduce") {
        step.kind = StepKind::Reduce;
        if (scalar || !pass || pass->reduce == ReduceKind::None) {
          error(rec, "'" + inst.mnemonic + "': " + at + ": a reduce step outside a reducing pass");
          ok = false;
        }
        ok = source("Src0", step.src0, false) && ok;
      } else {
        error(rec, "'" + inst.mnemonic + "': " + at + ": unknown step kind '" + kind + "'");
        ok = false;
      }
      if (step.dst >= SrcOB0 && step.dst < SrcZero && step.kind != StepKind::Reduce)
        written |= 1u << (step.dst - SrcOB0);
      out.push_back(step);
    }
    if (pass && ok) {
      for (unsigned o = 0; o < kRecipeOutputs; ++o)
        if ((pass->outputs & (1u << o)) && !(written & (1u << o))) {
          error(rec, "'" + inst.mnemonic + "': " + where + " writes stream 'OB" + Twine(o) +
                         "' but no step computes it");
          ok = false;
        }
      const bool reduces =
          llvm::any_of(out, [](const RecipeStep &s) { return s.kind == StepKind::Reduce; });
      if (pass->reduce != ReduceKind::None && !reduces) {
        error(rec, "'" + inst.mnemonic + "': " + where + " reduces but has no reduce step");
        ok = false;
      }
    }
    return ok;
  }

  // The DType enumerator of value `value`: the stream types' enumeration
  // (null when the ISA has no such value, or no DType).
  const EnumValueDef *streamType(int64_t value) const {
    for (const EnumTypeDef &e : model_.enums)
      if (e.name == "DType")
        return e.find(value);
    return nullptr;
  }

  // The value of the DType enumerator `name`, or -1.
  int64_t typeValue(const std::string &name) const {
    for (const EnumTypeDef &e : model_.enums)
      if (e.name == "DType")
        for (const EnumValueDef &v : e.values)
          if (v.name == name)
            return v.value;
    return -1;
  }

  std::string typeName(int64_t value) const {
    const EnumValueDef *type = streamType(value);
    return type ? type->name : std::to_string(value);
  }

  // Whether the elements of a stream or access can be of type `type` under
  // the recipe's conditions.
  static bool mayBe(const InstructionDef &inst, const RecipeDef &recipe, const ElementType &element,
                    int64_t type) {
    if (type < 0) // an ISA without that type
      return false;
    if (element.typeOperand < 0)
      return element.fixedType == type;
    if (!llvm::is_contained(inst.operands[element.typeOperand].accepts, type))
      return false;
    return llvm::all_of(recipe.when, [&](const RecipeCondition &c) {
      return c.operand != element.typeOperand || (c.value == uint64_t(type)) == c.equal;
    });
  }

  // The Type of a stream or of the access `what`: "" (f32 words), a DType
  // value, or an enum operand of DType.
  bool loadElementType(const Record *rec, const InstructionDef &inst, const std::string &type,
                       const std::string &what, ElementType &element) {
    if (type.empty())
      return true;
    if (const int64_t value = typeValue(type); value >= 0) {
      element.fixedType = value;
      return true;
    }
    const auto operand =
        llvm::find_if(inst.operands, [&](const OperandDef &o) { return o.name == type; });
    if (operand == inst.operands.end() || operand->kind != OperandKind::Enum ||
        operand->enumType->name != "DType") {
      error(rec, "'" + inst.mnemonic + "': " + what + " has type '" + type +
                     "', neither a DType value nor an operand of type DType");
      return false;
    }
    element.typeOperand = static_cast<int>(operand - inst.operands.begin());
    return true;
  }

  // The elements of a stream or a typed access (`what`) on the address
  // operand `operandIndex` are the size its extent counts in.
  bool checkExtent(const Record *rec, const InstructionDef &inst, const ElementType &element,
                   int operandIndex, const std::string &what) {
    const auto mem = llvm::find_if(
        inst.memory, [&](const MemOperandDef &m) { return m.operand == operandIndex; });
    if (mem == inst.memory.end() || mem->kind != ExtentKind::Product)
      return true;
    for (const ProductDef &p : mem->choices) {
      std::string extent = p.sizeBy >= 0
                               ? "elements of the type '" + inst.operands[p.sizeBy].name + "' names"
                               : Twine(1u << p.elemLog2).str() + "-byte elements";
      bool agrees;
      if (element.typeOperand >= 0) {
        agrees = p.sizeBy == element.typeOperand;
      } else if (element.fixedType < 0) {
        agrees = p.sizeBy < 0 && p.elemLog2 == 2;
      } else {
        const EnumValueDef *type = streamType(element.fixedType);
        agrees = p.sizeBy < 0 && type && (1u << p.elemLog2) == type->bytes;
      }
      if (!agrees) {
        error(rec, "'" + inst.mnemonic + "': " + what + " has elements of " +
                       (element.typeOperand >= 0
                            ? "the type '" + inst.operands[element.typeOperand].name + "' names"
                        : element.fixedType < 0 ? std::string("32-bit words")
                                                : "type " + typeName(element.fixedType)) +
                       ", but the extent of '" + inst.operands[operandIndex].name + "' counts " +
                       extent);
        return false;
      }
    }
    return true;
  }

  bool loadRecipe(const Record *rec, const InstructionDef &inst, RecipeDef &recipe) {
    bool ok = true;
    for (const Record *cond : rec->getValueAsListOfDefs("When")) {
      RecipeCondition c;
      c.operand = operandRef(rec, inst, cond->getValueAsString("Operand").str(),
                             {OperandKind::Flag, OperandKind::Enum, OperandKind::F32,
                              OperandKind::U32, OperandKind::I32, OperandKind::Bits32},
                             "variant condition");
      c.value = static_cast<uint64_t>(cond->getValueAsInt("Value"));
      c.equal = cond->getValueAsBit("Equal");
      if (c.operand < 0) {
        ok = false;
        continue;
      }
      const OperandDef &op = inst.operands[c.operand];
      if (op.slot.width < 64 && c.value >> op.slot.width) {
        error(rec, "'" + inst.mnemonic + "': variant condition value " + Twine(c.value) +
                       " does not fit operand '" + op.name + "'");
        ok = false;
      }
      recipe.when.push_back(c);
    }
    recipe.rows = optionalRef(rec, inst, rec->getValueAsString("Rows").str(), {OperandKind::U32},
                              "recipe rows", ok);
    recipe.cols = operandRef(rec, inst, rec->getValueAsString("Cols").str(), {OperandKind::U32},
                             "recipe cols");
    ok = ok && recipe.cols >= 0;
    const std::vector<llvm::StringRef> scalars = rec->getValueAsListOfStrings("Scalars");
    if (scalars.size() > kRecipePacketScalars) {
      error(rec, "'" + inst.mnemonic + "': a recipe loads at most " + Twine(kRecipePacketScalars) +
                     " operands into K0.., not " + Twine(scalars.size()));
      ok = false;
    }
    for (llvm::StringRef name : scalars) {
      const int operand = operandRef(rec, inst, name.str(),
                                     {OperandKind::F32, OperandKind::Bits32, OperandKind::I32},
                                     "recipe scalar");
      if (operand < 0)
        ok = false;
      else
        recipe.scalars.push_back(operand);
    }
    recipe.maskOffset = optionalRef(rec, inst, rec->getValueAsString("MaskOffset").str(),
                                    {OperandKind::I32}, "recipe mask offset", ok);
    unsigned declared = 0;
    std::map<unsigned, unsigned> highOf; // slot of an i64-capable stream -> its high words' slot
    for (const Record *streamRec : rec->getValueAsListOfDefs("Streams")) {
      RecipeStream stream;
      if (!streamSlot(rec, inst, streamRec->getValueAsString("Slot").str(), stream.slot)) {
        ok = false;
        continue;
      }
      if (declared & (1u << stream.slot)) {
        error(rec, "'" + inst.mnemonic + "': stream '" + recipeSourceName(stream.slot) +
                       "' is declared twice");
        ok = false;
      }
      declared |= 1u << stream.slot;
      stream.operand = operandRef(rec, inst, streamRec->getValueAsString("Operand").str(),
                                  {OperandKind::Addr}, "stream");
      stream.perRow = streamRec->getValueAsBit("PerRow");
      stream.zeroFirstRow = streamRec->getValueAsBit("ZeroFirstRow");
      if (stream.zeroFirstRow && stream.slot >= SrcOB0) {
        error(rec, "'" + inst.mnemonic + "': output stream '" + recipeSourceName(stream.slot) +
                       "' cannot read +0 on the first row");
        ok = false;
      }
      ok = ok && stream.operand >= 0;
      const std::string what = "stream '" + recipeSourceName(stream.slot) + "'";
      ok = loadElementType(rec, inst, streamRec->getValueAsString("Type").str(), what, stream) &&
           checkExtent(rec, inst, stream, stream.operand, what) && ok;
      recipe.streams.push_back(stream);
    }
    // The high words of the streams that can be i64, in the next slot.
    for (size_t i = 0, n = recipe.streams.size(); i < n; ++i) {
      const RecipeStream &low = recipe.streams[i];
      if (!mayBe(inst, recipe, low, typeValue("i64")))
        continue;
      const unsigned slot = low.slot + 1;
      if (slot == SrcOB0 || slot == SrcZero || (declared & (1u << slot))) {
        error(rec, "'" + inst.mnemonic + "': stream '" + recipeSourceName(low.slot) +
                       "' can hold i64 elements, whose high words need the next slot, but " +
                       (slot == SrcOB0 || slot == SrcZero
                            ? std::string("it is the last of its direction")
                            : "'" + recipeSourceName(slot) + "' is declared too"));
        ok = false;
        continue;
      }
      RecipeStream high = low;
      high.slot = slot;
      high.high = true;
      declared |= 1u << slot;
      highOf[low.slot] = slot;
      recipe.streams.push_back(high);
    }
    const std::vector<Record *> preLoads = rec->getValueAsListOfDefs("PreLoads");
    const std::vector<Record *> rowLoads = rec->getValueAsListOfDefs("RowLoads");
    const std::vector<Record *> rowStores = rec->getValueAsListOfDefs("RowStores");
    if (preLoads.size() > 1 || rowLoads.size() > 1 || rowStores.size() > 1) {
      error(rec,
            "'" + inst.mnemonic + "': a recipe has at most one pre-load, row load and row store");
      ok = false;
    }
    if (!preLoads.empty()) {
      const Record *load = preLoads.front();
      recipe.preLoad = operandRef(rec, inst, load->getValueAsString("Operand").str(),
                                  {OperandKind::Addr}, "pre-load");
      const int64_t words = load->getValueAsInt("Words");
      ok = ok && recipe.preLoad >= 0 &&
           scalarRegister(rec, inst, load->getValueAsString("First").str(), "pre-load register",
                          recipe.preLoadFirst);
      if (words < 1 || words > kRecipePreLoadWords ||
          recipe.preLoadFirst + words > kRecipeScalars) {
        error(rec, "'" + inst.mnemonic + "': a pre-load loads 1.." + Twine(kRecipePreLoadWords) +
                       " words into the scalar registers");
        ok = false;
      }
      recipe.preLoadWords = static_cast<unsigned>(words);
      ok = keepsScalars(rec, inst, recipe, recipe.preLoadFirst, "pre-load") && ok;
      ok = ok && loadAccessType(rec, inst, recipe, load, recipe.preLoad, recipe.preLoadFirst,
                                "pre-load", recipe.preLoadType);
    }
    if (!rowLoads.empty()) {
      const Record *load = rowLoads.front();
      recipe.rowLoadOperand = operandRef(rec, inst, load->getValueAsString("Operand").str(),
                                         {OperandKind::Addr}, "row load");
      ok = ok && recipe.rowLoadOperand >= 0;
      if (load->getValueAsString("Kind") == "index") {
        recipe.rowLoad = RowLoadKind::Index;
        recipe.indexType = operandRef(rec, inst, load->getValueAsString("IndexType").str(),
                                      {OperandKind::Enum}, "index type");
        recipe.indexBound = operandRef(rec, inst, load->getValueAsString("Bound").str(),
                                       {OperandKind::U32}, "index bound");
        recipe.indexSkip = optionalRef(rec, inst, load->getValueAsString("Skip").str(),
                                       {OperandKind::I32}, "index skip", ok);
        recipe.indexBase = operandRef(rec, inst, load->getValueAsString("Base").str(),
                                      {OperandKind::Addr}, "index base");
        ok = ok && recipe.indexType >= 0 && recipe.indexBound >= 0 && recipe.indexBase >= 0;
        for (llvm::StringRef nameRef : load->getValueAsListOfStrings("Rebase")) {
          const std::string name = nameRef.str();
          unsigned slot = 0;
          if (!streamSlot(rec, inst, name, slot))
            ok = false;
          else
            recipe.rebase |= 1u << slot;
        }
      } else {
        recipe.rowLoad = RowLoadKind::Scalar;
        ok = scalarRegister(rec, inst, load->getValueAsString("Dst").str(), "row load register",
                            recipe.rowLoadDst) &&
             rowWords(rec, inst, load, recipe.rowLoadDst, "row load", recipe.rowLoadWords) &&
             keepsScalars(rec, inst, recipe, recipe.rowLoadDst, "row load") && ok;
        ok = ok && loadAccessType(rec, inst, recipe, load, recipe.rowLoadOperand, recipe.rowLoadDst,
                                  "row load", recipe.rowLoadType);
      }
    }
    if (!rowStores.empty()) {
      const Record *store = rowStores.front();
      recipe.rowStore = operandRef(rec, inst, store->getValueAsString("Operand").str(),
                                   {OperandKind::Addr}, "row store");
      ok = ok && recipe.rowStore >= 0 &&
           scalarRegister(rec, inst, store->getValueAsString("Src").str(), "row store register",
                          recipe.rowStoreSrc) &&
           rowWords(rec, inst, store, recipe.rowStoreSrc, "row store", recipe.rowStoreWords) &&
           loadAccessType(rec, inst, recipe, store, recipe.rowStore, recipe.rowStoreSrc,
                          "row store", recipe.rowStoreType);
    }
    ok = loadSteps(rec, inst, rec->getValueAsListOfDefs("Pre"), true, nullptr, "the Pre steps",
                   recipe.pre) &&
         ok;
    const std::vector<Record *> passes = rec->getValueAsListOfDefs("Passes");
    if (passes.empty() || passes.size() > kRecipePasses) {
      error(rec, "'" + inst.mnemonic + "': a recipe has 1.." + Twine(kRecipePasses) + " passes");
      return false;
    }
    for (size_t p = 0; p < passes.size(); ++p) {
      const Record *passRec = passes[p];
      const std::string where = "pass " + std::to_string(p);
      RecipePass pass;
      for (llvm::StringRef nameRef : passRec->getValueAsListOfStrings("Inputs")) {
        const std::string name = nameRef.str();
        unsigned slot = 0;
        if (!streamSlot(rec, inst, name, slot) || slot >= SrcOB0) {
          if (slot >= SrcOB0)
            error(rec, "'" + inst.mnemonic + "': " + where + " loads '" + name +
                           "', not an input stream");
          ok = false;
          continue;
        }
        pass.inputs |= 1u << slot;
      }
      for (llvm::StringRef nameRef : passRec->getValueAsListOfStrings("Outputs")) {
        const std::string name = nameRef.str();
        unsigned slot = 0;
        if (!streamSlot(rec, inst, name, slot) || slot < SrcOB0) {
          if (slot < SrcOB0)
            error(rec, "'" + inst.mnemonic + "': " + where + " writes '" + name +
                           "', not an output stream");
          ok = false;
          continue;
        }
        pass.outputs |= 1u << (slot - SrcOB0);
      }
      for (const auto &[low, high] : highOf) {
        if (low < SrcOB0 && (pass.inputs & (1u << low)))
          pass.inputs |= 1u << high;
        if (low >= SrcOB0 && (pass.outputs & (1u << (low - SrcOB0))))
          pass.outputs |= 1u << (high - SrcOB0);
      }
      const unsigned used = pass.inputs | pass.outputs << SrcOB0;
      if (used & ~declared) {
        error(rec,
              "'" + inst.mnemonic + "': " + where + " uses a stream the recipe does not declare");
        ok = false;
      }
      const std::string reduce = passRec->getValueAsString("Reduce").str();
      if (reduce == "sum" || reduce == "max") {
        pass.reduce = reduce == "sum" ? ReduceKind::Sum : ReduceKind::Max;
        ok = scalarRegister(rec, inst, passRec->getValueAsString("Dst").str(), where + " reduction",
                            pass.reduceDst) &&
             ok;
      } else if (reduce != "none") {
        error(rec, "'" + inst.mnemonic + "': " + where + ": unknown reduction '" + reduce +
                       "' (none, sum, max)");
        ok = false;
      }
      ok = loadSteps(rec, inst, passRec->getValueAsListOfDefs("Steps"), false, &pass, where,
                     pass.steps) &&
           ok;
      ok = loadSteps(rec, inst, passRec->getValueAsListOfDefs("After"), true, nullptr,
                     where + " After", pass.after) &&
           ok;
      const bool masks =
          llvm::any_of(pass.steps, [](const RecipeStep &s) { return s.kind == StepKind::Mask; });
      if (masks && recipe.maskOffset < 0) {
        error(rec, "'" + inst.mnemonic + "': " + where + " masks but the recipe has no MaskOffset");
        ok = false;
      }
      recipe.passes.push_back(std::move(pass));
    }
    return ok;
  }

  // The variants of an instruction: every combination of the values their
  // conditions test matches exactly one recipe.
  void checkVariants(const Record *rec, const InstructionDef &inst) {
    // The values to try per operand: all values of a flag or enumeration,
    // else each value a condition names plus one it does not.
    std::vector<int> operands;
    std::vector<std::vector<uint64_t>> values;
    for (const RecipeDef &r : inst.recipes)
      for (const RecipeCondition &c : r.when)
        if (!llvm::is_contained(operands, c.operand))
          operands.push_back(c.operand);
    for (int operand : operands) {
      const OperandDef &op = inst.operands[operand];
      std::vector<uint64_t> domain;
      if (op.kind == OperandKind::Flag)
        domain = {0, 1};
      else if (op.kind == OperandKind::Enum)
        for (int64_t value : op.accepts)
          domain.push_back(static_cast<uint64_t>(value));
      else {
        for (const RecipeDef &r : inst.recipes)
          for (const RecipeCondition &c : r.when)
            if (c.operand == operand && !llvm::is_contained(domain, c.value))
              domain.push_back(c.value);
        uint64_t other = 0;
        while (llvm::is_contained(domain, other))
          ++other;
        domain.push_back(other);
      }
      values.push_back(domain);
    }
    std::vector<size_t> pick(operands.size(), 0);
    while (true) {
      std::vector<size_t> matching;
      for (size_t r = 0; r < inst.recipes.size(); ++r)
        if (llvm::all_of(inst.recipes[r].when, [&](const RecipeCondition &c) {
              const size_t i = llvm::find(operands, c.operand) - operands.begin();
              return (values[i][pick[i]] == c.value) == c.equal;
            }))
          matching.push_back(r);
      if (matching.size() != 1) {
        std::string combination;
        for (size_t i = 0; i < operands.size(); ++i)
          combination += (i ? ", " : "") + inst.operands[operands[i]].name + " = " +
                         std::to_string(values[i][pick[i]]);
        if (combination.empty())
          combination = "every packet";
        if (matching.empty())
          error(rec, "'" + inst.mnemonic + "': no recipe variant matches " + combination);
        else
          error(rec, "'" + inst.mnemonic + "': recipes " + Twine(matching[0]) + " and " +
                         Twine(matching[1]) + " both match " + combination);
        return;
      }
      size_t i = 0;
      while (i < pick.size() && ++pick[i] == values[i].size())
        pick[i++] = 0;
      if (i == pick.size())
        return;
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
      if ((name == "MatrixTile" || name == "MatrixBlockTiles" || name == "VectorLanes" ||
           name == "AxiDataBytes" || name == "AxiOutstanding" || name == "RingEntries" ||
           name == "VectorRegisters" || name == "RegionEntries") &&
          (v & (v - 1))) {
        error(rec, "hardware parameter " + name + " = " + Twine(v) + " must be a power of two");
        continue;
      }
      // The memory port's read queue is indexed by a counter that wraps at
      // its depth, the matrix engine's accumulators by the tile's row and
      // column within a block: at least one bit each.
      if ((name == "AxiOutstanding" || name == "MatrixBlockTiles") && v < 2) {
        error(rec, "hardware parameter " + name + " = " + Twine(v) + " must be at least 2");
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
                        ":" + std::to_string(op.slot.width) + ":" + std::to_string(op.align) + ":" +
                        std::to_string(op.optional) + ":" + std::to_string(op.defaultValue);
        if (op.hasRange)
          s += ":" + std::to_string(op.min) + ".." + std::to_string(op.max);
        if (op.enumType) {
          for (const EnumValueDef &v : op.enumType->values)
            s += ":" + v.name + "=" + std::to_string(v.value) + "/" + std::to_string(v.bytes);
          for (int64_t value : op.accepts)
            s += ":+" + std::to_string(value);
        }
        mix(s);
      }
    }
    return h;
  }

  const llvm::RecordKeeper &records_;
  IsaModel &model_;
  bool failed_ = false;
  // While a recipe loads, the instruction whose location its errors take:
  // an anonymous recipe record carries its class's location, not its use's.
  const Record *recipeOwner_ = nullptr;
  llvm::DenseMap<const Record *, const EnumTypeDef *> enumByRecord_;
  std::map<const Record *, size_t> primByRecord_;
  std::map<const Record *, size_t> programByRecord_;
};

} // namespace

bool loadIsa(const llvm::RecordKeeper &records, IsaModel &model) {
  return Loader(records, model).run();
}

} // namespace npu::tblgen
