// libnpu_isa: the instruction set as data, and the codec between typed or
// generic instructions and 64-byte packets. Everything instruction-specific
// comes from the tables generated from isa/*.td; nothing here names an opcode.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npu::isa {

inline constexpr size_t kPacketBytes = 64;
using Packet = std::array<uint8_t, kPacketBytes>;

// The packet of a typed instruction (an isa::inst:: struct of npu_isa_gen.h).
template <class Instruction> Packet packetOf(const Instruction &typed) {
  Packet packet;
  typed.toPacket(packet.data());
  return packet;
}

enum class OperandKind : uint8_t { Addr, U32, I32, F32, Bits32, Flag, Enum };
enum class Engine : uint8_t { Control, Dma, Matrix, Vector };

struct PacketFieldInfo {
  const char *name;
  uint16_t bitOffset;
  uint16_t bitWidth;
  const char *doc;
};

struct EnumValueInfo {
  const char *name;
  uint32_t value;
  const char *doc;
  uint8_t bytes; // element size of a value of a type enumeration, else 0
};

struct EnumInfo {
  const char *name;
  const EnumValueInfo *values;
  uint32_t numValues;
  const char *doc;
  const EnumValueInfo *findValue(uint64_t value) const;
  const EnumValueInfo *findName(std::string_view name) const;
};

struct OperandInfo {
  const char *name;
  OperandKind kind;
  uint16_t bitOffset;
  uint16_t bitWidth;
  bool optional;
  bool hasRange;
  int64_t min;
  int64_t max;
  uint64_t defaultBits;
  uint32_t align;
  const EnumInfo *enumInfo;
  // Enum: bit v set when the operand accepts value v; all ones: every value
  // of its enumeration.
  uint64_t acceptMask;
  const char *doc;
  // Whether an enum operand accepts the value (a value of its enumeration
  // that it lists); true for other kinds.
  bool accepts(uint64_t raw) const;
};

// One item of an instruction's positional syntax: operand index, or -1 and
// a literal punctuation character.
struct SyntaxItem {
  int8_t operand;
  char literal;
};

// The byte range of an address operand, computed from other operands of its
// packet (isa/base.td, "Memory operands"). Operand references are indices
// into InstrInfo::operands, -1 for none.
enum class ExtentKind : uint8_t { Product, Matrix, Strided };

// 2^elemLog2 bytes times the product of the factor operands, times the
// element size (EnumValueInfo::bytes) of the value of the enum operand
// sizeBy when there is one.
struct ProductInfo {
  int8_t factors[4];
  uint8_t elemLog2;
  int8_t sizeBy;
};

// What a memory operand's range holds: f32 values, bytes moved without
// interpretation, indices (integers of the extent's element size, each below
// the value of the operand indexBound), a block of f32 hyper-parameters.
enum class MemContent : uint8_t { F32, Bytes, Index, Hyper };

struct MemOperandInfo {
  uint8_t operand;
  bool reads, writes;
  int8_t when;       // flag: accessed only when set
  int8_t updateWhen; // flag: a write is a read-modify-write when set
  MemContent holds;
  int8_t indexBound; // Index: the operand every index is below
  int8_t indexWrap;  // Index, flag: while set, every index is at least minus indexBound's value
  ExtentKind kind;
  // Product: choices[0], or choices[value of the enum operand selector].
  int8_t selector;
  uint8_t numChoices;
  ProductInfo choices[4];
  // Matrix: f32 rows x cols, stored transposed when the flag trans is set,
  // stored rows pitch elements apart (0 or no operand: dense); batch
  // matrices batchStride elements apart, not overlapping when distinct.
  int8_t rows, cols, pitch, trans, batch, batchStride;
  bool distinct;
  // Strided: the view of sizes[d] elements of 2^esize bytes, strides[d]
  // elements apart (signed), lowest to highest element.
  int8_t sizes[4], strides[4], esize;
  // Matrix: elements of the size of the value of the enum operand sizeBy,
  // 4 bytes when -1.
  int8_t sizeBy;
};

// Memory operands a and b (indices into InstrInfo::memory) must not overlap,
// except as an exact alias where inPlace holds (only while the enum operand
// inPlaceIf has inPlaceValue, when named).
struct DisjointInfo {
  uint8_t a, b;
  bool inPlace;
  int8_t inPlaceIf;
  uint32_t inPlaceValue;
};

} // namespace npu::isa

#include "npu/isa/npu_isa_gen.h"

namespace npu::isa {

struct InstrInfo {
  Opcode opcode;
  const char *name; // the .td def name, e.g. COPY_STRIDED
  const char *mnemonic;
  const char *family;
  const OperandInfo *operands;
  uint32_t numOperands;
  const SyntaxItem *syntax;
  uint32_t numSyntaxItems;
  Engine engine;
  uint32_t setupCycles;
  uint32_t perElementCycles;
  uint64_t usedBits[8]; // opcode and operand bits; the rest is reserved
  const char *doc;
  // Every address operand's range in check order, and the overlap rules in
  // check order.
  const MemOperandInfo *memory;
  uint32_t numMemory;
  const DisjointInfo *disjoints;
  uint32_t numDisjoints;

  std::span<const OperandInfo> operandList() const { return {operands, numOperands}; }
  std::span<const SyntaxItem> syntaxList() const { return {syntax, numSyntaxItems}; }
  std::span<const MemOperandInfo> memoryList() const { return {memory, numMemory}; }
  std::span<const DisjointInfo> disjointList() const { return {disjoints, numDisjoints}; }
  // Index of the operand called `name`, or -1.
  int operandIndex(std::string_view name) const;
};

std::span<const InstrInfo> instructions();
std::span<const PacketFieldInfo> packetFields();
std::span<const EnumInfo *const> enums();
const InstrInfo *findOpcode(uint32_t opcode);
const InstrInfo &info(Opcode opcode);
const InstrInfo *findMnemonic(std::string_view mnemonic);
const char *engineName(Engine engine);
const char *kindName(OperandKind kind);

// An instruction of `opcode` with every optional operand at its default.
Instruction makeInstruction(Opcode opcode);

// Checks every operand against its constraints (range, alignment, enum
// values, slot width). On failure returns false and explains in *error.
bool validate(const Instruction &inst, std::string *error = nullptr);

// Writes the 64 bytes of a validated instruction.
void encode(const Instruction &inst, std::span<uint8_t, kPacketBytes> out);

enum class DecodeError { None, UnknownOpcode, ReservedBits, OutOfRange, Misaligned, BadEnum };

// Decodes and validates a packet: unknown opcodes, reserved bits that are
// set and operands outside their constraints are errors (never UB). On an
// operand's failure, *operand is its index (else -1).
bool decode(std::span<const uint8_t, kPacketBytes> bytes, Instruction &out,
            std::string *error = nullptr, DecodeError *why = nullptr, int *operand = nullptr);

// Interprets the raw bits of an operand as a signed value (i32) or returns
// them unchanged (other kinds).
int64_t operandValue(const OperandInfo &op, uint64_t raw);

// log2 of the element size of a product extent, given the operand values
// of a validated instruction (whose sizeBy value is one its operand accepts).
unsigned elementLog2(const InstrInfo &info, const ProductInfo &p, const Instruction &inst);
// The same of a matrix extent (2 when it names no sizeBy).
unsigned elementLog2(const InstrInfo &info, const MemOperandInfo &matrix, const Instruction &inst);

// The values an enum operand accepts, in enumeration order, and their
// names, comma-separated.
std::vector<uint32_t> acceptedValues(const OperandInfo &op);
std::string acceptedNames(const OperandInfo &op);

} // namespace npu::isa
