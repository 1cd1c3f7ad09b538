// EXPECT: 11:5: error: packet bits [480, 512) are not covered by any PacketField
// A packet layout without its last parameter word.
include "base.td"
def PF_Opcode : PacketField<"opcode", 0, 32, "u32", "">;
def PF_Flags  : PacketField<"flags", 32, 32, "u32", "">;
def PF_Dst    : PacketField<"dst", 64, 64, "u64", "">;
def PF_Src0   : PacketField<"src0", 128, 64, "u64", "">;
def PF_Src1   : PacketField<"src1", 192, 64, "u64", "">;
foreach i = 0...5 in
  def PF_Param#i : PacketField<"param"#i, !add(256, !mul(i, 32)), 32, "u32", "">;
def PF_Last : PacketField<"param6", 448, 32, "u32", "">;
def HW : HardwareConfig {
  let MatrixTile = 8; let MatrixBlockTiles = 4; let VectorLanes = 8; let AxiDataBytes = 32; let AxiMaxBurst = 16;
  let AxiOutstanding = 16;
  let MemLatency = 20; let FetchCycles = 4; let RingEntries = 1024; let VectorRegisters = 16;
  let RegionEntries = 8;
  let ClockMegahertz = 1000;
}
def IsaVersion { int Major = 1; int Minor = 0; }
def N : Instruction<"nop", 0, "control", [], "", Cost<E_Control, 1, 0>, "No operation.">;
