// EXPECT: 10:5: error: 'total': the row store has elements of type bf16, but the extent of 'dst' counts 4-byte elements
// EXPECT: 10:5: note: in recipe 0 of 'total'
include "test_preamble.td"
include "common.td"

class Total : VectorRecipe<[], "rows", "cols", [Stream<"IB0", "src">],
    [Pass<["IB0"], [], [Reduce<"IB0">], "sum", "K2">]> {
  let RowStores = [RowStore<"dst", "K2", 1, "bf16">];
}
def TOTAL : Instruction<"total", 1, "test",
    [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
     DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">],
    "$dst, $src, $rows, $cols", Cost<E_Vector, 1, 1>, "Test."> {
  let Memory = [MemOperand<"dst", "w", Product<["rows"]>>,
                MemOperand<"src", "r", Product<["rows", "cols"]>>];
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = [Total<>];
}
