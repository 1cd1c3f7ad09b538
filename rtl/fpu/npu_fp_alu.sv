// One vector lane's primitive unit, combinational: npu_fp_alu_pkg::fp_alu,
// every primitive of docs/arith.md §2 selected by the micro-code opcode of
// npu_microcode_pkg. The result is 0 while `enable` is clear; the vector
// engine clears it in cycles that store no result, which a Verilated model
// then skips (the function is evaluated under the condition).
module npu_fp_alu (
  input  logic                                       enable,
  input  logic [npu_microcode_pkg::MC_PRIM_BITS-1:0] prim,
  input  logic [31:0]                                src0,
  input  logic [31:0]                                src1,
  input  logic [31:0]                                src2,
  output logic [31:0]                                result
);

  always_comb begin
    if (enable) result = npu_fp_alu_pkg::fp_alu(prim, src0, src1, src2);
    else result = 32'd0;
  end

endmodule
