// EXPECT: 4:5: error: operand 'dst' of 'poke': a addr operand needs a slot of 64 bits, but its slot is 32 bits wide
include "test_preamble.td"

def POKE : Instruction<"poke", 0x17, "data", [AddrOp<"dst", S_P0, "destination">],
    "$dst", Cost<E_Dma, 2, 0>, "Poke.">;
