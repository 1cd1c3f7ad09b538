// EXPECT: 5:5: error: ScalarForm of 'twice' is 'NOP', which is not a ScalarOp definition
include "test_preamble.td"
class TwiceOp : Instruction<"twice", 1, "test", [], "", Cost<E_Control, 1, 0>, "Test.">;
// A binary instruction whose scalar form names an instruction of another kind.
def TWICE : TwiceOp { string ScalarForm = "NOP"; }
