// EXPECT: 4:5: error: micro-program 'shift' step 0: the shift amount of ishr must be a constant from 0 to 31
include "test_preamble.td"

def ShiftProgram : MicroProgram<"shift", ["x"], [(ishr:$y $x, 32)], "y", "Shift past the word.">;
