//===- elementwise.td - Binary elementwise operations ----------------------===//

// The recipe of a binary instruction for one value of bcast, with alpha * b
// rounded first (alphaScales) or b itself; hasAlpha: the instruction has the
// operand alpha (its variants then depend on alpha == 1.0).
class BinaryRecipe<string program, int bcast, bit hasAlpha, bit alphaScales>
    : VectorRecipe<[When<"bcast", bcast>] #
                   !if(hasAlpha, [When<"alpha", F32One, !not(alphaScales)>], []),
                   "rows", "cols",
                   [Stream<"IB0", "a">, Stream<"OB0", "dst">] #
                   !if(!lt(bcast, 2), [Stream<"IB1", "b", !eq(bcast, 0)>], []),
                   [Pass<!if(!lt(bcast, 2), ["IB0", "IB1"], ["IB0"]), ["OB0"],
                         !if(alphaScales,
                             [Run<"mul", "K0", !if(!lt(bcast, 2), "IB1", "K1"), "T0">,
                              Run<program, "IB0", "T0", "OB0">],
                             [Run<program, "IB0", !if(!lt(bcast, 2), "IB1", "K1"), "OB0">])>]> {
  let Scalars = !if(hasAlpha, ["alpha"], []);
  // b[0] once (scalar), or b[i] per row (col).
  let PreLoads = !if(!eq(bcast, 3), [PreLoad<"b", 1, "K1">], []);
  let RowLoads = !if(!eq(bcast, 2), [RowLoad<"b", "K1">], []);
}

// rows x cols elementwise with the second operand broadcast per Broadcast.
class BinaryOp<string mnemonic, int opcode, string expr, list<Operand> extra = []>
    : Instruction<mnemonic, opcode, "elementwise",
        [AddrOp<"dst", S_Dst, "rows x cols result">, AddrOp<"a", S_Src0, "rows x cols operand">,
         AddrOp<"b", S_Src1, "second operand, shaped by bcast">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">,
         EnumOp<"bcast", Broadcast, FlagBits<4, 2>, "broadcast of b">, DTypeOp] # extra,
        "$dst, $a, $b, $rows, $cols", Cost<E_Vector, 4, 1>,
        "Elementwise dst = " # expr # "."> {
  let Semantics = "dst[i][j] = " # expr # " with b = b[i][j], b[j], b[i] or b[0] for "
                  "bcast none, row, col, scalar.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"]>>,
                MemOperand<"a", "r", Product<["rows", "cols"]>>,
                MemOperand<"b", "r", ProductBy<"bcast", [Product<["rows", "cols"]>,
                                                         Product<["cols"]>, Product<["rows"]>,
                                                         Product<[]>]>>];
  let Disjoints = [Disjoint<"dst", "a", 1>, Disjoint<"dst", "b", 1, "bcast", 0>];
  // Its scalar forms (ScalarOp definitions): `a op s`, and `s op a`, the
  // same one when the operation commutes.
  string ScalarForm = "";
  string ReverseScalarForm = "";
  // The program is the one named like the instruction (microcode.td).
  bit HasAlpha = !not(!empty(!filter(o, extra, !eq(o.Name, "alpha"))));
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3], acc, bcast,
                       acc # [BinaryRecipe<mnemonic, bcast, HasAlpha, 0>] #
                       !if(HasAlpha, [BinaryRecipe<mnemonic, bcast, HasAlpha, 1>], []<VectorRecipe>));
}

// n elements combined with an immediate scalar s by `program`, s being its
// first input when reversed.
class ScalarOp<string mnemonic, int opcode, string expr, string program, bit reversed = 0>
    : Instruction<mnemonic, opcode, "elementwise",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"a", S_Src0, "operand">,
         F32Op<"s", S_P1, "scalar">, DimOp<"n", S_P0, "number of elements">, DTypeOp],
        "$dst, $a, $s, $n", Cost<E_Vector, 4, 1>, "Elementwise with a scalar: dst = " # expr # "."> {
  let Semantics = "dst[i] = " # expr # " for i < n, with a = a[i].";
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"a", "r", Product<["n"]>>];
  let Disjoints = [Disjoint<"dst", "a", 1>];
  let Recipes = [ElementwiseRecipe<program, !if(reversed, "K0", "IB0"), !if(reversed, "IB0", "K0"),
                                   [Stream<"IB0", "a">, Stream<"OB0", "dst">], "s">];
}

// The tensor and the scalar form of one operation; `reverse` names the
// `s op a` form of an operation that does not commute.
multiclass Binary<string mnemonic, int opcode, int scalarOpcode, string expr,
                  string scalarExpr, list<Operand> extra = [], string reverse = ""> {
  def "" : BinaryOp<mnemonic, opcode, expr, extra> {
    let ScalarForm = NAME # "S";
    let ReverseScalarForm = !if(!empty(reverse), NAME # "S", reverse);
  }
  def S : ScalarOp<mnemonic # "s", scalarOpcode, scalarExpr, mnemonic>;
}

defvar Alpha = OptF32Op<"alpha", S_P2, "multiplier of b", F32One>;

defm ADD : Binary<"add", 0x30, 0x38, "a + alpha*b (alpha*b rounded first; exact when alpha = 1)",
                  "a + s", [Alpha]>;
defm SUB : Binary<"sub", 0x31, 0x39, "a - alpha*b (alpha*b rounded first; exact when alpha = 1)",
                  "a - s", [Alpha], "RSUBS">;
defm MUL : Binary<"mul", 0x32, 0x3a, "a * b", "a * s">;
defm DIV : Binary<"div", 0x33, 0x3b, "a / b (correctly rounded)", "a / s (correctly rounded)", [],
                  "RDIVS">;
defm MAX : Binary<"max", 0x34, 0x3c, "max(a, b) (NaN if either is NaN)", "max(a, s)">;
defm MIN : Binary<"min", 0x35, 0x3d, "min(a, b) (NaN if either is NaN)", "min(a, s)">;
def RSUBS : ScalarOp<"rsubs", 0x3e, "s - a", "sub", 1>;
def RDIVS : ScalarOp<"rdivs", 0x3f, "s / a (correctly rounded)", "div", 1>;
