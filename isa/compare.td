//===- compare.td - Compares into masks -------------------------------------===//
//
// EQ NE LT LE GT GE (docs/types.md §5): a and b of dtype (f32, bf16, f16,
// i32, i64; EQ and NE b8 too, equality of truth values), the result a b8 mask (the output stream's type is fixed b8 in the record:
// no `otype` operand). Float compares are IEEE's, which PyTorch's CPU
// kernels compute: NaN is unordered (ne true, the others false), -0 == +0,
// and subnormals compare by value. The lanes' float primitives read a
// subnormal as zero (docs/arith.md §1), so the float recipes compare the
// patterns as integers instead: a binary32 whose sign-magnitude bits are
// (s, m) orders like the int32 key s ? -m : m (both zeros key 0), and a
// NaN is a magnitude above 0x7f800000.
//
//===----------------------------------------------------------------------===//

// The programs the compare recipes add to the integer ones of
// elementwise.td: one primitive each, on patterns.
let RawInputs = 1 in {
def MP_magnitude : MicroProgram<"magnitude", ["x"], [(iand:$y $x, 0x7fffffff)], "y",
                                "The binary32 pattern x without its sign bit.">;
def MP_nan_magnitude : MicroProgram<"nan_magnitude", ["m"], [(iltu:$y 0x7f800000, $m)], "y",
                                    "The mask: the magnitude bits m are a NaN's.">;
def MP_mask_not : MicroProgram<"mask_not", ["m"], [(ixor:$y $m, 0xffffffff)], "y",
                               "The mask m inverted.">;
}

// The order keys of the binary32 patterns x and y: key(x) into T2, key(y)
// into OB0, the mask "x or y is a NaN" into T1 (T0, T3 temporaries).
class FloatKeys<string x, string y> {
  list<Step> Steps = [Run<"sign_fill", x, "", "T0">, Run<"magnitude", x, "", "T1">,
                      Run<"ixor", "T1", "T0", "T2">, Run<"isub", "T2", "T0", "T2">,
                      Run<"nan_magnitude", "T1", "", "T1">,
                      Run<"sign_fill", y, "", "T0">, Run<"magnitude", y, "", "T3">,
                      Run<"ixor", "T3", "T0", "OB0">, Run<"isub", "OB0", "T0", "OB0">,
                      Run<"nan_magnitude", "T3", "", "T3">, Run<"bit_or", "T1", "T3", "T1">];
}

// The steps of the compare `op` ("eq", "ne", "lt", "le") of x and y on lane
// form `form` (F: binary32 patterns, I: int32, L: int64 pairs, M: masks,
// eq and ne only), the mask into OB0. gt and ge are lt and le with the
// operands swapped. A b8 lane holds its truth value as 0 or all ones, so
// the words' equality is the truth values'.
class CompareSteps<string op, string form, string xlo, string xhi, string ylo, string yhi> {
  list<Step> Steps = !cond(
    // Ordered: the keys' compare where neither is a NaN.
    !eq(form # op, "Flt") : FloatKeys<xlo, ylo>.Steps #
                            [Run<"ilt", "T2", "OB0", "T0">, Run<"iand", "T0", "T1", "T3">,
                             Run<"ixor", "T0", "T3", "OB0">],
    !eq(form # op, "Fle") : FloatKeys<xlo, ylo>.Steps #
                            [Run<"ilt", "OB0", "T2", "T0">, Run<"bit_or", "T0", "T1", "T0">,
                             Run<"mask_not", "T0", "", "OB0">],
    !eq(form # op, "Feq") : FloatKeys<xlo, ylo>.Steps #
                            [Run<"ieq", "T2", "OB0", "T0">, Run<"iand", "T0", "T1", "T3">,
                             Run<"ixor", "T0", "T3", "OB0">],
    // Unordered or different.
    !eq(form # op, "Fne") : FloatKeys<xlo, ylo>.Steps #
                            [Run<"ieq", "T2", "OB0", "T0">, Run<"mask_not", "T0", "", "T0">,
                             Run<"bit_or", "T0", "T1", "OB0">],
    !eq(form # op, "Ilt") : [Run<"ilt", xlo, ylo, "OB0">],
    !eq(form # op, "Ile") : [Run<"ilt", ylo, xlo, "T0">, Run<"mask_not", "T0", "", "OB0">],
    !or(!eq(form # op, "Ieq"), !eq(form # op, "Meq")) : [Run<"ieq", xlo, ylo, "OB0">],
    !or(!eq(form # op, "Ine"), !eq(form # op, "Mne")) : [Run<"ieq", xlo, ylo, "T0">,
                                                          Run<"mask_not", "T0", "", "OB0">],
    !eq(form # op, "Llt") : IntLess<"i64", xlo, xhi, ylo, yhi>.Steps #
                            [Run<"copy_bits", "T0", "", "OB0">],
    !eq(form # op, "Lle") : IntLess<"i64", ylo, yhi, xlo, xhi>.Steps #
                            [Run<"mask_not", "T0", "", "OB0">],
    !eq(form # op, "Leq") : [Run<"ieq", xlo, ylo, "T0">, Run<"ieq", xhi, yhi, "T1">,
                             Run<"iand", "T0", "T1", "OB0">],
    !eq(form # op, "Lne") : [Run<"ieq", xlo, ylo, "T0">, Run<"ieq", xhi, yhi, "T1">,
                             Run<"iand", "T0", "T1", "T0">, Run<"mask_not", "T0", "", "OB0">]);
}

// x op y, gt and ge by swapping the operands of lt and le.
class Compare<string op, string type, string xlo, string xhi, string ylo, string yhi> {
  bit Swap = !or(!eq(op, "gt"), !eq(op, "ge"));
  list<Step> Steps =
      CompareSteps<!cond(!eq(op, "gt") : "lt", !eq(op, "ge") : "le", true : op), LaneForm<type>.Form,
                   !if(Swap, ylo, xlo), !if(Swap, yhi, xhi), !if(Swap, xlo, ylo),
                   !if(Swap, xhi, yhi)>.Steps;
}

// The variant condition of a compare recipe of `type` in an instruction
// accepting `types`: the f32 recipe serves bf16 and f16 too (the streams
// and the typed loads widen them exactly), so it runs for every dtype but
// the others of `types`.
class CompareWhen<string type, list<string> types> {
  list<When> When = !if(!eq(type, "f32"),
                        !foreach(t, !filter(t, types, !not(!eq(LaneForm<t>.Form, "F"))),
                                 When<"dtype", DTypeValue<t>.Value, 0>),
                        [When<"dtype", DTypeValue<type>.Value>]);
}

// The recipe of a tensor compare on `type` for one value of bcast: a in IB0
// (IB1), b in IB2 (IB3) or in K1 (K2) per row or once, the mask to OB0.
class CompareRecipe<string op, string type, int bcast, list<string> types>
    : VectorRecipe<[When<"bcast", bcast>] # CompareWhen<type, types>.When, "rows", "cols",
                   [Stream<"IB0", "a", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "b8">] #
                   !if(!lt(bcast, 2), [Stream<"IB2", "b", !eq(bcast, 0), 0, "dtype">], []),
                   [Pass<!if(!lt(bcast, 2), ["IB0", "IB2"], ["IB0"]), ["OB0"],
                         Compare<op, type, "IB0", "IB1", !if(!lt(bcast, 2), "IB2", "K1"),
                                 !if(!lt(bcast, 2), "IB3", "K2")>.Steps>]> {
  // b[0] once (scalar), or b[i] per row (col): one element of dtype (an
  // i64 in K1, K2; a b8 widened to its mask).
  let PreLoads = !if(!eq(bcast, 3), [PreLoad<"b", 1, "K1", "dtype">], []);
  let RowLoads = !if(!eq(bcast, 2), [RowLoad<"b", "K1", 1, "dtype">], []);
}

// The recipe of a compare with the immediate s (K0; its sign fill in K1
// for i64, the mask s != 0 for b8), s the second operand.
class CompareScalarRecipe<string op, string type, list<string> types>
    : VectorRecipe<CompareWhen<type, types>.When, "", "n",
                   [Stream<"IB0", "a", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "b8">],
                   [Pass<["IB0"], ["OB0"], Compare<op, type, "IB0", "IB1", "K0", "K1">.Steps>],
                   !cond(!eq(type, "i64") : [Run<"sign_fill", "K0", "", "K1">],
                         !eq(type, "b8") : [Run<"nonzero", "K0", "", "K0">],
                         true : []<Step>)> {
  let Scalars = ["s"];
}

defvar CompareTypes = ["f32", "bf16", "f16", "i32", "i64"];
// EQ and NE compare b8 masks too: equality of truth values.
defvar EqualityTypes = CompareTypes # ["b8"];

// One recipe per lane form of `types`: f32's serves bf16 and f16
// (CompareWhen).
class CompareRecipeTypes<list<string> types> {
  list<string> Types = !filter(t, types, !not(!or(!eq(t, "bf16"), !eq(t, "f16"))));
}

// rows x cols compares of a with b broadcast per Broadcast, into a b8 mask.
class CompareOp<string mnemonic, int opcode, string expr, list<string> types = CompareTypes>
    : Instruction<mnemonic, opcode, "compare",
        [AddrOp<"dst", S_Dst, "rows x cols b8 mask">, AddrOp<"a", S_Src0, "rows x cols operand">,
         AddrOp<"b", S_Src1, "second operand, shaped by bcast">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
         EnumOp<"bcast", Broadcast, FlagBits<4, 2>, "broadcast of b">, DTypeOf<types>],
        "$dst, $a, $b, $rows, $cols", Cost<E_Vector, 4, 1>,
        "Elementwise compare into a b8 mask: dst = " # expr # "."> {
  let Semantics = "dst[i][j] = 1 if " # expr # " else 0 (b8), with b = b[i][j], b[j], b[i] or "
                  "b[0] for bcast none, row, col, scalar; a and b of dtype. On f32: IEEE "
                  "(a NaN is unordered: only ne is true; -0 == +0; subnormals by value); "
                  "bf16 and f16 compare their values widened exactly to binary32" #
                  !if(!empty(!filter(t, types, !eq(t, "b8"))), "",
                      "; b8 compares truth values (a nonzero byte is true)") # ".";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1>>,
                MemOperand<"a", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"b", "r", ProductBy<"bcast", [Product<["rows", "cols"], 1, "dtype">,
                                                         Product<["cols"], 1, "dtype">,
                                                         Product<["rows"], 1, "dtype">,
                                                         Product<[], 1, "dtype">]>>];
  let Disjoints = [Disjoint<"dst", "a", 0>, Disjoint<"dst", "b", 0>];
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3], acc, bcast,
                       acc # !foreach(type, CompareRecipeTypes<types>.Types,
                                      CompareRecipe<mnemonic, type, bcast, types>));
}

// n compares of a with the immediate s into a b8 mask; s's 32 bits are a
// binary32 on f32, an int32 on i32 and i64 (sign-extended), true where not
// 0 on b8.
class CompareScalarOp<string mnemonic, int opcode, string op, string expr,
                      list<string> types = CompareTypes>
    : Instruction<mnemonic, opcode, "compare",
        [AddrOp<"dst", S_Dst, "b8 mask">, AddrOp<"a", S_Src0, "operand">,
         F32Op<"s", S_P1, "scalar (an int32 for integer types)">,
         DimOp<"n", S_P0, "number of elements">, DTypeOf<types>],
        "$dst, $a, $s, $n", Cost<E_Vector, 4, 1>,
        "Compare with a scalar into a b8 mask: dst = " # expr # "."> {
  let Semantics = "dst[i] = 1 if " # expr # " else 0 (b8) for i < n, with a = a[i]; on i32 and "
                  "i64, s's 32 bits are an int32 (sign-extended for i64); on bf16 and f16, a "
                  "widened exactly to binary32 against s as binary32" #
                  !if(!empty(!filter(t, types, !eq(t, "b8"))), "",
                      "; on b8, a's truth value (a nonzero byte) against s's (its 32 bits not "
                      "0)") # ".";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1>>,
                MemOperand<"a", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "a", 0>];
  let Recipes = !foreach(type, CompareRecipeTypes<types>.Types,
                         CompareScalarRecipe<op, type, types>);
}

def EQ : CompareOp<"eq", 0xc0, "a == b", EqualityTypes>;
def NE : CompareOp<"ne", 0xc1, "a != b", EqualityTypes>;
def LT : CompareOp<"lt", 0xc2, "a < b">;
def LE : CompareOp<"le", 0xc3, "a <= b">;
def GT : CompareOp<"gt", 0xc4, "a > b">;
def GE : CompareOp<"ge", 0xc5, "a >= b">;
def EQS : CompareScalarOp<"eqs", 0xc8, "eq", "a == s", EqualityTypes>;
def NES : CompareScalarOp<"nes", 0xc9, "ne", "a != s", EqualityTypes>;
def LTS : CompareScalarOp<"lts", 0xca, "lt", "a < s">;
def LES : CompareScalarOp<"les", 0xcb, "le", "a <= s">;
def GTS : CompareScalarOp<"gts", 0xcc, "gt", "a > s">;
def GES : CompareScalarOp<"ges", 0xcd, "ge", "a >= s">;
