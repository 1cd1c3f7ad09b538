// EXPECT: 6:5: error: duplicate opcode 0x0: 'idle' reuses the opcode of 'nop'
// EXPECT: test_preamble.td:20:5: note: first use of opcode 0x0
include "test_preamble.td"

// Opcode 0 is taken by TEST_NOP.
def IDLE : Instruction<"idle", 0, "control", [], "", Cost<E_Control, 1, 0>, "Idle.">;
