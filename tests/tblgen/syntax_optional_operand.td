// EXPECT: 4:5: error: syntax of 'scale': optional operand 'factor' must not appear in the syntax (it is written factor=value)
include "test_preamble.td"

def SCALE : Instruction<"scale", 0x12, "data",
    [AddrOp<"dst", S_Dst, "destination">, OptF32Op<"factor", S_P0, "factor", 0x3f800000>],
    "$dst, $factor", Cost<E_Vector, 2, 1>, "Scale.">;
