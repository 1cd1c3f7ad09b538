// EXPECT: 4:5: error: 'poke': memory operands 'dst' and 'src' have no disjoint rule, and one of them is written
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, AddrOp<"src", S_Src0, "source">,
     DimOp<"n", S_P0, "words">],
    "$dst, $src, $n", Cost<E_Dma, 2, 0>, "Poke."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>, MemOperand<"src", "r", Product<["n"]>>];
}
