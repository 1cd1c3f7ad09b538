// EXPECT: 9:5: error: operand 'mode' of 'pick': default value 0 is not a valid value of the operand
include "test_preamble.td"

def Mode : EnumType<"Mode", [EnumValue<"near", 0>, EnumValue<"mid", 1>], "A mode.">;
class ModeOp : EnumOp<"mode", Mode, FlagBits<4, 2>, "mode"> {
  let Accepts = ["mid"];
}

def PICK : Instruction<"pick", 0x13, "data",
    [AddrOp<"dst", S_Dst, "destination">, ModeOp<>],
    "$dst", Cost<E_Dma, 2, 0>, "Pick.">;
