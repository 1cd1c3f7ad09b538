// Must fail the synthesis check: x and y depend on each other without a
// register between them.
module npu_synth_loop (
  input  logic a,
  output logic y
);
  logic x;
  assign x = a ^ y;
  assign y = x & a;
endmodule
