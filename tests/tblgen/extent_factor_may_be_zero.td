// EXPECT: 4:5: error: 'poke': memory operand 'dst' factor 'n' may be 0 (use a DimOp)
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, U32Op<"n", S_P0, "words">],
    "$dst, $n", Cost<E_Dma, 2, 0>, "Poke."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>];
}
