// EXPECT: 4:5: error: micro-program 'shift' step 0: the shift amount of ishl must be a constant from 0 to 31
include "test_preamble.td"

def ShiftProgram : MicroProgram<"shift", ["x", "n"], [(ishl:$y $x, $n)], "y",
                                "A variable shift: the lanes shift by constants only.">;
