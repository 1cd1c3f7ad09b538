// EXPECT: 4:5: error: syntax of 'fill': unexpected character '+' (only $operand placeholders and , [ ] ( ) are allowed)
include "test_preamble.td"

def FILL : Instruction<"fill", 0x11, "data",
    [AddrOp<"dst", S_Dst, "destination">, DimOp<"words", S_P0, "length">],
    "$dst + $words", Cost<E_Dma, 2, 0>, "Fill.">;
