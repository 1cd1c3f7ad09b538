// EXPECT: 17:5: error: 'twice': stream 'IB0' has type 'quad', neither a DType value nor an operand of type DType
// EXPECT: 17:5: note: in recipe 0 of 'twice'
include "test_preamble.td"
include "common.td"

def MP_twice : MicroProgram<"twice", ["x"], [(fadd:$y $x, $x)], "y", "x + x.">;
class TestOp<list<VectorRecipe> recipes>
    : Instruction<"twice", 1, "test",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
         DimOp<"n", S_P0, "count">],
        "$dst, $src, $n", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"src", "r", Product<["n"]>>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = recipes;
}
defvar Streams = [Stream<"IB0", "src", 1, 0, "quad">, Stream<"OB0", "dst">];
def TWICE : TestOp<[VectorRecipe<[], "", "n", Streams,
    [Pass<["IB0"], ["OB0"], [Run<"twice", "IB0", "", "OB0">]>]>]>;
