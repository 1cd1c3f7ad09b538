//===- base.td - Classes the NPU ISA is written in ------------------------===//
//
// Everything the assembler, the ISS, the RTL and the docs must agree on is
// derived from records of these classes by npu-tblgen. This file declares
// only classes and the packet layout; npu.td instantiates the instruction set.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The 64-byte command packet.
//===----------------------------------------------------------------------===//

// A contiguous range of bits of the packet, little-endian: bit N is bit N%8
// of byte N/8. Slots that operands occupy are Fields too.
class Field<int offset, int width, string doc = ""> {
  int Offset = offset;
  int Width = width;
  string Doc = doc;
}

// A top-level field of the packet. Together the PacketFields must tile all
// 512 bits exactly once.
class PacketField<string name, int offset, int width, string ctype, string doc>
    : Field<offset, width, doc> {
  string Name = name;
  string CType = ctype;
}

// A bit range inside the flags word.
class FlagBits<int lo, int width = 1> : Field<!add(32, lo), width>;

//===----------------------------------------------------------------------===//
// Operand kinds and operands.
//===----------------------------------------------------------------------===//

// How an operand's bits are interpreted. MinWidth/MaxWidth bound the slot
// width the kind may occupy.
class OperandKind<string name, string ctype, int minWidth, int maxWidth, string doc> {
  string Name = name;
  string CType = ctype;
  int MinWidth = minWidth;
  int MaxWidth = maxWidth;
  string Doc = doc;
}

def K_Addr  : OperandKind<"addr", "uint64_t", 64, 64, "physical byte address">;
def K_U32   : OperandKind<"u32", "uint32_t", 1, 32, "unsigned integer">;
def K_I32   : OperandKind<"i32", "int32_t", 32, 32, "signed integer (two's complement)">;
def K_F32   : OperandKind<"f32", "float", 32, 32, "IEEE binary32 value, stored as its bit pattern">;
def K_Bits32 : OperandKind<"bits32", "uint32_t", 32, 32,
                           "32-bit pattern; the assembler accepts an integer or a float literal">;
def K_Flag  : OperandKind<"flag", "bool", 1, 1, "single modifier bit">;
def K_Enum  : OperandKind<"enum", "", 1, 32, "one of a fixed set of named values">;

class EnumValue<string name, int value, string doc = ""> {
  string Name = name;
  int Value = value;
  string Doc = doc;
  // The size in bytes of one element, for the values of an enumeration of
  // element types (every value of such an enumeration has one: 1, 2, 4 or
  // 8); 0 in other enumerations.
  int Bytes = 0;
}
class SizedValue<string name, int value, int bytes, string doc> : EnumValue<name, value, doc> {
  let Bytes = bytes;
}

class EnumType<string name, list<EnumValue> values, string doc> {
  string Name = name;
  list<EnumValue> Values = values;
  string Doc = doc;
}

// One operand of one instruction: its name (used in the assembly syntax and
// in generated C++), its kind, the slot it occupies and its constraints.
class Operand<string name, OperandKind kind, Field slot, string doc> {
  string Name = name;
  OperandKind Kind = kind;
  Field Slot = slot;
  string Doc = doc;
  // Integer range (u32/i32/enum raw values); ignored for other kinds.
  int Min = ?;
  int Max = ?;
  // Required byte alignment of an address operand.
  int Align = 1;
  // Enum operands name their type.
  EnumType Enum = ?;
  // Optional operands are written "name=value" (or just "name" for a flag)
  // after the positional ones and take Default when omitted.
  bit Optional = 0;
  int Default = 0;
  // An enum operand that accepts only these of its enumeration's values
  // (names); empty: every value. Any other value is an InvalidOperand fault
  // of the operand and an assembler error.
  list<string> Accepts = [];
}

// Shorthands the instruction files use.
class AddrOp<string name, Field slot, string doc, int align = 4>
    : Operand<name, K_Addr, slot, doc> {
  let Align = align;
}
// A size or count: at least 1.
class DimOp<string name, Field slot, string doc> : Operand<name, K_U32, slot, doc> {
  let Min = 1;
  let Max = 0xffffffff;
}
class U32Op<string name, Field slot, string doc, int min = 0, int max = 0xffffffff>
    : Operand<name, K_U32, slot, doc> {
  let Min = min;
  let Max = max;
}
class I32Op<string name, Field slot, string doc> : Operand<name, K_I32, slot, doc> {
  let Min = -2147483648;
  let Max = 2147483647;
}
class OptI32Op<string name, Field slot, string doc, int default, int min = -2147483648>
    : I32Op<name, slot, doc> {
  let Optional = 1;
  let Default = default;
  let Min = min;
}
class F32Op<string name, Field slot, string doc> : Operand<name, K_F32, slot, doc>;
// An f32 operand that may be omitted; default is a bit pattern.
class OptF32Op<string name, Field slot, string doc, int default> : F32Op<name, slot, doc> {
  let Optional = 1;
  let Default = default;
}
class FlagOp<string name, int pos, string doc> : Operand<name, K_Flag, FlagBits<pos>, doc> {
  let Optional = 1;
}
class EnumOp<string name, EnumType type, Field slot, string doc, int default = 0>
    : Operand<name, K_Enum, slot, doc> {
  let Enum = type;
  let Optional = 1;
  let Default = default;
}

//===----------------------------------------------------------------------===//
// Timing-model costs and the hardware configuration.
//===----------------------------------------------------------------------===//

class Engine<string name, string doc> {
  string Name = name;
  string Doc = doc;
}
def E_Control : Engine<"control", "command processor: fetch, decode, ordering">;
def E_Dma     : Engine<"dma", "AXI DMA engine: copies, fills, gathers">;
def E_Matrix  : Engine<"matrix", "T x T output-stationary array of fp32 FMA units">;
def E_Vector  : Engine<"vector", "L fp32 lanes driven by the micro-sequencer">;

// Setup: fixed cycles per packet on its engine after decode.
// PerElement: engine cycles per lane-element (vector: micro-program steps per
// element; dma: unused, bandwidth comes from the AXI parameters).
class Cost<Engine engine, int setup, int perElement> {
  Engine Engine = engine;
  int Setup = setup;
  int PerElement = perElement;
}

// The one machine that the ISS timing model and the RTL both describe.
class HardwareConfig {
  int MatrixTile = ?;       // T: the matrix engine is a T x T PE array
  int MatrixBlockTiles = ?; // B: it computes B x B output tiles per operand panel (B^2 accumulators per PE; a power of two >= 2)
  int VectorLanes = ?;      // L: vector lanes, also the reduction lane count
  int AxiDataBytes = ?;     // AXI4 data bus width in bytes
  int AxiMaxBurst = ?;      // beats per burst
  int AxiOutstanding = ?;   // per direction: read bursts in flight, write responses pending (a power of two >= 2)
  int MemLatency = ?;       // cycles from AR/AW to first beat
  int FetchCycles = ?;      // cycles to fetch and decode one packet
  int RingEntries = ?;      // command ring size in packets
  int VectorRegisters = ?;  // 32-bit registers per vector lane that micro-programs run in
  int RegionEntries = ?;    // entries of the region table the operand checks use
  int ClockMegahertz = ?;   // the clock device cycles are converted to time at (event timing, profiles)
}

//===----------------------------------------------------------------------===//
// Memory operands: the byte range of every address operand.
//===----------------------------------------------------------------------===//

// How many bytes an address operand covers, computed from other operands of
// the same packet. Every device computes each extent exactly before the
// packet's engine starts: an extent whose start or length does not fit in 64
// bits is an InvalidOperand fault of the address operand, and every range is
// then checked against the region table (docs/simulator.md, "Operand checks").
class Extent<string kind> {
  string Kind = kind;
}

// ElemBytes times the product of Factors (DimOp operands, so every factor is
// at least 1), times the element size (EnumValue's Bytes) of the value of
// the enum operand SizeBy when one is named (an element size or type
// chosen per packet; ElemBytes is then 1).
class Product<list<string> factors, int elemBytes = 4, string sizeBy = "">
    : Extent<"product"> {
  list<string> Factors = factors;
  int ElemBytes = elemBytes;
  string SizeBy = sizeBy;
}

// One Product per value of the enum operand Selector, in value order (the
// second operand of a broadcasting binary instruction).
class ProductBy<string selector, list<Product> choices> : Extent<"select"> {
  string Selector = selector;
  list<Product> Choices = choices;
}

// Row-major matrices of Rows x Cols elements, stored transposed (Cols x
// Rows) when the flag operand Trans is set, each stored row Pitch elements
// apart (Pitch = 0, or no Pitch operand, is dense: the stored row length; a
// pitch below the stored row length is an InvalidOperand fault of Pitch).
// With Batch, Batch matrices BatchStride elements apart; Distinct requires
// consecutive matrices not to overlap (an Overlap fault of the operand).
// Elements are 4 bytes, or the size (EnumValue's Bytes) of the value of the
// enum operand SizeBy when one is named; pitches and strides count elements.
class MatrixExtent<string rows, string cols, string pitch, string trans, string batch = "",
                   string batchStride = "", bit distinct = 0, string sizeBy = "">
    : Extent<"matrix"> {
  string Rows = rows;
  string Cols = cols;
  string Pitch = pitch;
  string Trans = trans;
  string Batch = batch;
  string BatchStride = batchStride;
  bit Distinct = distinct;
  string SizeBy = sizeBy;
}

// The strided view of COPY_STRIDED: elements of 2^(value of ESize) bytes at
// element offsets i0*stride0 + ... + i3*stride3 (i_d < size_d, signed
// strides) from the address; the range runs from the lowest to the highest
// element.
class StridedExtent<list<string> sizes, list<string> strides, string esize>
    : Extent<"strided"> {
  list<string> Sizes = sizes;
  list<string> Strides = strides;
  string ESize = esize;
}

// The address operand Operand covers Extent and is accessed as Access: "r"
// (read), "w" (written) or "rw" (read and written). It is accessed only when
// the flag operand When is set (when named), and a write becomes a
// read-modify-write when the flag operand UpdateWhen is set.
//
// Holds says what the range contains, so that tools (the random stream
// generator) fill inputs the way the instruction reads them: "f32" values;
// "bytes" moved without interpretation; "index" little-endian integers of
// the extent's element size, each an index below the value of the operand
// IndexBound (an IndexOutOfRange fault otherwise) and, while the flag
// operand IndexWrap (when named) is set, at least minus that value (a
// negative index counts from the end); "hyper" a block of f32
// hyper-parameters (learning rate, decay factors, epsilon).
class MemOperand<string operand, string access, Extent extent, string when = "",
                 string updateWhen = "", string holds = "f32", string indexBound = "",
                 string indexWrap = ""> {
  string Operand = operand;
  string Access = access;
  Extent Extent = extent;
  string When = when;
  string UpdateWhen = updateWhen;
  string Holds = holds;
  string IndexBound = indexBound;
  string IndexWrap = indexWrap;
}

// Read-only operands of the non-f32 kinds.
class BytesOperand<string operand, string access, Extent extent>
    : MemOperand<operand, access, extent, "", "", "bytes">;
class IndexOperand<string operand, Extent extent, string bound, string wrap = "">
    : MemOperand<operand, "r", extent, "", "", "index", bound, wrap>;
class HyperOperand<string operand, Extent extent>
    : MemOperand<operand, "r", extent, "", "", "hyper">;

// The ranges of two memory operands must not overlap (an Overlap fault
// otherwise), except that with InPlace an exact alias (same start, same
// length) is allowed; with InPlaceIf as well, only while the enum operand
// InPlaceIf has the value InPlaceValue. A rule applies when both operands
// are accessed. Every pair of memory operands of which one is written has a
// rule (npu-tblgen checks): a result never depends on the order in which an
// engine reads and writes overlapping ranges.
class Disjoint<string a, string b, bit inPlace = 0, string inPlaceIf = "", int inPlaceValue = 0> {
  string A = a;
  string B = b;
  bit InPlace = inPlace;
  string InPlaceIf = inPlaceIf;
  int InPlaceValue = inPlaceValue;
}

include "recipe.td"

// A fault code a device reports (faults.td).
class FaultCode<string name, int value, string doc> {
  string Name = name;
  int Value = value;
  string Doc = doc;
}

//===----------------------------------------------------------------------===//
// Instructions.
//===----------------------------------------------------------------------===//

// Syntax lists the positional operands as "$name" placeholders separated by
// literal punctuation. Every non-optional operand appears exactly once;
// optional operands never appear (they are written name=value).
class Instruction<string mnemonic, int opcode, string family,
                  list<Operand> operands, string syntax, Cost cost, string doc> {
  string Mnemonic = mnemonic;
  int Opcode = opcode;
  string Family = family;
  list<Operand> Operands = operands;
  string Syntax = syntax;
  Cost Cost = cost;
  string Doc = doc;
  // Precise semantics in prose for the ISA reference.
  string Semantics = "";
  // Every address operand's range, in the order the devices check them, and
  // the pairs of ranges that must not overlap, in the order they are checked.
  list<MemOperand> Memory = [];
  list<Disjoint> Disjoints = [];
  // How the vector engine runs it (recipe.td): one recipe per variant;
  // every instruction of E_Vector has them, no other.
  list<VectorRecipe> Recipes = [];
}

//===----------------------------------------------------------------------===//
// Arithmetic micro-programs (docs/arith.md).
//===----------------------------------------------------------------------===//

// A primitive operation of the vector lanes (docs/arith.md gives the exact
// semantics). All registers hold 32 bits. "f" operations read binary32 with
// denormal inputs as zeros of the same sign, round to nearest even, flush
// results that are tiny after rounding to signed zero, and return the
// canonical NaN 0x7fc00000 for every NaN result; "i" operations work on
// two's-complement bit patterns. Each primitive must stay cheap in RTL.
class Prim<string name, int numSrc, string doc> {
  string Name = name;
  int NumSrc = numSrc;
  string Doc = doc;
}
def fadd   : Prim<"fadd", 2, "a + b">;
def fsub   : Prim<"fsub", 2, "a - b">;
def fmul   : Prim<"fmul", 2, "a * b">;
def ffma   : Prim<"ffma", 3, "a * b + c with a single rounding">;
def fmin   : Prim<"fmin", 2, "minimum; NaN if either is NaN; -0 < +0">;
def fmax   : Prim<"fmax", 2, "maximum; NaN if either is NaN; -0 < +0">;
def fabs   : Prim<"fabs", 1,
                  "a with the sign cleared (a denormal gives +0, a NaN the canonical NaN)">;
def fneg   : Prim<"fneg", 1,
                  "a with the sign flipped (a denormal gives a zero, a NaN the canonical NaN)">;
def flt    : Prim<"flt", 2, "all-ones if a < b (ordered; -0 == +0) else 0">;
def fle    : Prim<"fle", 2, "all-ones if a <= b (ordered; -0 == +0) else 0">;
def fisnan : Prim<"fisnan", 1, "all-ones if a is NaN else 0">;
def fround : Prim<"fround", 1, "nearest integral value, ties to even (result is binary32)">;
def f2i    : Prim<"f2i", 1, "binary32 to int32, round to nearest even, saturating; NaN gives 0">;
def i2f    : Prim<"i2f", 1, "int32 to binary32, round to nearest even">;
def iadd   : Prim<"iadd", 2, "32-bit integer add, wrapping">;
def isub   : Prim<"isub", 2, "32-bit integer subtract, wrapping">;
def ishl   : Prim<"ishl", 2, "shift left by the constant b (0..31)">;
def ishr   : Prim<"ishr", 2, "logical shift right by the constant b (0..31)">;
def isra   : Prim<"isra", 2, "arithmetic shift right by the constant b (0..31)">;
def iand   : Prim<"iand", 2, "bitwise and">;
def ior    : Prim<"ior", 2, "bitwise or">;
def ixor   : Prim<"ixor", 2, "bitwise xor">;
def sel    : Prim<"sel", 3, "m ? a : b, bitwise: (m & a) | (~m & b); m must be a mask "
                           "(a compare result, isra by 31, or iand/ior/ixor of masks)">;
// Integer primitives of docs/types.md §4: i32/i64 arithmetic, compares and
// variable shifts in a bounded number of steps (a 32x32 multiplier shared by
// imul and imulhu, a comparator, a barrel shifter).
def imul   : Prim<"imul", 2, "low 32 bits of the product a * b">;
def imulhu : Prim<"imulhu", 2, "high 32 bits of the unsigned 64-bit product a * b">;
def ieq    : Prim<"ieq", 2, "all-ones if the patterns a and b are equal else 0">;
def ilt    : Prim<"ilt", 2, "all-ones if a < b as signed int32 else 0">;
def iltu   : Prim<"iltu", 2, "all-ones if a < b as unsigned int32 else 0">;
def ishlv  : Prim<"ishlv", 2, "a << b for b in [0, 31] (b unsigned), else 0">;
def ishrv  : Prim<"ishrv", 2, "a >> b logical for b in [0, 31] (b unsigned), else 0">;
def israv  : Prim<"israv", 2,
                  "a >> b arithmetic for b in [0, 31] (b unsigned), else a >> 31 (the sign fill)">;
// Conversions of cast (docs/types.md §3) that f2i and i2f do not give: an
// int64 register pair to binary32 with one rounding (a 64-bit normaliser),
// and binary32 to integers truncating toward zero (a shifter of the
// significand, like f2i's without its rounding).
def l2f    : Prim<"l2f", 2, "binary32 nearest the int64 (b:a, a the low word), ties to even">;
def f2iz   : Prim<"f2iz", 1, "binary32 to int32, truncating toward zero, saturating; NaN gives 0">;
def f2lzlo : Prim<"f2lzlo", 1,
                  "low word of binary32 to int64, truncating toward zero, saturating; NaN gives 0">;
def f2lzhi : Prim<"f2lzhi", 1,
                  "high word of binary32 to int64, truncating toward zero, saturating; NaN gives 0">;

// A straight-line micro-program: Inputs name the incoming registers; each
// step is (prim:$dest src, ...) where a source is a "$register" or an
// integer constant (a 32-bit pattern, e.g. 0x3f800000 for 1.0f); Result
// names the register holding the output. A register may be written more
// than once; every value written must be read. npu-tblgen maps the names
// onto the VectorRegisters registers of a lane and the constants onto the
// micro-code constant pool (docs/arith.md, "Micro-code ROM").
//
// Reference is the exact function the program approximates, which npu-ulp
// measures it against (docs/arith.md §7): a C++ expression of type double in
// the inputs, named as in Inputs and passed as doubles, e.g. "std::erf(x)".
// It may call <cmath> and the helpers npu-ulp defines for references longer
// than an expression (sigmoid, normalCdf, siluBackward, ...). A program of
// more than one step must have one (npu-tblgen checks it); a single step is
// a primitive, rounded per docs/arith.md §2.
class MicroProgram<string name, list<string> inputs, list<dag> steps, string result,
                   string doc> {
  string Name = name;
  list<string> Inputs = inputs;
  list<dag> Steps = steps;
  string Result = result;
  string Doc = doc;
  string Reference = "";
  // The inputs are integer lane forms (I, L or M of docs/types.md §2): they
  // are loaded as the bits the engine holds. Otherwise they are binary32 and
  // loaded canonicalised (docs/arith.md §1.1), which would turn the int32 1
  // (a denormal pattern) into 0 and -1 (a NaN pattern) into 0x7fc00000.
  bit RawInputs = 0;
}

//===----------------------------------------------------------------------===//
// The device's register window (AXI4-Lite CSR slave).
//===----------------------------------------------------------------------===//

// A 32-bit register at a byte offset of the CSR window. Access is "ro",
// "rw" or "wo".
class CsrRegister<string name, int offset, string access, string doc> {
  string Name = name;
  int Offset = offset;
  string Access = access;
  string Doc = doc;
}

// A named bit of a register.
class CsrBit<CsrRegister register, string name, int pos, string doc> {
  CsrRegister Register = register;
  string Name = name;
  int Bit = pos;
  string Doc = doc;
}
