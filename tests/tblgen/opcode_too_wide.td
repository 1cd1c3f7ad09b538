// EXPECT: 3:5: error: opcode 4294967296 of 'huge' does not fit in the 32-bit opcode field
include "test_preamble.td"
def HUGE : Instruction<"huge", 0x100000000, "control", [], "", Cost<E_Control, 1, 0>, "Too big.">;
