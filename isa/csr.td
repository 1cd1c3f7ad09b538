//===- csr.td - The register window a driver programs ---------------------===//
//
// The runtime drives every backend through these registers exactly as a
// driver drives the RTL: it writes packets into the command ring in device
// memory, then writes RING_TAIL (the doorbell); the device executes packets
// from RING_HEAD up to the tail, advancing RING_HEAD after each, and stops
// on HALT or a fault with STATUS, ERROR_CODE and FAULT_* describing it.
// Ring indices are free-running 32-bit counters; the slot of index i is
// i mod RING_ENTRIES.
//
//===----------------------------------------------------------------------===//

def CSR_ID            : CsrRegister<"ID", 0x000, "ro", "Constant 0x4e505530 (\"NPU0\").">;
def CSR_VERSION       : CsrRegister<"VERSION", 0x004, "ro", "ISA version: major in bits 31-16, minor in 15-0.">;
def CSR_HW_CONFIG     : CsrRegister<"HW_CONFIG", 0x008, "ro",
                          "MatrixTile in bits 7-0, VectorLanes in 15-8, AxiDataBytes in 23-16.">;
def CSR_RING_BASE_LO  : CsrRegister<"RING_BASE_LO", 0x010, "rw", "Ring base address, bits 31-0 (64-byte aligned).">;
def CSR_RING_BASE_HI  : CsrRegister<"RING_BASE_HI", 0x014, "rw", "Ring base address, bits 63-32.">;
def CSR_RING_ENTRIES  : CsrRegister<"RING_ENTRIES", 0x018, "rw", "Ring size in packets, a power of two.">;
def CSR_RING_TAIL     : CsrRegister<"RING_TAIL", 0x01c, "rw",
                          "Producer index; writing it rings the doorbell. While the device "
                          "is halted or faulted it may also be set back to RING_HEAD.">;
def CSR_RING_HEAD     : CsrRegister<"RING_HEAD", 0x020, "ro", "Consumer index: packets completed mod 2^32.">;
def CSR_STATUS        : CsrRegister<"STATUS", 0x024, "ro", "Device state bits.">;
def CSR_CONTROL       : CsrRegister<"CONTROL", 0x028, "wo", "Command bits.">;
def CSR_ERROR_CODE    : CsrRegister<"ERROR_CODE", 0x02c, "ro",
                          "Fault code of the faulting packet (0 = none; codes as in npu/mem/fault.h).">;
def CSR_FAULT_PACKET_LO : CsrRegister<"FAULT_PACKET_LO", 0x030, "ro",
                          "Index (since reset) of the faulting packet, bits 31-0.">;
def CSR_FAULT_PACKET_HI : CsrRegister<"FAULT_PACKET_HI", 0x034, "ro", "Faulting packet index, bits 63-32.">;
def CSR_FAULT_ADDR_LO : CsrRegister<"FAULT_ADDR_LO", 0x038, "ro", "Faulting address, bits 31-0.">;
def CSR_FAULT_ADDR_HI : CsrRegister<"FAULT_ADDR_HI", 0x03c, "ro", "Faulting address, bits 63-32.">;
def CSR_CYCLE_LO      : CsrRegister<"CYCLE_LO", 0x040, "ro", "Cycle counter since reset, bits 31-0.">;
def CSR_CYCLE_HI      : CsrRegister<"CYCLE_HI", 0x044, "ro",
                          "Cycle counter, bits 63-32 (read LO first: it latches HI).">;
def CSR_PACKETS_LO    : CsrRegister<"PACKETS_LO", 0x048, "ro", "Packets completed since reset, bits 31-0.">;
def CSR_PACKETS_HI    : CsrRegister<"PACKETS_HI", 0x04c, "ro", "Packets completed, bits 63-32.">;

def STATUS_BUSY   : CsrBit<CSR_STATUS, "BUSY", 0, "Packets between RING_HEAD and RING_TAIL are being executed.">;
def STATUS_HALTED : CsrBit<CSR_STATUS, "HALTED", 1, "A HALT was executed; the doorbell is ignored until RESET.">;
def STATUS_FAULT  : CsrBit<CSR_STATUS, "FAULT", 2, "A packet faulted; ERROR_CODE and FAULT_* describe it.">;
def CONTROL_RESET : CsrBit<CSR_CONTROL, "RESET", 0,
                           "Clears STATUS, the fault registers, the counters, RING_HEAD and RING_TAIL.">;
def CONTROL_RESUME : CsrBit<CSR_CONTROL, "RESUME", 1,
                            "Clears HALTED so that the doorbell is served again; the ring "
                            "indices and counters are kept (a driver first sets RING_TAIL to "
                            "RING_HEAD to drop what followed the HALT).">;
