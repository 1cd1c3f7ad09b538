// EXPECT: 10:5: error: 'norm': a row store moves 1..2 words of the scalar registers, not 3 from K1
// EXPECT: 10:5: note: in recipe 0 of 'norm'
include "test_preamble.td"

def MP_norm : MicroProgram<"norm", ["x"], [(fadd:$y $x, $x)], "y", "x + x.">;
class Norm : VectorRecipe<[], "", "n", [Stream<"IB0", "src">, Stream<"OB0", "dst">],
    [Pass<["IB0"], ["OB0"], [Run<"norm", "IB0", "", "OB0">], "none", "">]> {
  let RowStores = [RowStore<"stats", "K1", 3>];
}
def NORM : Instruction<"norm", 1, "test",
    [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
     AddrOp<"stats", S_Src1, "per-row words">, DimOp<"n", S_P0, "count">],
    "$dst, $src, $stats, $n", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"src", "r", Product<["n"]>>,
                MemOperand<"stats", "w", Product<[]>>];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"stats", "dst">, Disjoint<"stats", "src">];
  let Recipes = [Norm<>];
}
