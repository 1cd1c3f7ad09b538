// EXPECT: 6:5: error: register SECOND reuses offset 0x10
// EXPECT: 5:5: note: first register at that offset
include "test_preamble.td"

def FIRST : CsrRegister<"FIRST", 0x10, "rw", "A register.">;
def SECOND : CsrRegister<"SECOND", 0x10, "ro", "Another register at the same offset.">;
