//===- common.td - Operand types shared by several families ---------------===//

def DType : EnumType<"DType", [EnumValue<"f32", 0, "IEEE binary32">],
                     "Element data type of a compute instruction (flags bits 0-3). "
                     "v1 defines only f32; the field reserves room for bf16/fp16.">;

// Every compute instruction carries the data type in flags bits 0-3.
defvar DTypeOp = EnumOp<"dtype", DType, FlagBits<0, 4>, "element data type">;

def ElemSize : EnumType<"ElemSize",
    [EnumValue<"byte", 0, "1-byte elements">, EnumValue<"half", 1, "2-byte elements">,
     EnumValue<"word", 2, "4-byte elements">, EnumValue<"quad", 3, "8-byte elements">],
    "Element size of a strided copy.">;

def Broadcast : EnumType<"Broadcast",
    [EnumValue<"none", 0, "b has rows x cols elements">,
     EnumValue<"row", 1, "b has cols elements, reused by every row">,
     EnumValue<"col", 2, "b has rows elements, one per row">,
     EnumValue<"scalar", 3, "b is a single element">],
    "How the second operand of a binary elementwise instruction is broadcast.">;

def IndexType : EnumType<"IndexType",
    [EnumValue<"i32", 0, "32-bit signed indices">, EnumValue<"i64", 1, "64-bit signed indices">],
    "Type of the index tensor of a gather.">;

// Bit pattern of 1.0f, the default of scale-like operands.
defvar F32One = 0x3f800000;
