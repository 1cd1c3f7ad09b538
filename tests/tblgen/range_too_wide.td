// EXPECT: 5:5: error: operand 'lanes' of 'spread': range [0, 300] does not fit in a 8-bit u32 slot
include "test_preamble.td"

// An 8-bit field cannot hold 300.
def SPREAD : Instruction<"spread", 0x14, "data",
    [AddrOp<"dst", S_Dst, "destination">, U32Op<"lanes", FlagBits<8, 8>, "lane count", 0, 300>],
    "$dst, $lanes", Cost<E_Dma, 2, 0>, "Spread.">;
