// EXPECT: 4:5: error: micro-program 'folded' step 0: every source is a constant; fold the step into a constant
include "test_preamble.td"

def FoldedProgram : MicroProgram<"folded", ["x"],
    [(fadd:$c 0x3f800000, 0x40000000),
     (fmul:$y $x, $c)], "y", "3x, with 3 computed at run time.">;
