// EXPECT: 4:5: error: micro-program 'twice' step 1: register $t1 is read before it is written
include "test_preamble.td"

def TwiceProgram : MicroProgram<"twice", ["x"],
    [(fadd:$t0 $x, $x),
     (fadd:$t2 $t1, $t0)],
    "t2", "2x, with a typo.">;
