//===- bits.td - Select, bitwise operations and shifts ---------------------===//
//
// SELECT and SELECTS (torch.where, masked_fill): dst = mask ? a : b, the
// mask a b8 stream (lane form M: all ones where true), a and b of dtype,
// moved as the lanes hold them — bitwise, y ^ ((x ^ y) & m), by programs
// with RawInputs, so no value is canonicalised (a bf16 or f16 element is
// widened and narrowed again by its stream: exact but for a NaN, which
// becomes the type's canonical NaN, docs/types.md §2).
//
// AND OR XOR NOT SHL SHR (docs/types.md §3, §5) on integer lanes, word by
// word (IntSteps of elementwise.td: an i64 is a register pair; a b8 mask
// one word, so and, or, xor, not of masks are the logical operations).
//
// A b broadcast per row or once (bcast col, scalar) is one element of
// dtype loaded typed (isa/recipe.td: 1, 2 or 4 bytes, widened to its lane
// form as a stream's), so the tensor forms take b8 and bf16/f16 under every
// broadcast. SELECT's tensor form has no i64: under bcast none and row its
// mask, a and b streams would take five input slots (a and b two each), and
// the engine has four; the bridge selects an i64 as two i32 words under a
// doubled mask, and SELECTS (b from the packet) takes i64.
//
//===----------------------------------------------------------------------===//

// The variable shifts of docs/types.md §4 and the amounts of IntShift
// (elementwise.td): one primitive each, on integer patterns.
let RawInputs = 1 in {
def MP_ishlv : MicroProgram<"ishlv", ["a", "n"], [(ishlv:$y $a, $n)], "y",
                            "a << n, 0 for n outside [0, 31] (n unsigned).">;
def MP_ishrv : MicroProgram<"ishrv", ["a", "n"], [(ishrv:$y $a, $n)], "y",
                            "a >> n logical, 0 for n outside [0, 31] (n unsigned).">;
def MP_israv : MicroProgram<"israv", ["a", "n"], [(israv:$y $a, $n)], "y",
                            "a >> n arithmetic, the sign fill for n outside [0, 31] (n "
                            "unsigned).">;
def MP_shift_rest : MicroProgram<"shift_rest", ["n"], [(isub:$y 32, $n)], "y",
                                 "32 - n: how far the bits crossing between an int64's words "
                                 "move for a shift by n < 32.">;
def MP_shift_past : MicroProgram<"shift_past", ["n"], [(isub:$y $n, 32)], "y",
                                 "n - 32: how far one word of an int64 moves into the other for "
                                 "a shift by n >= 32.">;
def MP_below32 : MicroProgram<"below32", ["n"], [(iltu:$m $n, 32)], "m",
                              "The mask n < 32, unsigned.">;
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

// The types of the tensor form (all but i64, see above), and of the scalar
// form: all six.
defvar SelectTypes = ["f32", "bf16", "f16", "i32", "b8"];
defvar SelectScalarTypes = ["f32", "bf16", "f16", "i32", "i64", "b8"];

// The mask's shape: rows x cols, or one row of cols for every row (the
// bridge's where(mask[..., 1, cols], a, b)).
class MaskBcastOp : EnumOp<"mbcast", Broadcast, FlagBits<6, 2>,
                           "broadcast of the mask: none, or row (one mask row for every row)"> {
  let Accepts = ["none", "row"];
}
defvar MaskExtent = ProductBy<"mbcast", [Product<["rows", "cols"], 1>, Product<["cols"], 1>,
                                         Product<["cols"], 1>, Product<["cols"], 1>]>;

// The mask stream: IB0, per row or the same row for every row.
class MaskStream<int mbcast> : Stream<"IB0", "mask", !eq(mbcast, 0), 0, "b8">;

// The tensor form's recipe for one (bcast, mbcast), every type of
// SelectTypes (the select moves one word per lane whatever it holds): a in
// IB1, b in IB2 or, broadcast per row or once, one element of dtype in K1.
class SelectRecipe<int bcast, int mbcast>
    : VectorRecipe<[When<"bcast", bcast>, When<"mbcast", mbcast>], "rows", "cols",
                   [MaskStream<mbcast>, Stream<"IB1", "a", 1, 0, "dtype">,
                    Stream<"OB0", "dst", 1, 0, "dtype">] #
                   !if(!lt(bcast, 2), [Stream<"IB2", "b", !eq(bcast, 0), 0, "dtype">], []),
                   [Pass<["IB0", "IB1"] # !if(!lt(bcast, 2), ["IB2"], []), ["OB0"],
                         IntSelect<"i32", "IB1", "", !if(!lt(bcast, 2), "IB2", "K1"), "",
                                   "IB0">.Steps>]> {
  let PreLoads = !if(!eq(bcast, 3), [PreLoad<"b", 1, "K1", "dtype">], []);
  let RowLoads = !if(!eq(bcast, 2), [RowLoad<"b", "K1", 1, "dtype">], []);
}

// The scalar form's recipe: a in IB1 (IB2), s in K0 as the type's lane form
// (binary32 for the float types, rounded on store; an int32, its sign fill
// in K1 for i64; the mask s != 0 for b8).
class SelectScalarRecipe<string type, int mbcast>
    : VectorRecipe<[When<"mbcast", mbcast>, When<"dtype", DTypeValue<type>.Value>], "rows",
                   "cols",
                   [MaskStream<mbcast>, Stream<"IB1", "a", 1, 0, "dtype">,
                    Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0", "IB1"], ["OB0"],
                         IntSelect<type, "IB1", "IB2", "K0", "K1", "IB0">.Steps>],
                   !cond(!eq(type, "i64") : [Run<"sign_fill", "K0", "", "K1">],
                         !eq(type, "b8") : [Run<"nonzero", "K0", "", "K0">],
                         true : []<Step>)> {
  let Scalars = ["s"];
}

def SELECT : Instruction<"select", 0xa8, "select",
    [AddrOp<"dst", S_Dst, "rows x cols result">,
     AddrOp<"a", S_Src0, "rows x cols values taken where the mask is true">,
     AddrOp<"b", S_Src1, "values taken where the mask is false, shaped by bcast">,
     DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
     AddrOp<"mask", S_P23, "b8 mask, shaped by mbcast">,
     EnumOp<"bcast", Broadcast, FlagBits<4, 2>, "broadcast of b">, MaskBcastOp<>,
     DTypeOf<SelectTypes>],
    "$dst, $mask, $a, $b, $rows, $cols", Cost<E_Vector, 4, 1>,
    "Elementwise select (torch.where): dst = mask ? a : b."> {
  let Semantics = "dst[i][j] = a[i][j] where m is true (a nonzero byte), else b, with m = "
                  "mask[i][j] or mask[j] for mbcast none, row and b = b[i][j], b[j], b[i] or "
                  "b[0] for bcast none, row, col, scalar. a's and b's elements move as the "
                  "lanes hold them: their bits for f32 and i32, 0 or 1 for b8, and bf16 and "
                  "f16 widened and narrowed again (exact but for a NaN, which becomes the "
                  "type's canonical NaN, docs/types.md §2).";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"b", "r", ProductBy<"bcast", [Product<["rows", "cols"], 1, "dtype">,
                                                         Product<["cols"], 1, "dtype">,
                                                         Product<["rows"], 1, "dtype">,
                                                         Product<[], 1, "dtype">]>>,
                MemOperand<"mask", "r", MaskExtent>];
  let Disjoints = [Disjoint<"dst", "a", 1>, Disjoint<"dst", "b", 1, "bcast", 0>,
                   Disjoint<"dst", "mask", 0>];
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3], acc, bcast,
                       acc # !foreach(mbcast, [0, 1], SelectRecipe<bcast, mbcast>));
}

def SELECTS : Instruction<"selects", 0xa9, "select",
    [AddrOp<"dst", S_Dst, "rows x cols result">,
     AddrOp<"a", S_Src0, "rows x cols values taken where the mask is true">,
     AddrOp<"mask", S_Src1, "b8 mask, shaped by mbcast">,
     DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
     Operand<"s", K_Bits32, S_P2, "the value where the mask is false: binary32 for f32, bf16 "
                                  "and f16 (rounded on store), int32 for i32 and i64 "
                                  "(sign-extended), nonzero true for b8">,
     MaskBcastOp<>, DTypeOf<SelectScalarTypes>],
    "$dst, $mask, $a, $s, $rows, $cols", Cost<E_Vector, 4, 1>,
    "Select with a scalar (masked_fill of the false elements): dst = mask ? a : s."> {
  let Semantics = "dst[i][j] = a[i][j] where m is true (a nonzero byte), else s, with m = "
                  "mask[i][j] or mask[j] for mbcast none, row. a's elements move as the lanes "
                  "hold them: their bits for f32, i32 and i64, 0 or 1 for b8, and bf16 and f16 "
                  "widened and narrowed again (exact but for a NaN, which becomes the type's "
                  "canonical NaN, docs/types.md §2). s is stored as the type stores a lane "
                  "value: rounded to bf16 or f16, sign-extended to i64, nonzero true for b8.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"mask", "r", MaskExtent>];
  let Disjoints = [Disjoint<"dst", "a", 1>, Disjoint<"dst", "mask", 0>];
  let Recipes = !foldl([]<VectorRecipe>, [0, 1], acc, mbcast,
                       acc # !foreach(type, SelectScalarTypes, SelectScalarRecipe<type, mbcast>));
}

//===----------------------------------------------------------------------===//
// and, or, xor, not, shl, shr
//===----------------------------------------------------------------------===//

// b8 masks too: the lanes hold them as 0 or all ones, so and, or, xor and
// not of the words are the logical operations.
defvar BitwiseTypes = ["i32", "i64", "b8"];
defvar ShiftTypes = ["i32", "i64"];

// rows x cols elementwise `a op b` of integers or masks with b broadcast
// per Broadcast (the recipes of elementwise.td's integer binary ops).
class BitwiseOp<string mnemonic, int opcode, string expr, list<string> types>
    : Instruction<mnemonic, opcode, "bitwise",
        [AddrOp<"dst", S_Dst, "rows x cols result">, AddrOp<"a", S_Src0, "rows x cols operand">,
         AddrOp<"b", S_Src1, "second operand, shaped by bcast">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
         EnumOp<"bcast", Broadcast, FlagBits<4, 2>, "broadcast of b">, DTypeOf<types, DTypeValue<!head(types)>.Value>],
        "$dst, $a, $b, $rows, $cols", Cost<E_Vector, 4, 1>, "Elementwise dst = " # expr # "."> {
  let Semantics = "dst[i][j] = " # expr # " with b = b[i][j], b[j], b[i] or b[0] for "
                  "bcast none, row, col, scalar" #
                  !if(!empty(!filter(t, types, !eq(t, "b8"))), "",
                      "; on b8 of the truth values (a nonzero byte is true), stored 0 or 1") #
                  ".";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"b", "r", ProductBy<"bcast", [Product<["rows", "cols"], 1, "dtype">,
                                                         Product<["cols"], 1, "dtype">,
                                                         Product<["rows"], 1, "dtype">,
                                                         Product<[], 1, "dtype">]>>];
  let Disjoints = [Disjoint<"dst", "a", 1>, Disjoint<"dst", "b", 1, "bcast", 0>];
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3], acc, bcast,
                       acc # !foreach(type, types, IntBinaryRecipe<mnemonic, type, bcast, 0, 0>));
}

// n elements `a op s` (`s op a` when reversed), s's 32 bits an int32
// (sign-extended for i64), nonzero true for b8.
class BitwiseScalarOp<string mnemonic, int opcode, string op, bit reversed, string expr,
                      list<string> types>
    : Instruction<mnemonic, opcode, "bitwise",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"a", S_Src0, "operand">,
         Operand<"s", K_Bits32, S_P1, "scalar: an int32 (sign-extended for i64), nonzero true "
                                      "for b8">,
         DimOp<"n", S_P0, "number of elements">, DTypeOf<types, DTypeValue<!head(types)>.Value>],
        "$dst, $a, $s, $n", Cost<E_Vector, 4, 1>, "Elementwise with a scalar: dst = " # expr # "."> {
  let Semantics = "dst[i] = " # expr # " for i < n, with a = a[i]; s's 32 bits are an int32, "
                  "sign-extended for i64" # !if(!empty(!filter(t, types, !eq(t, "b8"))), "",
                                                 ", and true where not 0 for b8") # ".";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "a", 1>];
  let Recipes = !foreach(type, types, IntScalarRecipe<op, type, reversed>);
}

// not: every bit inverted (the mask inverted for b8).
class BitwiseNotRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"],
                         [Run<"mask_not", "IB0", "", "OB0">] #
                         !if(!eq(type, "i64"), [Run<"mask_not", "IB1", "", "OB1">], [])>]>;

class BitwiseNotOp<string mnemonic, int opcode, list<string> types>
    : Instruction<mnemonic, opcode, "bitwise",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
         DimOp<"n", S_P0, "number of elements">, DTypeOf<types, DTypeValue<!head(types)>.Value>],
        "$dst, $src, $n", Cost<E_Vector, 4, 1>, "Elementwise dst = ~src (logical not on b8)."> {
  let Semantics = "dst[i] = ~src[i] for i < n: every bit inverted on i32 and i64, 1 where "
                  "src[i] is 0 and 0 elsewhere on b8.";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = !foreach(type, types, BitwiseNotRecipe<type>);
}

defvar ShiftDoc = " (an amount outside [0, width) gives ";
def AND : BitwiseOp<"and", 0xb0, "a & b", BitwiseTypes>;
def OR : BitwiseOp<"or", 0xb1, "a | b", BitwiseTypes>;
def XOR : BitwiseOp<"xor", 0xb2, "a ^ b", BitwiseTypes>;
def SHL : BitwiseOp<"shl", 0xb3, !strconcat("a << b", ShiftDoc, "0)"), ShiftTypes>;
def SHR : BitwiseOp<"shr", 0xb4, !strconcat("a >> b, arithmetic", ShiftDoc, "the sign fill, 0 or -1)"),
                    ShiftTypes>;
def NOT : BitwiseNotOp<"not", 0xb5, BitwiseTypes>;
def ANDS : BitwiseScalarOp<"ands", 0xb8, "and", 0, "a & s", BitwiseTypes>;
def ORS : BitwiseScalarOp<"ors", 0xb9, "or", 0, "a | s", BitwiseTypes>;
def XORS : BitwiseScalarOp<"xors", 0xba, "xor", 0, "a ^ s", BitwiseTypes>;
def SHLS : BitwiseScalarOp<"shls", 0xbb, "shl", 0, !strconcat("a << s", ShiftDoc, "0)"), ShiftTypes>;
def SHRS : BitwiseScalarOp<"shrs", 0xbc, "shr", 0,
                           !strconcat("a >> s, arithmetic", ShiftDoc, "the sign fill, 0 or -1)"),
                           ShiftTypes>;
def RSHLS : BitwiseScalarOp<"rshls", 0xbd, "shl", 1, !strconcat("s << a", ShiftDoc, "0)"), ShiftTypes>;
def RSHRS : BitwiseScalarOp<"rshrs", 0xbe, "shr", 1,
                            !strconcat("s >> a, arithmetic", ShiftDoc, "the sign fill, 0 or -1)"),
                            ShiftTypes>;
