// Constants of the RTL that are not part of the ISA package: fault codes
// and the numbering of the memory port's users.
/* verilator lint_off UNUSEDPARAM */ // a library of constants
package npu_pkg;

  // Fault codes, equal to npu::mem::FaultCode (memory/include/npu/mem/fault.h)
  // because the runtime reads them from ERROR_CODE as that enum;
  // rtl_device_test checks each against the C++ values.
  localparam logic [3:0] FAULT_NONE = 4'd0;
  localparam logic [3:0] FAULT_UNMAPPED = 4'd1;
  localparam logic [3:0] FAULT_PERMISSION = 4'd2;
  localparam logic [3:0] FAULT_OUT_OF_REGION = 4'd3;
  localparam logic [3:0] FAULT_MISALIGNED = 4'd4;
  localparam logic [3:0] FAULT_INVALID_OPERAND = 4'd5;
  localparam logic [3:0] FAULT_UNKNOWN_OPCODE = 4'd6;
  localparam logic [3:0] FAULT_RESERVED_BITS = 4'd7;
  localparam logic [3:0] FAULT_OVERLAP = 4'd8;
  localparam logic [3:0] FAULT_INDEX_OUT_OF_RANGE = 4'd9;

  // Which unit drives the shared memory port.
  localparam logic [1:0] PORT_FETCH = 2'd0;
  localparam logic [1:0] PORT_DMA = 2'd1;
  localparam logic [1:0] PORT_MATRIX = 2'd2;
  localparam logic [1:0] PORT_VECTOR = 2'd3;

  // What a vector lane's unit computes in a cycle (npu_vector_lane).
  localparam logic [1:0] LANE_WORD = 2'd0;     // a ROM word
  localparam logic [1:0] LANE_REDUCE = 2'd1;   // accumulator (+) the step's source
  localparam logic [1:0] LANE_TREE = 2'd2;     // a level of the reduction tree

endpackage
/* verilator lint_on UNUSEDPARAM */
