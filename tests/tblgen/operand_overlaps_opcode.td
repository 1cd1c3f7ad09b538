// EXPECT: 4:5: error: operand 'tag' of 'mark': slot overlaps the opcode field
include "test_preamble.td"

def MARK : Instruction<"mark", 0x18, "data", [U32Op<"tag", Field<8, 8>, "tag">],
    "$tag", Cost<E_Control, 1, 0>, "Mark.">;
