// EXPECT: 3:5: error: mnemonic 'Halt' must be a lower-case identifier
include "test_preamble.td"
def HALT : Instruction<"Halt", 2, "control", [], "", Cost<E_Control, 1, 0>, "Stop.">;
