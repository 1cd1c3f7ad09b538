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
def CSR_FAULT_OPERAND : CsrRegister<"FAULT_OPERAND", 0x050, "ro",
                          "Which operands the fault concerns and how they were accessed: "
                          "bits 7-0 the operand's index in the instruction, bits 15-8 the "
                          "operand it overlaps (Overlap), 0xff for none; bits 17-16 the "
                          "access of a range fault (1 read, 2 write, 3 read-modify-write).">;
def CSR_FAULT_LENGTH_LO : CsrRegister<"FAULT_LENGTH_LO", 0x054, "ro",
                          "Bytes at fault (the range, the overlap, the index width; for a "
                          "matrix pitch below its row, the stored row length), bits 31-0.">;
def CSR_FAULT_LENGTH_HI : CsrRegister<"FAULT_LENGTH_HI", 0x058, "ro", "Bytes at fault, bits 63-32.">;
def CSR_REGION_SELECT : CsrRegister<"REGION_SELECT", 0x060, "rw",
                          "Entry of the region table (the value mod RegionEntries) that REGION_BASE, "
                          "REGION_SIZE and REGION_ACCESS read and write. The table is what the "
                          "operand checks compare every memory operand's range with; it is "
                          "programmed from the address map at power-up (CONTROL.RESET keeps it).">;
def CSR_REGION_BASE_LO : CsrRegister<"REGION_BASE_LO", 0x064, "rw", "Selected region's base, bits 31-0.">;
def CSR_REGION_BASE_HI : CsrRegister<"REGION_BASE_HI", 0x068, "rw", "Selected region's base, bits 63-32.">;
def CSR_REGION_SIZE_LO : CsrRegister<"REGION_SIZE_LO", 0x06c, "rw",
                          "Selected region's size in bytes, bits 31-0 (0: the entry is unused).">;
def CSR_REGION_SIZE_HI : CsrRegister<"REGION_SIZE_HI", 0x070, "rw", "Selected region's size, bits 63-32.">;
def CSR_REGION_ACCESS : CsrRegister<"REGION_ACCESS", 0x074, "rw",
                          "What the engines may do in the selected region. A region in the "
                          "table with neither bit (the CSR window, the command ring) faults "
                          "with Permission, an address in no region with Unmapped.">;

def STATUS_BUSY   : CsrBit<CSR_STATUS, "BUSY", 0, "Packets between RING_HEAD and RING_TAIL are being executed.">;
def STATUS_HALTED : CsrBit<CSR_STATUS, "HALTED", 1, "A HALT was executed; the doorbell is ignored until RESET.">;
def STATUS_FAULT  : CsrBit<CSR_STATUS, "FAULT", 2, "A packet faulted; ERROR_CODE and FAULT_* describe it.">;
def CONTROL_RESET : CsrBit<CSR_CONTROL, "RESET", 0,
                           "Clears STATUS, the fault registers, the counters, RING_HEAD and RING_TAIL.">;
def REGION_ACCESS_READ : CsrBit<CSR_REGION_ACCESS, "READ", 0, "Engines may read.">;
def REGION_ACCESS_WRITE : CsrBit<CSR_REGION_ACCESS, "WRITE", 1, "Engines may write.">;
def CONTROL_RESUME : CsrBit<CSR_CONTROL, "RESUME", 1,
                            "Clears HALTED so that the doorbell is served again; the ring "
                            "indices and counters are kept (a driver first sets RING_TAIL to "
                            "RING_HEAD to drop what followed the HALT).">;
