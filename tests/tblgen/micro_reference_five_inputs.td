// EXPECT: 5:5: error: micro-program 'fma5': a Reference is measured by npu-ulp, which takes one to 4 inputs, not 5
include "test_preamble.td"

let Reference = "a * b + c * d + e" in
def Fma5 : MicroProgram<"fma5", ["a", "b", "c", "d", "e"],
    [(fmul:$t $a, $b),
     (ffma:$u $c, $d, $t),
     (fadd:$y $u, $e)], "y", "a * b + c * d + e, which npu-ulp cannot sweep.">;
