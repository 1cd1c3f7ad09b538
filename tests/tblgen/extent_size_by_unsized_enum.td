// EXPECT: 6:5: error: 'pick': memory operand 'dst' takes its element size from 'mode', whose enumeration Mode has no sizes
include "test_preamble.td"

def Mode : EnumType<"Mode", [EnumValue<"near", 0>, EnumValue<"mid", 1>], "A mode.">;

def PICK : Instruction<"pick", 0x13, "data",
    [AddrOp<"dst", S_Dst, "destination">, DimOp<"n", S_P0, "count">,
     EnumOp<"mode", Mode, FlagBits<4, 2>, "mode">],
    "$dst, $n", Cost<E_Dma, 2, 0>, "Pick."> {
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "mode">>];
}
