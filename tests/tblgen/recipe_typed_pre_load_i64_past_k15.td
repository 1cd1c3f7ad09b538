// EXPECT: 11:5: error: 'scaled': the pre-load can move an i64, whose high word has no register after K15
// EXPECT: 11:5: note: in recipe 0 of 'scaled'
include "test_preamble.td"
include "common.td"

def MP_scaled : MicroProgram<"scaled", ["x", "s"], [(iadd:$y $x, $s)], "y", "x + s.">;
class Scaled : VectorRecipe<[], "", "n", [Stream<"IB0", "src", 1, 0, "i32">, Stream<"OB0", "dst", 1, 0, "i32">],
    [Pass<["IB0"], ["OB0"], [Run<"scaled", "IB0", "K15", "OB0">]>]> {
  let PreLoads = [PreLoad<"scale", 1, "K15", "dtype">];
}
def SCALED : Instruction<"scaled", 1, "test",
    [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
     AddrOp<"scale", S_Src1, "scale">, DimOp<"n", S_P0, "count">, DTypeOf<["i32", "i64"], 3>],
    "$dst, $src, $scale, $n", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"], 4>>,
                MemOperand<"src", "r", Product<["n"], 4>>,
                MemOperand<"scale", "r", Product<[], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"dst", "scale">];
  let Recipes = [Scaled<>];
}
