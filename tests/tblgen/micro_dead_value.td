// EXPECT: 4:5: error: micro-program 'dead' step 0: the value written to $t is never read
include "test_preamble.td"

def DeadProgram : MicroProgram<"dead", ["x"],
    [(fadd:$t $x, 0x3f800000),
     (fmul:$y $x, 0x40000000)], "y", "2x, and a step nobody reads.">;
