//===- elementwise.td - Binary elementwise operations ----------------------===//
//
// ADD SUB MUL MAX MIN and their scalar forms accept i32 and i64 as well as
// f32 (docs/types.md §3, §5). Their integer recipes are built from the
// 32-bit primitives of types.md §4: an i32 lane computes one word, an i64
// element is a register pair (the low words in a stream's slot, the high
// words in the next one), carried across the words explicitly as a 32-bit
// DSP does. The ISS runs these recipes too (simulator/lib/recipe_runner.h),
// so both machines compute the integer forms with the same programs.

// The integer programs the recipes run: one primitive each, on integer
// patterns (RawInputs: canonicalising would corrupt them).
let RawInputs = 1 in {
def MP_iadd : MicroProgram<"iadd", ["a", "b"], [(iadd:$y $a, $b)], "y", "a + b, wrapping.">;
def MP_isub : MicroProgram<"isub", ["a", "b"], [(isub:$y $a, $b)], "y", "a - b, wrapping.">;
def MP_imul : MicroProgram<"imul", ["a", "b"], [(imul:$y $a, $b)], "y",
                           "Low word of the product a * b.">;
def MP_imulhu : MicroProgram<"imulhu", ["a", "b"], [(imulhu:$y $a, $b)], "y",
                             "High word of the unsigned 64-bit product a * b.">;
def MP_ieq : MicroProgram<"ieq", ["a", "b"], [(ieq:$m $a, $b)], "m", "The mask a == b.">;
def MP_ilt : MicroProgram<"ilt", ["a", "b"], [(ilt:$m $a, $b)], "m", "The mask a < b, signed.">;
def MP_iltu : MicroProgram<"iltu", ["a", "b"], [(iltu:$m $a, $b)], "m",
                           "The mask a < b, unsigned.">;
def MP_iand : MicroProgram<"iand", ["a", "b"], [(iand:$y $a, $b)], "y", "a & b, bitwise.">;
def MP_ixor : MicroProgram<"ixor", ["a", "b"], [(ixor:$y $a, $b)], "y", "a ^ b, bitwise.">;
}

// The mask x < y (signed) of integer lanes of type `type` into T0; i64:
// the high words' signed compare, or equal high words and the low words'
// unsigned compare (T1, T2 temporaries).
class IntLess<string type, string xlo, string xhi, string ylo, string yhi> {
  list<Step> Steps = !if(!eq(type, "i32"), [Run<"ilt", xlo, ylo, "T0">],
                         [Run<"ilt", xhi, yhi, "T0">, Run<"ieq", xhi, yhi, "T1">,
                          Run<"iltu", xlo, ylo, "T2">, Run<"iand", "T1", "T2", "T1">,
                          Run<"bit_or", "T0", "T1", "T0">]);
}

// dst = m ? x : y for the mask m (in T0 unless named), one word at a time:
// y ^ ((x ^ y) & m), into OB0 (and OB1), T1 a temporary.
class IntSelect<string type, string xlo, string xhi, string ylo, string yhi, string m = "T0"> {
  list<Step> Steps = [Run<"ixor", xlo, ylo, "T1">, Run<"iand", "T1", m, "T1">,
                      Run<"ixor", ylo, "T1", "OB0">] #
                     !if(!eq(type, "i64"),
                         [Run<"ixor", xhi, yhi, "T1">, Run<"iand", "T1", m, "T1">,
                          Run<"ixor", yhi, "T1", "OB1">], []);
}

// x << y (op "shl") or x >> y arithmetic ("shr") on integer lanes of type
// `type`, into OB0 (and OB1), with docs/types.md §3's out-of-range amounts
// (0 for <<, the sign fill for >>), which the variable-shift primitives give
// for a word's amount outside [0, 31]. An i64 amount outside [0, 2^32) is
// replaced by 2^32 - 1 first (T3: the low word, or all ones when the high
// word is not 0), then each result word combines two shifts of the halves:
// the bits that cross between the words move by 32 - n (programs
// shift_rest, shift_past: 32 - n and n - 32, out of range, hence 0 or the
// sign fill, on the wrong side of 32). T0-T3 temporaries.
class IntShift<string op, string type, string xlo, string xhi, string ylo, string yhi> {
  list<Step> Amount = [Run<"ieq", yhi, "ZERO", "T3">, Run<"mask_not", "T3", "", "T3">,
                       Run<"bit_or", ylo, "T3", "T3">];
  list<Step> Steps = !cond(
    !eq(type # op, "i32shl") : [Run<"ishlv", xlo, ylo, "OB0">],
    !eq(type # op, "i32shr") : [Run<"israv", xlo, ylo, "OB0">],
    // hi = hi << n | lo >> (32 - n) | lo << (n - 32): at most one of the
    // last two is not 0 (both are lo at n = 32).
    !eq(type # op, "i64shl") : Amount #
                               [Run<"ishlv", xlo, "T3", "OB0">, Run<"ishlv", xhi, "T3", "T0">,
                                Run<"shift_rest", "T3", "", "T1">, Run<"ishrv", xlo, "T1", "T1">,
                                Run<"bit_or", "T0", "T1", "T0">, Run<"shift_past", "T3", "", "T1">,
                                Run<"ishlv", xlo, "T1", "T1">, Run<"bit_or", "T0", "T1", "OB1">],
    // lo = n < 32 ? lo >> n | hi << (32 - n) : hi >> (n - 32) arithmetic
    // (the sign fill from n = 64 on); hi = hi >> n arithmetic.
    !eq(type # op, "i64shr") : Amount #
                               [Run<"ishrv", xlo, "T3", "T0">, Run<"shift_rest", "T3", "", "T1">,
                                Run<"ishlv", xhi, "T1", "T1">, Run<"bit_or", "T0", "T1", "T0">,
                                Run<"shift_past", "T3", "", "T1">, Run<"israv", xhi, "T1", "T1">,
                                Run<"below32", "T3", "", "T2">] #
                               // T1 ^ ((T0 ^ T1) & T2): T0 where n < 32, else T1.
                               [Run<"ixor", "T0", "T1", "T0">, Run<"iand", "T0", "T2", "T0">,
                                Run<"ixor", "T1", "T0", "OB0">, Run<"israv", xhi, "T3", "OB1">],
    // Not a shift: IntSteps instantiates this class for every op.
    true : []<Step>);
}

// The steps of `x op y` on integer lanes of type `type` ("i32" or "i64"),
// x and y given as the sources of their low and high words (the high ones
// unused for i32), into OB0 (and OB1). They use T2 and, for mul, max and
// min, T0 and T1 too: a scaled operand (IntScale) in T0, T1 is read by add
// and sub only.
class IntSteps<string op, string type, string xlo, string xhi, string ylo, string yhi> {
  list<Step> Steps = !cond(
    !eq(type # op, "i32add") : [Run<"iadd", xlo, ylo, "OB0">],
    !eq(type # op, "i32sub") : [Run<"isub", xlo, ylo, "OB0">],
    !eq(type # op, "i32mul") : [Run<"imul", xlo, ylo, "OB0">],
    // The carry out of the low words is the mask sum < x (unsigned): -1,
    // so subtracting it adds 1.
    !eq(type # op, "i64add") : [Run<"iadd", xlo, ylo, "OB0">, Run<"iltu", "OB0", xlo, "T2">,
                                Run<"iadd", xhi, yhi, "OB1">, Run<"isub", "OB1", "T2", "OB1">],
    // The borrow is the mask x < y of the low words (unsigned).
    !eq(type # op, "i64sub") : [Run<"isub", xlo, ylo, "OB0">, Run<"iltu", xlo, ylo, "T2">,
                                Run<"isub", xhi, yhi, "OB1">, Run<"iadd", "OB1", "T2", "OB1">],
    // Mod 2^64: the low words' full product plus the cross products' low
    // words in the high word.
    !eq(type # op, "i64mul") : [Run<"imul", xlo, ylo, "OB0">, Run<"imulhu", xlo, ylo, "T0">,
                                Run<"imul", xlo, yhi, "T1">, Run<"iadd", "T0", "T1", "T0">,
                                Run<"imul", xhi, ylo, "T1">, Run<"iadd", "T0", "T1", "OB1">],
    // max: x where y < x; min: x where x < y.
    !eq(op, "max") : IntLess<type, ylo, yhi, xlo, xhi>.Steps #
                     IntSelect<type, xlo, xhi, ylo, yhi>.Steps,
    !eq(op, "min") : IntLess<type, xlo, xhi, ylo, yhi>.Steps #
                     IntSelect<type, xlo, xhi, ylo, yhi>.Steps,
    // Bitwise, word by word (isa/bits.td); a b8 mask is one word.
    !eq(op, "and") : [Run<"iand", xlo, ylo, "OB0">] #
                     !if(!eq(type, "i64"), [Run<"iand", xhi, yhi, "OB1">], []<Step>),
    !eq(op, "or") : [Run<"bit_or", xlo, ylo, "OB0">] #
                    !if(!eq(type, "i64"), [Run<"bit_or", xhi, yhi, "OB1">], []<Step>),
    !eq(op, "xor") : [Run<"ixor", xlo, ylo, "OB0">] #
                     !if(!eq(type, "i64"), [Run<"ixor", xhi, yhi, "OB1">], []<Step>),
    !or(!eq(op, "shl"), !eq(op, "shr")) : IntShift<op, type, xlo, xhi, ylo, yhi>.Steps);
}

// alpha * b on integer lanes (an integer alpha, docs/types.md §3): alpha
// (K0) truncated to an int32 in K3 (its sign fill in K4 for i64) by the Pre
// steps, the product's words into T0 (and T1), b's words in blo, bhi.
class IntScale<string type, string blo, string bhi> {
  list<Step> Pre = [Run<"f2iz", "K0", "", "K3">] #
                   !if(!eq(type, "i64"), [Run<"sign_fill", "K3", "", "K4">], []);
  list<Step> Steps = !if(!eq(type, "i32"), [Run<"imul", "K3", blo, "T0">],
                         [Run<"imul", "K3", blo, "T0">, Run<"imulhu", "K3", blo, "T1">,
                          Run<"imul", "K3", bhi, "T2">, Run<"iadd", "T1", "T2", "T1">,
                          Run<"imul", "K4", blo, "T2">, Run<"iadd", "T1", "T2", "T1">]);
}

// The recipe of a binary instruction on integer type `type` for one value
// of bcast: a in IB0 (IB1), b in IB2 (IB3) or, broadcast per row or once,
// in K1 (K2); alphaScales: b multiplied by the integer alpha first.
class IntBinaryRecipe<string op, string type, int bcast, bit hasAlpha, bit alphaScales>
    : VectorRecipe<[When<"bcast", bcast>, When<"dtype", DTypeValue<type>.Value>] #
                   !if(hasAlpha, [When<"alpha", F32One, !not(alphaScales)>], []),
                   "rows", "cols",
                   [Stream<"IB0", "a", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">] #
                   !if(!lt(bcast, 2), [Stream<"IB2", "b", !eq(bcast, 0), 0, "dtype">], []),
                   [Pass<!if(!lt(bcast, 2), ["IB0", "IB2"], ["IB0"]), ["OB0"],
                         !if(alphaScales,
                             IntScale<type, !if(!lt(bcast, 2), "IB2", "K1"),
                                      !if(!lt(bcast, 2), "IB3", "K2")>.Steps #
                             IntSteps<op, type, "IB0", "IB1", "T0", "T1">.Steps,
                             IntSteps<op, type, "IB0", "IB1", !if(!lt(bcast, 2), "IB2", "K1"),
                                      !if(!lt(bcast, 2), "IB3", "K2")>.Steps)>],
                   !if(alphaScales,
                       IntScale<type, "", "">.Pre, []<Step>)> {
  let Scalars = !if(hasAlpha, ["alpha"], []);
  // b[0] once (scalar), or b[i] per row (col): one element of dtype (an
  // i64 in K1, K2; a b8 widened to its mask).
  let PreLoads = !if(!eq(bcast, 3), [PreLoad<"b", 1, "K1", "dtype">], []);
  let RowLoads = !if(!eq(bcast, 2), [RowLoad<"b", "K1", 1, "dtype">], []);
}

// The recipe of a binary instruction on its float types (f32, and bf16 and
// f16 through the typed streams and loads: binary32 lanes, one rounding on
// store) for one value of bcast, with alpha * b rounded first (alphaScales)
// or b itself; hasAlpha: the instruction has the operand alpha (its variants
// then depend on alpha == 1.0); intTypes: the integer types it accepts too
// (its variants then depend on dtype not being one of them).
class BinaryRecipe<string program, int bcast, bit hasAlpha, bit alphaScales,
                   list<string> intTypes = []>
    : VectorRecipe<[When<"bcast", bcast>] #
                   !foreach(t, intTypes, When<"dtype", DTypeValue<t>.Value, 0>) #
                   !if(hasAlpha, [When<"alpha", F32One, !not(alphaScales)>], []),
                   "rows", "cols",
                   [Stream<"IB0", "a", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">] #
                   !if(!lt(bcast, 2), [Stream<"IB1", "b", !eq(bcast, 0), 0, "dtype">], []),
                   [Pass<!if(!lt(bcast, 2), ["IB0", "IB1"], ["IB0"]), ["OB0"],
                         !if(alphaScales,
                             [Run<"mul", "K0", !if(!lt(bcast, 2), "IB1", "K1"), "T0">,
                              Run<program, "IB0", "T0", "OB0">],
                             [Run<program, "IB0", !if(!lt(bcast, 2), "IB1", "K1"), "OB0">])>]> {
  let Scalars = !if(hasAlpha, ["alpha"], []);
  // b[0] once (scalar), or b[i] per row (col): one element of dtype.
  let PreLoads = !if(!eq(bcast, 3), [PreLoad<"b", 1, "K1", "dtype">], []);
  let RowLoads = !if(!eq(bcast, 2), [RowLoad<"b", "K1", 1, "dtype">], []);
}

// rows x cols elementwise with the second operand broadcast per Broadcast.
// types: the DType values it accepts; the integer ones ("i32", "i64") run
// IntBinaryRecipe.
class BinaryOp<string mnemonic, int opcode, string expr, list<Operand> extra = [],
               list<string> types = ["f32"]>
    : Instruction<mnemonic, opcode, "elementwise",
        [AddrOp<"dst", S_Dst, "rows x cols result">, AddrOp<"a", S_Src0, "rows x cols operand">,
         AddrOp<"b", S_Src1, "second operand, shaped by bcast">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
         EnumOp<"bcast", Broadcast, FlagBits<4, 2>, "broadcast of b">, DTypeOf<types>] # extra,
        "$dst, $a, $b, $rows, $cols", Cost<E_Vector, 4, 1>,
        "Elementwise dst = " # expr # "."> {
  let Semantics = "dst[i][j] = " # expr # " with b = b[i][j], b[j], b[i] or b[0] for "
                  "bcast none, row, col, scalar" #
                  !if(!empty(!filter(t, types, !eq(t, "bf16"))), "",
                      "; bf16 and f16 compute in binary32 lanes (elements widened exactly) "
                      "and round once on store") # ".";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"b", "r", ProductBy<"bcast", [Product<["rows", "cols"], 1, "dtype">,
                                                         Product<["cols"], 1, "dtype">,
                                                         Product<["rows"], 1, "dtype">,
                                                         Product<[], 1, "dtype">]>>];
  let Disjoints = [Disjoint<"dst", "a", 1>, Disjoint<"dst", "b", 1, "bcast", 0>];
  // Its scalar forms (ScalarOp definitions): `a op s`, and `s op a`, the
  // same one when the operation commutes.
  string ScalarForm = "";
  string ReverseScalarForm = "";
  // The program is the one named like the instruction (microcode.td).
  bit HasAlpha = !not(!empty(!filter(o, extra, !eq(o.Name, "alpha"))));
  list<string> Types = types;
  list<string> IntTypes = !filter(t, types, !or(!eq(t, "i32"), !eq(t, "i64")));
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3], acc, bcast,
                       acc # [BinaryRecipe<mnemonic, bcast, HasAlpha, 0, IntTypes>] #
                       !if(HasAlpha, [BinaryRecipe<mnemonic, bcast, HasAlpha, 1, IntTypes>],
                           []<VectorRecipe>) #
                       !foldl([]<VectorRecipe>, IntTypes, intAcc, type,
                              intAcc # [IntBinaryRecipe<mnemonic, type, bcast, HasAlpha, 0>] #
                              !if(HasAlpha, [IntBinaryRecipe<mnemonic, type, bcast, HasAlpha, 1>],
                                  []<VectorRecipe>)));
}

// The recipe of a scalar form on integer type `type`: s (K0) an int32, its
// sign fill in K1 for i64 (docs/types.md §3), on b8 the mask s != 0; s the
// first operand when reversed.
class IntScalarRecipe<string op, string type, bit reversed>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"IB0", "a", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"],
                         !if(reversed, IntSteps<op, type, "K0", "K1", "IB0", "IB1">.Steps,
                             IntSteps<op, type, "IB0", "IB1", "K0", "K1">.Steps)>],
                   !cond(!eq(type, "i64") : [Run<"sign_fill", "K0", "", "K1">],
                         !eq(type, "b8") : [Run<"nonzero", "K0", "", "K0">],
                         true : []<Step>)> {
  let Scalars = ["s"];
}

// n elements combined with an immediate scalar s by `program`, s being its
// first input when reversed. On an integer type (types), s's 32 bits are an
// int32, sign-extended for i64.
class ScalarOp<string mnemonic, int opcode, string expr, string program, bit reversed = 0,
               list<string> types = ["f32"]>
    : Instruction<mnemonic, opcode, "elementwise",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"a", S_Src0, "operand">,
         F32Op<"s", S_P1, "scalar (an int32 for integer types)">,
         DimOp<"n", S_P0, "number of elements">, DTypeOf<types>],
        "$dst, $a, $s, $n", Cost<E_Vector, 4, 1>, "Elementwise with a scalar: dst = " # expr # "."> {
  let Semantics = "dst[i] = " # expr # " for i < n, with a = a[i]" #
                  !if(!empty(!filter(t, types, !eq(t, "bf16"))), "",
                      "; bf16 and f16 compute in binary32 lanes (elements widened exactly, s "
                      "as binary32) and round once on store") #
                  !if(!empty(!filter(t, types, !eq(t, "i32"))), "",
                      "; on i32 and i64, s's 32 bits are an int32 (sign-extended for i64) and "
                      "the result wraps around") # ".";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"a", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "a", 1>];
  // One f32 recipe per float type: the typed streams widen and round.
  let Recipes = !foreach(type, !filter(t, types, !not(!or(!eq(t, "i32"), !eq(t, "i64")))),
                          ElementwiseRecipe<program, !if(reversed, "K0", "IB0"),
                                            !if(reversed, "IB0", "K0"),
                                            [Stream<"IB0", "a", 1, 0, "dtype">,
                                             Stream<"OB0", "dst", 1, 0, "dtype">], "s",
                                            !if(!gt(!size(types), 1),
                                                [When<"dtype", DTypeValue<type>.Value>], [])>) #
                 !foldl([]<VectorRecipe>, !filter(t, types, !or(!eq(t, "i32"), !eq(t, "i64"))),
                        acc, type, acc # [IntScalarRecipe<program, type, reversed>]);
}

// The types of a binary operation's tensor and scalar forms: the given
// ones, and bf16 and f16 where f32 is among them (docs/types.md §2: binary32
// lanes, one rounding on store; the col and scalar broadcasts load b's
// element typed).
class WithHalfFloats<list<string> types> {
  list<string> Types = !if(!empty(!filter(t, types, !eq(t, "f32"))), types,
                           FloatTypes # !filter(t, types, !ne(t, "f32")));
}

// The tensor and the scalar form of one operation; `reverse` names the
// `s op a` form of an operation that does not commute.
multiclass Binary<string mnemonic, int opcode, int scalarOpcode, string expr,
                  string scalarExpr, list<Operand> extra = [], string reverse = "",
                  list<string> types = ["f32"]> {
  def "" : BinaryOp<mnemonic, opcode, expr, extra, WithHalfFloats<types>.Types> {
    let ScalarForm = NAME # "S";
    let ReverseScalarForm = !if(!empty(reverse), NAME # "S", reverse);
  }
  def S : ScalarOp<mnemonic # "s", scalarOpcode, scalarExpr, mnemonic, 0,
                   WithHalfFloats<types>.Types>;
}

defvar Alpha = OptF32Op<"alpha", S_P2, "multiplier of b (an integer for i32, i64)", F32One>;

// The types of the arithmetic that integers share (docs/types.md §5).
defvar ArithTypes = ["f32", "i32", "i64"];

defm ADD : Binary<"add", 0x30, 0x38,
                  "a + alpha*b (alpha*b rounded first; exact when alpha = 1; on i32 and i64 "
                  "alpha truncated to an int32 and the result wrapping)",
                  "a + s", [Alpha], "", ArithTypes>;
defm SUB : Binary<"sub", 0x31, 0x39,
                  "a - alpha*b (alpha*b rounded first; exact when alpha = 1; on i32 and i64 "
                  "alpha truncated to an int32 and the result wrapping)",
                  "a - s", [Alpha], "RSUBS", ArithTypes>;
defm MUL : Binary<"mul", 0x32, 0x3a, "a * b (wrapping on i32 and i64)", "a * s", [], "",
                  ArithTypes>;
defm DIV : Binary<"div", 0x33, 0x3b, "a / b (correctly rounded)", "a / s (correctly rounded)", [],
                  "RDIVS">;
defm MAX : Binary<"max", 0x34, 0x3c, "max(a, b) (NaN if either is NaN; signed on i32 and i64)",
                  "max(a, s)", [], "", ArithTypes>;
defm MIN : Binary<"min", 0x35, 0x3d, "min(a, b) (NaN if either is NaN; signed on i32 and i64)",
                  "min(a, s)", [], "", ArithTypes>;
// The tensor form of POWS (torch.pow(Tensor, Tensor)): the program's two
// inputs from a and b; bf16 and f16 by the f32 recipe on dtype-typed
// streams, as ADD..MIN (no scalar form of its own: POWS is the unary one).
def POW : BinaryOp<"pow", 0x37,
                   "pow(a, b) by the micro-program pow of docs/arith.md (C99 F.9.4.4's special "
                   "cases: a^(+-0) = 1 and 1^b = 1 even for NaN; a negative finite a with a "
                   "finite non-integral b gives NaN)", [], FloatTypes>;
def RSUBS : ScalarOp<"rsubs", 0x3e, "s - a", "sub", 1, WithHalfFloats<ArithTypes>.Types>;
def RDIVS : ScalarOp<"rdivs", 0x3f, "s / a (correctly rounded)", "div", 1, FloatTypes>;
