//===- faults.td - Fault codes -------------------------------------------===//
//
// The codes a device reports in ERROR_CODE, equal to npu::mem::FaultCode
// (memory/include/npu/mem/fault.h, which tests/python/test_rtl_generated.py
// compares with these records). npu-tblgen generates the RTL's fault_e
// (npu_isa_pkg) from them.
//
//===----------------------------------------------------------------------===//

def F_None            : FaultCode<"none", 0, "no fault">;
def F_Unmapped        : FaultCode<"unmapped", 1, "the address is in no region of the address map">;
def F_Permission      : FaultCode<"permission", 2, "the region forbids this access">;
def F_OutOfRegion     : FaultCode<"out_of_region", 3, "the range runs past its region's end">;
def F_Misaligned      : FaultCode<"misaligned", 4, "an operand address violates its alignment">;
def F_InvalidOperand  : FaultCode<"invalid_operand", 5, "an operand value is out of its range">;
def F_UnknownOpcode   : FaultCode<"unknown_opcode", 6,
                                  "the opcode names no instruction (an illegal instruction)">;
def F_ReservedBits    : FaultCode<"reserved_bits", 7, "a reserved packet field is non-zero">;
def F_Overlap         : FaultCode<"overlap", 8, "operand ranges overlap where forbidden">;
def F_IndexOutOfRange : FaultCode<"index_out_of_range", 9, "a data-dependent index is out of range">;
def F_Timeout         : FaultCode<"timeout", 10, "no progress within the allowed time (host)">;
def F_Divergence      : FaultCode<"divergence", 11, "co-simulation: ISS and RTL disagree (host)">;
