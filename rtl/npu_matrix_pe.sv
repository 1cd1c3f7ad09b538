// One processing element of the matrix engine's output-stationary array:
// the accumulators of one C element in each of the SLOTS output tiles of a
// block, and the fused multiply-add that updates the one in `slot`,
// acc = fma(a, b, acc), in every cycle `enable` is set. `clear` sets every
// accumulator to +0 and `load` one of them to the old C (the acc flag).
module npu_matrix_pe #(
  parameter int unsigned SLOTS = 16
) (
  input  logic        clk,
  input  logic        enable,
  input  logic [$clog2(SLOTS)-1:0] slot,
  input  logic [31:0] a,
  input  logic [31:0] b,
  input  logic        clear,
  input  logic        load,
  input  logic [$clog2(SLOTS)-1:0] load_slot,
  input  logic [31:0] load_value,
  output logic [32*SLOTS-1:0] acc
);

  always_ff @(posedge clk) begin
    if (clear) acc <= '0;
    else if (load) acc[32*load_slot +: 32] <= load_value;
    else if (enable) acc[32*slot +: 32] <= npu_fp_pkg::fp_fma(a, b, acc[32*slot +: 32]);
  end

endmodule
