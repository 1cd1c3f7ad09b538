// EXPECT: 4:5: error: operand 'len' of 'move': slot [48, 80) straddles packet fields 'flags' and 'dst' without covering them whole
include "test_preamble.td"

def MOVE : Instruction<"move", 0x16, "data",
    [AddrOp<"dst", S_Src0, "destination">, U32Op<"len", Field<48, 32>, "length">],
    "$dst, $len", Cost<E_Dma, 2, 0>, "Move.">;
