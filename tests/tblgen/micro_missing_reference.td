// EXPECT: 4:5: error: micro-program 'twice_plus_one' has 2 steps and no Reference: name the exact function npu-ulp measures it against, e.g. let Reference = "std::erf(x)"
include "test_preamble.td"

def TwicePlusOne : MicroProgram<"twice_plus_one", ["x"],
    [(fmul:$t $x, 0x40000000),
     (fadd:$y $t, 0x3f800000)], "y", "2x + 1, with no exact function to measure it against.">;
