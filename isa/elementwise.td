//===- elementwise.td - Binary elementwise operations ----------------------===//

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
}

// n elements combined with an immediate scalar s.
class ScalarOp<string mnemonic, int opcode, string expr>
    : Instruction<mnemonic, opcode, "elementwise",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"a", S_Src0, "operand">,
         F32Op<"s", S_P1, "scalar">, DimOp<"n", S_P0, "number of elements">, DTypeOp],
        "$dst, $a, $s, $n", Cost<E_Vector, 4, 1>, "Elementwise with a scalar: dst = " # expr # "."> {
  let Semantics = "dst[i] = " # expr # " for i < n, with a = a[i].";
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"a", "r", Product<["n"]>>];
  let Disjoints = [Disjoint<"dst", "a", 1>];
}

// The tensor and the scalar form of one operation.
multiclass Binary<string mnemonic, int opcode, int scalarOpcode, string expr,
                  string scalarExpr, list<Operand> extra = []> {
  def "" : BinaryOp<mnemonic, opcode, expr, extra>;
  def S : ScalarOp<mnemonic # "s", scalarOpcode, scalarExpr>;
}

defvar Alpha = OptF32Op<"alpha", S_P2, "multiplier of b", F32One>;

defm ADD : Binary<"add", 0x30, 0x38, "a + alpha*b (alpha*b rounded first; exact when alpha = 1)",
                  "a + s", [Alpha]>;
defm SUB : Binary<"sub", 0x31, 0x39, "a - alpha*b (alpha*b rounded first; exact when alpha = 1)",
                  "a - s", [Alpha]>;
defm MUL : Binary<"mul", 0x32, 0x3a, "a * b", "a * s">;
defm DIV : Binary<"div", 0x33, 0x3b, "a / b (correctly rounded)", "a / s (correctly rounded)">;
defm MAX : Binary<"max", 0x34, 0x3c, "max(a, b) (NaN if either is NaN)", "max(a, s)">;
defm MIN : Binary<"min", 0x35, 0x3d, "min(a, b) (NaN if either is NaN)", "min(a, s)">;
def RSUBS : ScalarOp<"rsubs", 0x3e, "s - a">;
def RDIVS : ScalarOp<"rdivs", 0x3f, "s / a (correctly rounded)">;
