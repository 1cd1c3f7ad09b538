// EXPECT: 9:5: error: operand 'mode' of 'pick': accepts 'far', which is not a value of Mode
include "test_preamble.td"

def Mode : EnumType<"Mode", [EnumValue<"near", 0>, EnumValue<"mid", 1>], "A mode.">;
class ModeOp : EnumOp<"mode", Mode, FlagBits<4, 2>, "mode"> {
  let Accepts = ["near", "far"];
}

def PICK : Instruction<"pick", 0x13, "data",
    [AddrOp<"dst", S_Dst, "destination">, ModeOp<>],
    "$dst", Cost<E_Dma, 2, 0>, "Pick.">;
