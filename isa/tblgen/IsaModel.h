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
  unsigned bytes = 0; // element size of a type enumeration's value, else 0
};

struct EnumTypeDef {
  std::string name;
  std::string doc;
  std::vector<EnumValueDef> values;
  // An enumeration of element types: every value has a size.
  bool sized() const { return !values.empty() && values.front().bytes != 0; }
  const EnumValueDef *find(int64_t value) const;
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
  // Enum: the values the operand accepts, ascending (all of its
  // enumeration's unless the record restricts them; each below 64).
  std::vector<int64_t> accepts;
  bool acceptsAll() const { return accepts.size() == enumType->values.size(); }
  uint64_t acceptMask() const;
  // The default as the raw slot bits (two's complement for i32).
  uint64_t defaultBits() const;
};

// One item of an instruction's positional syntax: an operand or a literal
// punctuation character.
struct SyntaxItem {
  int operand = -1;
  char literal = 0;
};

// The byte range of an address operand (base.td, "Memory operands"). Operand
// references are indices into InstructionDef::operands, -1 for none.
enum class ExtentKind { Product, Matrix, Strided };
const char *extentKindName(ExtentKind kind);

// What a memory operand's range holds (base.td, MemOperand's Holds).
enum class MemContent { F32, Bytes, Index, Hyper };
const char *memContentName(MemContent content);

struct ProductDef {
  std::vector<int> factors; // DimOp operands
  unsigned elemLog2 = 2;    // log2 of ElemBytes
  int sizeBy = -1;          // enum operand (of a sized enumeration) whose value's size multiplies
};

struct MemOperandDef {
  int operand = -1;
  bool reads = false, writes = false;
  int when = -1;       // flag: the operand is accessed only when set
  int updateWhen = -1; // flag: a write is a read-modify-write when set
  MemContent holds = MemContent::F32;
  int indexBound = -1; // Index: each index is below this operand's value
  int indexWrap = -1;  // Index, flag: while set, each index is at least minus that value
  ExtentKind kind = ExtentKind::Product;
  // Product: one choice, or one per value of the enum `selector` (in value order).
  int selector = -1;
  std::vector<ProductDef> choices;
  // Matrix: rows, cols, pitch, trans, batch, batchStride; Strided: sizes[4],
  // strides[4], esize. Unused entries are -1.
  int rows = -1, cols = -1, pitch = -1, trans = -1, batch = -1, batchStride = -1;
  bool distinct = false;
  int sizeBy = -1; // Matrix: enum operand whose value's size is the element size (else 4 bytes)
  std::vector<int> sizes, strides;
  int esize = -1;
};

struct DisjointDef {
  unsigned a = 0, b = 0;    // indices into InstructionDef::memory
  bool inPlace = false;     // an exact alias is allowed ...
  int inPlaceIf = -1;       // ... only while this enum operand ...
  int64_t inPlaceValue = 0; // ... has this value
};

// The inputs of a micro-program's Reference lambda (npu-ulp measures at most
// that many).
inline constexpr unsigned kMaxReferenceInputs = 4;

// Vector-engine recipes (isa/recipe.td). Value sources and destinations of
// a step, as the engine encodes them (5 bits): the input streams, the
// output streams, +0, the lane temporaries, 1.0, cols as binary32, the
// element's column and row index (int32 lane values), and the scalar
// registers.
// A section's steps are indexed by kRecipeStepIndexBits bits, the last index
// kept for its end: 127 steps hold a Philox4x32-10 block per lane (RAND).
inline constexpr unsigned kRecipeStepIndexBits = 7;
inline constexpr unsigned kRecipeInputs = 4, kRecipeOutputs = 3, kRecipeTemps = 4,
                          kRecipeScalars = 16, kRecipePasses = 3,
                          kRecipeMaxSteps = (1u << kRecipeStepIndexBits) - 1,
                          kRecipePreLoadWords = 8, kRecipePacketScalars = 3, kRecipeRowWords = 2;
enum RecipeSource : unsigned {
  SrcIB0 = 0,
  SrcOB0 = 4,
  SrcZero = 7,
  SrcT0 = 8,
  SrcOne = 12,
  SrcCols = 13,
  SrcCol = 14,
  SrcRow = 15,
  SrcK0 = 16,
};
// The recipe name of a source code ("IB0", "K3", ...), "" for an unused code.
std::string recipeSourceName(unsigned code);

enum class StepKind { End, Run, Mask, Reduce, Scan };
enum class ReduceKind { None, Sum, Max };

struct RecipeStep {
  StepKind kind = StepKind::Run;
  int program = -1; // index into IsaModel::programs (Run, Scan)
  unsigned src0 = SrcZero, src1 = SrcZero, dst = SrcZero;
};

struct RecipePass {
  unsigned inputs = 0;  // mask of IB0..IB3
  unsigned outputs = 0; // mask of OB0..OB2
  ReduceKind reduce = ReduceKind::None;
  unsigned reduceDst = 0; // scalar register
  std::vector<RecipeStep> steps, after;
};

// The element type of a stream or of a scalar access (pre-load, row load,
// row store): the DType value of the enum operand typeOperand, or fixedType
// (-1: untyped 32-bit words, which the engine treats as f32).
struct ElementType {
  int typeOperand = -1;
  int64_t fixedType = -1;
  bool typed() const { return typeOperand >= 0 || fixedType >= 0; }
  int64_t engineType() const { return fixedType < 0 ? 0 : fixedType; }
};

struct RecipeStream : ElementType {
  unsigned slot = 0; // IB0..IB3, OB0..OB2: 0..6
  int operand = -1;  // address operand
  bool perRow = true;
  bool zeroFirstRow = false;
  // The slot holds the high words of the i64 elements of the stream in the
  // slot before it.
  bool high = false;
};

// A variant condition: operand == value, or != value.
struct RecipeCondition {
  int operand = -1;
  uint64_t value = 0;
  bool equal = true;
};

enum class RowLoadKind { None, Scalar, Index };

struct RecipeDef {
  std::string name; // unique over the ISA: R_<INSTRUCTION>_<n>
  std::vector<RecipeCondition> when;
  int rows = -1; // dimension operand, -1: one row
  int cols = -1;
  std::vector<int> scalars; // operands loaded into K0, K1, ...
  int maskOffset = -1;      // operand of the causal limit
  std::vector<RecipeStream> streams;
  int preLoad = -1; // address operand
  unsigned preLoadWords = 0, preLoadFirst = 0;
  RowLoadKind rowLoad = RowLoadKind::None;
  int rowLoadOperand = -1;
  unsigned rowLoadDst = 0, rowLoadWords = 1;
  int indexType = -1, indexBound = -1, indexSkip = -1, indexBase = -1;
  unsigned rebase = 0; // streams starting at the index's row of indexBase
  int rowStore = -1;   // address operand
  unsigned rowStoreSrc = 0, rowStoreWords = 1;
  // Typed accesses move one element of their type (Words 1; an i64 fills
  // two registers), untyped ones their words.
  ElementType preLoadType, rowLoadType, rowStoreType;
  std::vector<RecipeStep> pre;
  std::vector<RecipePass> passes;
};

struct InstructionDef {
  std::string defName;
  std::string mnemonic;
  std::string family;
  // The classes derived from Instruction that the record is defined through
  // (UnaryOp, BinaryOp, ...), in inheritance order: instructions of one class share
  // an operand shape, so code generic over the class needs no opcode list.
  std::vector<std::string> classes;
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
  // Index into IsaModel::programs of the micro-program evaluating each
  // element (the record's Program field), or -1.
  int program = -1;
  // Every address operand's range in check order, and the overlap rules.
  std::vector<MemOperandDef> memory;
  std::vector<DisjointDef> disjoints;
  // How the vector engine runs it, one recipe per variant (E_Vector only).
  std::vector<RecipeDef> recipes;
  // A binary instruction's scalar forms (def names): `a op s` and `s op a`.
  std::string scalarForm, reverseScalarForm;
};

// What a primitive does with its registers, which decides the checks the
// loader applies and the host code generated for it.
enum class PrimClass {
  FloatArith, // fadd fsub fmul ffma fmin fmax fround: binary32 in and out
  SignOp,     // fabs fneg
  Compare,    // flt fle fisnan: binary32 in, mask out
  IntCompare, // ieq ilt iltu: 32-bit patterns in, mask out
  FloatToInt, // f2i f2iz f2lzlo f2lzhi
  IntToFloat, // i2f l2f
  Integer,    // iadd isub iand ior ixor imul imulhu ishlv ishrv israv
  Shift,      // ishl ishr isra: the second source is a constant 0..31
  Select,     // sel: the first source is a mask
};

struct PrimDef {
  std::string name;
  unsigned numSrc = 0;
  std::string doc;
  unsigned opcode = 0; // micro-code encoding: index in definition order
  PrimClass cls = PrimClass::FloatArith;
};

struct MicroArg {
  bool isRegister = false;
  std::string reg;
  uint32_t constant = 0;
  // Micro-code operand: the lane register read, or the constant-pool index.
  unsigned slot = 0;
};

struct MicroStep {
  const PrimDef *prim = nullptr;
  std::string dest;
  std::vector<MicroArg> args;
  unsigned destRegister = 0;
};

struct MicroProgramDef {
  std::string defName;
  std::string name;
  std::vector<std::string> inputs; // held in registers 0 .. inputs.size()-1 on entry
  std::vector<MicroStep> steps;
  std::string result;
  std::string doc;
  std::string reference;  // C++ double expression of the inputs; empty for none
  bool rawInputs = false; // inputs loaded as bits, not canonicalised
  unsigned resultRegister = 0;
  unsigned numRegisters = 0; // registers live at the same time, at most VectorRegisters
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

// A fault code (isa/faults.td).
struct FaultCodeDef {
  std::string name;
  uint32_t value = 0;
  std::string doc;
};
inline constexpr unsigned kFaultCodeBits = 4; // the devices' ERROR_CODE field

struct IsaModel {
  std::vector<PacketFieldDef> packetFields; // sorted by offset
  std::vector<EnumTypeDef> enums;
  std::vector<InstructionDef> instructions; // sorted by opcode
  std::vector<std::string> families;        // in order of first opcode
  std::vector<std::string> classes;         // InstructionDef::classes, in order of first opcode
  std::vector<PrimDef> prims;
  std::vector<MicroProgramDef> programs;
  std::vector<uint32_t> microConstants; // the micro-code constant pool
  std::vector<HardwareParam> hardware;
  std::vector<CsrRegisterDef> csrs; // sorted by offset
  std::map<std::string, std::string> engineDocs;
  std::vector<std::string> engines;     // in definition order
  std::vector<FaultCodeDef> faultCodes; // in value order
  int64_t versionMajor = 0;
  int64_t versionMinor = 0;
  uint64_t hash = 0;

  const PacketFieldDef *fieldContaining(unsigned bit) const;
  int64_t hardwareParam(const std::string &name) const;
};

// Limits of the micro-code encoding (docs/arith.md, "Micro-code ROM").
inline constexpr unsigned kMicroPrimBits = 6;     // primitive opcode field
inline constexpr unsigned kMicroConstantBits = 8; // constant-pool index
inline constexpr unsigned kMaxMicroConstants = 1u << kMicroConstantBits;

// The name of the generated X-macro listing the instructions of a family
// ("unary" -> NPU_FOR_EACH_UNARY) or of an instruction class ("UnaryOp" ->
// NPU_FOR_EACH_UNARY_OP).
std::string familyListMacro(const std::string &family);
std::string classListMacro(const std::string &className);

// Reads and validates the ISA. Each problem is reported at its .td location
// through llvm::PrintError; returns false if there was any.
bool loadIsa(const llvm::RecordKeeper &records, IsaModel &model);

// The most memory operands and overlap rules of any instruction; the RTL's
// check stage is sized by them.
unsigned maxMemOperands(const IsaModel &model);
unsigned maxDisjoints(const IsaModel &model);

} // namespace npu::tblgen
