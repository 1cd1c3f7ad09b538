//===- control.td - Control instructions ----------------------------------===//

class ControlOp<string mnemonic, int opcode, string doc, string semantics>
    : Instruction<mnemonic, opcode, "control", [], "", Cost<E_Control, 1, 0>, doc> {
  let Semantics = semantics;
}

def NOP : ControlOp<"nop", 0x00, "No operation.", "Does nothing; all fields other than the opcode are zero.">;
def FENCE : ControlOp<"fence", 0x01, "Wait until all engines are idle.",
  "Execution is architecturally in order already; FENCE additionally stops the "
  "timing model from overlapping any later packet with an earlier one.">;
def HALT : ControlOp<"halt", 0x02, "End of the stream.",
  "Stops fetching. The device reports completion with the index of this packet.">;
