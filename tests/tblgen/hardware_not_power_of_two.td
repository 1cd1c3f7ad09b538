// EXPECT: 5:5: error: hardware parameter VectorLanes = 6 must be a power of two
include "base.td"
include "packet.td"

def OddHardware : HardwareConfig {
  let MatrixTile = 8; let MatrixBlockTiles = 4; let VectorLanes = 6; let AxiDataBytes = 32; let AxiMaxBurst = 16;
  let AxiOutstanding = 16;
  let MemLatency = 20; let FetchCycles = 4; let RingEntries = 1024; let VectorRegisters = 16;
  let RegionEntries = 8;
  let ClockMegahertz = 1000;
}
def IsaVersion { int Major = 1; int Minor = 0; }
def N : Instruction<"nop", 0, "control", [], "", Cost<E_Control, 1, 0>, "No operation.">;
