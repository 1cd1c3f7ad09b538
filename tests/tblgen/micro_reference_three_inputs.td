// EXPECT: 5:5: error: micro-program 'fma3': a Reference is measured by npu-ulp, which takes one or two inputs, not 3
include "test_preamble.td"

let Reference = "a * b + c" in
def Fma3 : MicroProgram<"fma3", ["a", "b", "c"],
    [(fmul:$t $a, $b),
     (fadd:$y $t, $c)], "y", "a * b + c, which npu-ulp cannot sweep.">;
