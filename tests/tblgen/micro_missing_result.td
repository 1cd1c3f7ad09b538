// EXPECT: 4:5: error: micro-program 'neg' step 0 (fneg): result register missing, write (fneg:$dest ...)
include "test_preamble.td"

def NegProgram : MicroProgram<"neg", ["x"], [(fneg $x)], "x", "No destination.">;
