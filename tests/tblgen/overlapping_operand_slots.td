// EXPECT: 4:5: error: 'copy': slot of operand 'src' [64, 128) overlaps operand 'dst' [64, 128)
include "test_preamble.td"

def COPY : Instruction<"copy", 0x10, "data",
    [AddrOp<"dst", S_Dst, "destination">, AddrOp<"src", S_Dst, "source">,
     DimOp<"bytes", S_P0, "length">],
    "$dst, $src, $bytes", Cost<E_Dma, 2, 0>, "Copy.">;
