// EXPECT: 11:5: error: 'scaled': the row load into K1 overwrites the operand 'hi' the recipe loads there
// EXPECT: 11:5: note: in recipe 0 of 'scaled'
include "test_preamble.td"

def MP_scaled : MicroProgram<"scaled", ["x", "s"], [(fmul:$y $x, $s)], "y", "x * s.">;
class Scaled : VectorRecipe<[], "", "n", [Stream<"IB0", "src">, Stream<"OB0", "dst">],
    [Pass<["IB0"], ["OB0"], [Run<"scaled", "IB0", "K1", "OB0">]>]> {
  let Scalars = ["lo", "hi"];
  let RowLoads = [RowLoad<"src", "K1">];
}
def SCALED : Instruction<"scaled", 1, "test",
    [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
     DimOp<"n", S_P0, "count">, F32Op<"lo", S_P1, "low">, F32Op<"hi", S_P2, "high">],
    "$dst, $src, $n, $lo, $hi", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"src", "r", Product<["n"]>>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = [Scaled<>];
}
