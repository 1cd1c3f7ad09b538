// EXPECT: 4:5: error: 'poke': disjoint rule names no memory operand 'src'
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, DimOp<"n", S_P0, "words">],
    "$dst, $n", Cost<E_Dma, 2, 0>, "Poke."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>>];
  let Disjoints = [Disjoint<"dst", "src">];
}
