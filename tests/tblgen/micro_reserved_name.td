// EXPECT: 4:5: error: micro-program 'bits': the name would generate MC_PROG_BITS, the width parameter of npu_microcode_pkg
include "test_preamble.td"

def BitsProgram : MicroProgram<"bits", ["x"], [(fneg:$y $x)], "y", "A name the ROM package uses.">;
