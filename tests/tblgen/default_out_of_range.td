// EXPECT: 4:5: error: operand 'pad' of 'gather': default value -5 is not a valid value of the operand
include "test_preamble.td"

def GATHER : Instruction<"gather", 0x15, "data",
    [AddrOp<"dst", S_Dst, "destination">, OptI32Op<"pad", S_P0, "padding index", -5, -1>],
    "$dst", Cost<E_Dma, 2, 0>, "Gather.">;
