// EXPECT: 7:5: error: operand 'n' of 'pick': only enum operands take Accepts
include "test_preamble.td"

class CountOp : DimOp<"n", S_P0, "count"> {
  let Accepts = ["near"];
}
def PICK : Instruction<"pick", 0x13, "data",
    [AddrOp<"dst", S_Dst, "destination">, CountOp<>],
    "$dst, $n", Cost<E_Dma, 2, 0>, "Pick.">;
