// The storage conversions of npu_convert_pkg side by side as one
// combinational module, the top of the converter tests (rtl_convert_test)
// and of their gate counts (docs/rtl.md): every function on the same
// inputs in one evaluation.
module npu_convert_wrapper (
  input  logic [15:0] half_bits,
  input  logic [31:0] lane,
  input  logic [7:0]  byte_bits,
  output logic [31:0] widened_bf16,
  output logic [31:0] widened_f16,
  output logic [31:0] widened_b8,
  output logic [15:0] narrowed_bf16,
  output logic [15:0] narrowed_f16,
  output logic [7:0]  narrowed_b8
);

  assign widened_bf16 = npu_convert_pkg::widen_bf16(half_bits);
  assign widened_f16 = npu_convert_pkg::widen_f16(half_bits);
  assign widened_b8 = npu_convert_pkg::widen_b8(byte_bits);
  assign narrowed_bf16 = npu_convert_pkg::narrow_bf16(lane);
  assign narrowed_f16 = npu_convert_pkg::narrow_f16(lane);
  assign narrowed_b8 = npu_convert_pkg::narrow_b8(lane);

endmodule
