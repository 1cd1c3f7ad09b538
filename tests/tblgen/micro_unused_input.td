// EXPECT: 4:5: error: micro-program 'first': input $b is never read
include "test_preamble.td"

def FirstProgram : MicroProgram<"first", ["a", "b"], [(fmul:$y $a, 0x40000000)], "y",
                                "Ignores its second input.">;
