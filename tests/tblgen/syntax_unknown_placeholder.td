// EXPECT: 5:5: error: syntax of 'fill': placeholder '$count' names no operand
// EXPECT: 5:5: error: syntax of 'fill' does not cover required operand 'words'
include "test_preamble.td"

def FILL : Instruction<"fill", 0x11, "data",
    [AddrOp<"dst", S_Dst, "destination">, DimOp<"words", S_P0, "length">],
    "$dst, $count", Cost<E_Dma, 2, 0>, "Fill.">;
