//===- packet.td - The 64-byte command packet and its operand slots -------===//

def PF_Opcode : PacketField<"opcode", 0, 32, "u32", "Operation code.">;
def PF_Flags  : PacketField<"flags", 32, 32, "u32",
                            "Per-instruction modifier bits; bits 0-3 hold the data type.">;
def PF_Dst    : PacketField<"dst", 64, 64, "u64", "Destination physical address.">;
def PF_Src0   : PacketField<"src0", 128, 64, "u64", "First source physical address.">;
def PF_Src1   : PacketField<"src1", 192, 64, "u64", "Second source physical address.">;
foreach i = 0...7 in
  def PF_Param#i : PacketField<"param"#i, !add(256, !mul(i, 32)), 32, "u32",
                               "Parameter word "#i#".">;

// The slots instructions place their operands in.
def S_Dst  : Field<64, 64>;
def S_Src0 : Field<128, 64>;
def S_Src1 : Field<192, 64>;
foreach i = 0...7 in
  def S_P#i : Field<!add(256, !mul(i, 32)), 32>;
// A 64-bit address carried by two consecutive parameter words (low word first).
def S_P01 : Field<256, 64>;
def S_P23 : Field<320, 64>;
def S_P45 : Field<384, 64>;

