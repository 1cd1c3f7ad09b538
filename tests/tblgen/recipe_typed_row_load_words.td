// EXPECT: 11:5: error: 'scaled': the typed row load moves one element, not Words = 2
// EXPECT: 11:5: note: in recipe 0 of 'scaled'
include "test_preamble.td"
include "common.td"

def MP_scaled : MicroProgram<"scaled", ["x", "s"], [(fmul:$y $x, $s)], "y", "x * s.">;
class Scaled : VectorRecipe<[], "", "n", [Stream<"IB0", "src">, Stream<"OB0", "dst">],
    [Pass<["IB0"], ["OB0"], [Run<"scaled", "IB0", "K1", "OB0">]>]> {
  let RowLoads = [RowLoad<"scale", "K1", 2, "f32">];
}
def SCALED : Instruction<"scaled", 1, "test",
    [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
     AddrOp<"scale", S_Src1, "scale">, DimOp<"n", S_P0, "count">],
    "$dst, $src, $scale, $n", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"src", "r", Product<["n"]>>,
                MemOperand<"scale", "r", Product<[]>>];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"dst", "scale">];
  let Recipes = [Scaled<>];
}
