// Types of the RTL that are not part of the ISA package: the numbering of
// the memory port's users and the vector lanes' unit modes. The fault codes
// are npu_isa_pkg::fault_e, generated from isa/faults.td.
package npu_pkg;

  // Which unit drives the shared memory port.
  typedef enum logic [1:0] {
    PORT_FETCH = 2'd0,
    PORT_DMA = 2'd1,
    PORT_MATRIX = 2'd2,
    PORT_VECTOR = 2'd3
  } port_e;

  // What a vector lane's unit computes in a cycle (npu_vector_lane).
  typedef enum logic [1:0] {
    LANE_WORD = 2'd0,     // a ROM word
    LANE_REDUCE = 2'd1,   // accumulator (+) the step's source
    LANE_TREE = 2'd2      // a level of the reduction tree
  } lane_mode_e;

endpackage
