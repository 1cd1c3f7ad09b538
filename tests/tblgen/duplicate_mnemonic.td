// EXPECT: 4:5: error: duplicate mnemonic 'nop'
// EXPECT: test_preamble.td:20:5: note: first definition of 'nop'
include "test_preamble.td"
def NOP2 : Instruction<"nop", 1, "control", [], "", Cost<E_Control, 1, 0>, "Another nop.">;
