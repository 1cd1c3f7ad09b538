// EXPECT: 4:5: error: 'gather': memory operand 'idx' index wrap 'n' is a u32 operand
include "test_preamble.td"

def GATHER : Instruction<"gather", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, AddrOp<"idx", S_Src0, "indices">,
     DimOp<"n", S_P0, "indices">],
    "$dst, $idx, $n", Cost<E_Dma, 2, 0>, "Gather."> {
  // The wrap names a count, not a flag: indices cannot be negative by it.
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>,
                IndexOperand<"idx", Product<["n"]>, "n", "n">];
  let Disjoints = [Disjoint<"dst", "idx">];
}
