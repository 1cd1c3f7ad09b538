//===- hardware.td - The machine both the ISS and the RTL describe --------===//

def NpuHardware : HardwareConfig {
  let MatrixTile = 8;
  let MatrixBlockTiles = 4;
  let VectorLanes = 8;
  let AxiDataBytes = 32;
  let AxiMaxBurst = 16;
  let AxiOutstanding = 16;
  let MemLatency = 20;
  let FetchCycles = 4;
  let RingEntries = 1024;
  let VectorRegisters = 16;
  let RegionEntries = 8;
  // A nominal 1 GHz: the models count cycles, and torch.npu's event timing
  // and profiles state device time at this clock.
  let ClockMegahertz = 1000;
}

// ISA revision: bump on any incompatible change of the packet encoding.
defvar IsaVersionMajor = 1;
defvar IsaVersionMinor = 0;
def IsaVersion {
  int Major = IsaVersionMajor;
  int Minor = IsaVersionMinor;
}
