// One processing element of the matrix engine's output-stationary array:
// the accumulators of one C element in each of the SLOTS output tiles of a
// block, and the fused multiply-add that updates the one in `slot`,
// acc = fma(a, b, acc), in every cycle `enable` is set. `clear` sets every
// accumulator to +0 and `load[p]` the one in slot `load_slot[p]` to the
// old C (the acc flag): a beat of 2-byte C elements carries up to LOADS
// elements of one PE column, each of a different tile.
module npu_matrix_pe #(
  parameter int unsigned SLOTS = 16,
  parameter int unsigned LOADS = 1
) (
  input  logic        clk,
  input  logic        enable,
  input  logic [$clog2(SLOTS)-1:0] slot,
  input  logic [31:0] a,
  input  logic [31:0] b,
  input  logic        clear,
  input  logic [LOADS-1:0] load,
  input  logic [LOADS*$clog2(SLOTS)-1:0] load_slot,
  input  logic [32*LOADS-1:0] load_value,
  output logic [32*SLOTS-1:0] acc
);

  localparam int unsigned SB = $clog2(SLOTS);

  always_ff @(posedge clk) begin
    if (clear) begin
      acc <= '0;
    end else if (|load) begin
      for (int p = 0; p < LOADS; p++)
        if (load[p]) acc[32*load_slot[SB*p +: SB] +: 32] <= load_value[32*p +: 32];
    end else if (enable) begin
      acc[32*slot +: 32] <= npu_fp_pkg::fp_fma(a, b, acc[32*slot +: 32]);
    end
  end

endmodule
