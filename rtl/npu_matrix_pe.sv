// One processing element of the matrix engine's output-stationary array:
// the accumulator of one C element and the fused multiply-add that updates
// it, acc = fma(a, b, acc), in every cycle `enable` is set. `load` sets the
// accumulator instead (+0, or the old C with the acc flag).
module npu_matrix_pe (
  input  logic        clk,
  input  logic        enable,
  input  logic [31:0] a,
  input  logic [31:0] b,
  input  logic        load,
  input  logic [31:0] load_value,
  output logic [31:0] acc
);

  always_ff @(posedge clk) begin
    if (load) acc <= load_value;
    else if (enable) acc <= npu_fp_pkg::fp_fma(a, b, acc);
  end

endmodule
