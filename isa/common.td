//===- common.td - Operand types shared by several families ---------------===//

def DType : EnumType<"DType",
    [SizedValue<"f32", 0, 4, "IEEE binary32">,
     SizedValue<"bf16", 1, 2, "bfloat16: binary32's high half">,
     SizedValue<"f16", 2, 2, "IEEE binary16">,
     SizedValue<"i32", 3, 4, "32-bit two's-complement integer">,
     SizedValue<"i64", 4, 8, "64-bit two's-complement integer">,
     SizedValue<"b8", 5, 1, "truth value in one byte (torch.bool): 0 false, any other value true">],
    "Element data type of a compute instruction (flags bits 0-3); docs/types.md.">;

// Every compute instruction carries the data type in flags bits 0-3, and
// accepts the types it names.
class DTypeOf<list<string> accepts, int default = 0>
    : EnumOp<"dtype", DType, FlagBits<0, 4>, "element data type", default> {
  let Accepts = accepts;
}
defvar DTypeOp = DTypeOf<["f32"]>;

// The floating-point types: bf16 and f16 widen exactly to binary32 lanes
// and round once (RNE) on store (docs/types.md §2), so an instruction
// computing in binary32 accepts them by its f32 programs.
defvar FloatTypes = ["f32", "bf16", "f16"];

// The DType value named `type`.
class DTypeValue<string type> {
  int Value = !foldl(-1, DType.Values, found, v, !if(!eq(v.Name, type), v.Value, found));
}

def ElemSize : EnumType<"ElemSize",
    [SizedValue<"byte", 0, 1, "1-byte elements">, SizedValue<"half", 1, 2, "2-byte elements">,
     SizedValue<"word", 2, 4, "4-byte elements">, SizedValue<"quad", 3, 8, "8-byte elements">],
    "Element size of a strided copy.">;

def Broadcast : EnumType<"Broadcast",
    [EnumValue<"none", 0, "b has rows x cols elements">,
     EnumValue<"row", 1, "b has cols elements, reused by every row">,
     EnumValue<"col", 2, "b has rows elements, one per row">,
     EnumValue<"scalar", 3, "b is a single element">],
    "How the second operand of a binary elementwise instruction is broadcast.">;

def IndexType : EnumType<"IndexType",
    [SizedValue<"i32", 0, 4, "32-bit signed indices">, SizedValue<"i64", 1, 8, "64-bit signed indices">],
    "Type of the index tensor of a gather.">;

// Bit pattern of 1.0f, the default of scale-like operands.
defvar F32One = 0x3f800000;
