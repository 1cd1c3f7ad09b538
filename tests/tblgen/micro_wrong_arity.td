// EXPECT: 4:5: error: micro-program 'mad' step 0: ffma takes 3 sources, got 2
include "test_preamble.td"

def MadProgram : MicroProgram<"mad", ["x", "y"], [(ffma:$r $x, $y)], "r", "Missing addend.">;
