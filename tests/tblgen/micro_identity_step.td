// EXPECT: 4:5: error: micro-program 'same' step 0: fmul with this constant only canonicalises its operand; remove the step
include "test_preamble.td"

def SameProgram : MicroProgram<"same", ["x"], [(fmul:$y $x, 0x3f800000)], "y", "x * 1.">;
