// EXPECT: 5:5: error: micro-program 'fma4': a Reference is measured by npu-ulp, which takes one to three inputs, not 4
include "test_preamble.td"

let Reference = "a * b + c * d" in
def Fma4 : MicroProgram<"fma4", ["a", "b", "c", "d"],
    [(fmul:$t $a, $b),
     (fmul:$u $c, $d),
     (fadd:$y $t, $u)], "y", "a * b + c * d, which npu-ulp cannot sweep.">;
