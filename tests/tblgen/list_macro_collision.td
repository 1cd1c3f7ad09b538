// EXPECT: 3:7: error: instruction class 'Control' and family 'control' would both generate the list NPU_FOR_EACH_CONTROL; rename one of them
include "test_preamble.td"
class Control<string mnemonic, int opcode>
    : Instruction<mnemonic, opcode, "control", [], "", Cost<E_Control, 1, 0>, "Control.">;
def FENCE : Control<"fence", 1>;
