// EXPECT: 4:5: error: 'gather': memory operand 'idx' index bound names no operand 'rows'
include "test_preamble.td"

def GATHER : Instruction<"gather", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, AddrOp<"idx", S_Src0, "indices">,
     DimOp<"n", S_P0, "indices">],
    "$dst, $idx, $n", Cost<E_Dma, 2, 0>, "Gather."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, IndexOperand<"idx", Product<["n"]>, "rows">];
  let Disjoints = [Disjoint<"dst", "idx">];
}
