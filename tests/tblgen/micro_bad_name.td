// EXPECT: 4:5: error: micro-program 'and': the name must be a lower-case identifier and not a C++ keyword
include "test_preamble.td"

def AndProgram : MicroProgram<"and", ["x"], [(fneg:$y $x)], "y", "A C++ keyword as a function name.">;
