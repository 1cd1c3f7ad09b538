/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off DECLFILENAME */
module npu_vector (
  input  logic        clk, input logic rst_n, input logic soft_reset,
  input  logic        start,
  input  logic [511:0] packet,
  output logic        done, output logic fault, output logic [3:0] fault_code, output logic [63:0] fault_addr,
  output logic [4:0]  dbg_state,
  output logic        mem_req_valid, output logic mem_req_write, output logic [63:0] mem_req_addr, output logic [31:0] mem_req_bytes,
  input  logic        mem_req_ready, input logic mem_rd_valid, input logic [63:0] mem_rd_addr, input logic [255:0] mem_rd_data,
  input logic [31:0] mem_rd_strb, input logic [63:0] mem_wr_addr, output logic [255:0] mem_wr_data,
  input  logic        mem_done, input logic mem_error, input logic [3:0] mem_error_code, input logic [63:0] mem_error_addr);
  always_ff @(posedge clk or negedge rst_n) if (!rst_n) done <= 0; else done <= start;
  assign fault = 1; assign fault_code = 6; assign fault_addr = 0; assign dbg_state = 0;
  assign mem_req_valid = 0; assign mem_req_write = 0; assign mem_req_addr = 0; assign mem_req_bytes = 0; assign mem_wr_data = 0;
endmodule
