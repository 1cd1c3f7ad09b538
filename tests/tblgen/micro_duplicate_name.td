// EXPECT: 5:5: error: duplicate micro-program 'neg'
// EXPECT: 4:5: note: first definition of 'neg'
include "test_preamble.td"
def Neg1 : MicroProgram<"neg", ["x"], [(fneg:$y $x)], "y", "-x.">;
def Neg2 : MicroProgram<"neg", ["x"], [(fneg:$y $x)], "y", "-x again.">;
