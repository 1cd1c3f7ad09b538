// EXPECT: 8:5: error: 'twice' names one of ScalarForm and ReverseScalarForm: give both or neither
include "test_preamble.td"
class TwiceOp : Instruction<"twice", 1, "test", [], "", Cost<E_Control, 1, 0>, "Test.">;
class ScalarOp<string mnemonic, int opcode>
    : Instruction<mnemonic, opcode, "test", [], "", Cost<E_Control, 1, 0>, "Test.">;
def TWICES : ScalarOp<"twices", 2>;
// A binary instruction with a scalar form but no reversed one.
def TWICE : TwiceOp { string ScalarForm = "TWICES"; string ReverseScalarForm = ""; }
