// EXPECT: 4:5: error: the Program of an instruction must be a MicroProgram
include "test_preamble.td"

def BAD : Instruction<"bad", 1, "unary", [], "", Cost<E_Control, 1, 1>, "Names a primitive as its program."> {
  Prim Program = fadd;
}
