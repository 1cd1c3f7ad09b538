// EXPECT: 4:5: error: 'poke': memory operand 'dst': holds 'f16', not f32, bytes, index or hyper
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, DimOp<"n", S_P0, "words">],
    "$dst, $n", Cost<E_Dma, 2, 0>, "Poke."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"]>, "", "", "f16">];
}
