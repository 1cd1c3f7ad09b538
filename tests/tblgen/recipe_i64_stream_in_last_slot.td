// EXPECT: 17:5: error: 'twice': stream 'OB2' can hold i64 elements, whose high words need the next slot, but it is the last of its direction
// EXPECT: 17:5: note: in recipe 0 of 'twice'
include "test_preamble.td"
include "common.td"

def MP_twice : MicroProgram<"twice", ["x"], [(iadd:$y $x, $x)], "y", "x + x.">;
class TestOp<list<VectorRecipe> recipes>
    : Instruction<"twice", 1, "test",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
         DimOp<"n", S_P0, "count">, DTypeOf<["f32", "i64"]>],
        "$dst, $src, $n", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>, MemOperand<"src", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = recipes;
}
defvar Streams = [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB2", "dst", 1, 0, "dtype">];
def TWICE : TestOp<[VectorRecipe<[], "", "n", Streams,
    [Pass<["IB0"], ["OB2"], [Run<"twice", "IB0", "", "OB2">]>]>]>;
