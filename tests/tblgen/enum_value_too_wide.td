// EXPECT: 7:5: error: operand 'mode' of 'pick': enum value far = 4 does not fit in the 2-bit slot
include "test_preamble.td"

def Mode : EnumType<"Mode", [EnumValue<"near", 0>, EnumValue<"mid", 1>, EnumValue<"far", 4>],
                    "A mode that needs three bits.">;

def PICK : Instruction<"pick", 0x13, "data",
    [AddrOp<"dst", S_Dst, "destination">, EnumOp<"mode", Mode, FlagBits<4, 2>, "mode">],
    "$dst", Cost<E_Dma, 2, 0>, "Pick.">;
