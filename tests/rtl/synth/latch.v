// Must fail the synthesis check: q keeps its value while en is low, which
// is a latch.
module npu_synth_latch (
  input  wire en,
  input  wire d,
  output reg  q
);
  always @* if (en) q = d;
endmodule
