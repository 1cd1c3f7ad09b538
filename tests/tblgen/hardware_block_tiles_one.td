// EXPECT: 5:5: error: hardware parameter MatrixBlockTiles = 1 must be at least 2
include "base.td"
include "packet.td"

def OneTileBlockHardware : HardwareConfig {
  let MatrixTile = 8; let MatrixBlockTiles = 1; let VectorLanes = 8; let AxiDataBytes = 32; let AxiMaxBurst = 16;
  let AxiOutstanding = 16;
  let MemLatency = 20; let FetchCycles = 4; let RingEntries = 1024; let VectorRegisters = 16;
  let RegionEntries = 8;
  let ClockMegahertz = 1000;
}
def IsaVersion { int Major = 1; int Minor = 0; }
def N : Instruction<"nop", 0, "control", [], "", Cost<E_Control, 1, 0>, "No operation.">;
