// EXPECT: 4:5: error: 'poke': address operand 'dst' has no memory operand (its range would go unchecked)
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data", [AddrOp<"dst", S_Dst, "destination">],
    "$dst", Cost<E_Dma, 2, 0>, "Poke.">;
