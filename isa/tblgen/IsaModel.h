// The ISA as plain C++ data, read from TableGen records and validated once;
// every emitter works from this model, never from raw records.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class RecordKeeper;
class Record;
} // namespace llvm

namespace npu::tblgen {

inline constexpr unsigned kPacketBits = 512;

struct BitRange {
  unsigned offset = 0;
  unsigned width = 0;
  unsigned end() const { return offset + width; }
  bool overlaps(const BitRange &other) const {
    return offset < other.end() && other.offset < end();
  }
};

struct PacketFieldDef {
  std::string name;
  BitRange bits;
  std::string ctype;
  std::string doc;
};

struct EnumValueDef {
  std::string name;
  int64_t value = 0;
  std::string doc;
};

struct EnumTypeDef {
  std::string name;
  std::string doc;
  std::vector<EnumValueDef> values;
};

enum class OperandKind { Addr, U32, I32, F32, Bits32, Flag, Enum };
const char *kindName(OperandKind kind);
const char *kindEnumerator(OperandKind kind);

struct OperandDef {
  std::string name;
  OperandKind kind = OperandKind::U32;
  BitRange slot;
  std::string doc;
  bool hasRange = false;
  int64_t min = 0;
  int64_t max = 0;
  uint64_t align = 1;
  const EnumTypeDef *enumType = nullptr;
  bool optional = false;
  int64_t defaultValue = 0;
  // The default as the raw slot bits (two's complement for i32).
  uint64_t defaultBits() const;
};

// One item of an instruction's positional syntax: an operand or a literal
// punctuation character.
struct SyntaxItem {
  int operand = -1;
  char literal = 0;
};

struct InstructionDef {
  std::string defName;
  std::string mnemonic;
  std::string family;
  uint32_t opcode = 0;
  std::vector<OperandDef> operands;
  std::string syntax;
  std::vector<SyntaxItem> syntaxItems;
  std::string engine;
  int64_t setupCycles = 0;
  int64_t perElementCycles = 0;
  std::string doc;
  std::string semantics;
  // Bits used by the opcode and the operands; all others are reserved.
  std::vector<bool> usedBits;
};

struct PrimDef {
  std::string name;
  unsigned numSrc = 0;
  std::string doc;
};

struct MicroArg {
  bool isRegister = false;
  std::string reg;
  uint32_t constant = 0;
};

struct MicroStep {
  const PrimDef *prim = nullptr;
  std::string dest;
  std::vector<MicroArg> args;
};

struct MicroProgramDef {
  std::string defName;
  std::string name;
  std::vector<std::string> inputs;
  std::vector<MicroStep> steps;
  std::string result;
  std::string doc;
};

struct CsrBitDef {
  std::string name;
  unsigned bit = 0;
  std::string doc;
};

struct CsrRegisterDef {
  std::string name;
  uint32_t offset = 0;
  std::string access; // ro, rw, wo
  std::string doc;
  std::vector<CsrBitDef> bits;
};

inline constexpr uint32_t kCsrWindowBytes = 4096;

struct HardwareParam {
  std::string name;
  int64_t value = 0;
};

struct IsaModel {
  std::vector<PacketFieldDef> packetFields; // sorted by offset
  std::vector<EnumTypeDef> enums;
  std::vector<InstructionDef> instructions; // sorted by opcode
  std::vector<std::string> families;        // in order of first opcode
  std::vector<PrimDef> prims;
  std::vector<MicroProgramDef> programs;
  std::vector<HardwareParam> hardware;
  std::vector<CsrRegisterDef> csrs; // sorted by offset
  std::map<std::string, std::string> engineDocs;
  int64_t versionMajor = 0;
  int64_t versionMinor = 0;
  uint64_t hash = 0;

  const PacketFieldDef *fieldContaining(unsigned bit) const;
};

// Reads and validates the ISA. Each problem is reported at its .td location
// through llvm::PrintError; returns false if there was any.
bool loadIsa(const llvm::RecordKeeper &records, IsaModel &model);

} // namespace npu::tblgen
