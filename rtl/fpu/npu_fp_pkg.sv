// Shared pieces of the binary32 units (docs/arith.md §1): operand
// classification with denormals-are-zero, the canonical NaN, and the one
// rounding step every unit ends with (round to nearest even with an
// unbounded exponent, then flush results below 2^-126 and overflow results
// of 2^128 or more).
/* verilator lint_off UNUSEDPARAM */ // a library of constants
package npu_fp_pkg;

  localparam logic [31:0] FP_CANONICAL_NAN = 32'h7fc0_0000;
  localparam logic [31:0] FP_POS_INF = 32'h7f80_0000;
  localparam logic [31:0] FP_NEG_ZERO = 32'h8000_0000;
  localparam logic [31:0] FP_ONE = 32'h3f80_0000;

  // The class tests look at some fields of a whole float only.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic fp_is_nan(input logic [31:0] a);
    fp_is_nan = a[30:23] == 8'hff && a[22:0] != 23'd0;
  endfunction

  function automatic logic fp_is_inf(input logic [31:0] a);
    fp_is_inf = a[30:23] == 8'hff && a[22:0] == 23'd0;
  endfunction

  // Zeros and denormals alike: both are zeros to every primitive (DAZ).
  function automatic logic fp_is_zero(input logic [31:0] a);
    fp_is_zero = a[30:23] == 8'h00;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // What a register holds after a float primitive: denormals become a zero
  // of the same sign, every NaN becomes the canonical NaN.
  function automatic logic [31:0] fp_canonical(input logic [31:0] a);
    if (fp_is_nan(a)) fp_canonical = FP_CANONICAL_NAN;
    else if (fp_is_zero(a)) fp_canonical = {a[31], 31'd0};
    else fp_canonical = a;
  endfunction

  // Total order of canonical non-NaN values with -0 below +0, as a signed
  // key: larger key, larger value.
  function automatic logic signed [32:0] fp_order_key(input logic [31:0] a);
    if (a[31]) fp_order_key = -$signed({2'b00, a[30:0]}) - 33'sd1;
    else fp_order_key = $signed({2'b00, a[30:0]});
  endfunction

  // Rounds a normalised significand and packs it. `sig` has its leading one
  // at bit 26 (bits 26..3 are kept, bit 2 is the round bit, bits 1..0 are
  // sticky); `exp` is the biased exponent of that leading bit, unbounded.
  // The magnitude must be non-zero.
  function automatic logic [31:0] fp_round_pack(input logic sign, input logic signed [11:0] exp,
                                                input logic [26:0] sig);
    logic [24:0] kept;
    logic signed [11:0] e;
    logic round_up;
    round_up = sig[2] && (sig[1] || sig[0] || sig[3]);
    kept = {1'b0, sig[26:3]} + {24'd0, round_up};
    e = exp;
    if (kept[24]) begin
      // 1.111...1 rounded up to 10.000...0: renormalise.
      kept = kept >> 1;
      e = e + 12'sd1;
    end
    if (e >= 12'sd255) fp_round_pack = {sign, FP_POS_INF[30:0]};
    else if (e <= 12'sd0) fp_round_pack = {sign, 31'd0};
    else fp_round_pack = {sign, e[7:0], kept[22:0]};
  endfunction

  // Number of leading zeros of a 32-bit value (32 for zero).
  function automatic logic [5:0] fp_clz32(input logic [31:0] v);
    fp_clz32 = 6'd32;
    for (int i = 0; i < 32; i++)
      if (v[i]) fp_clz32 = 6'(31 - i);
  endfunction

  // sign * magnitude rounded to binary32 (the integer-to-float conversions).
  function automatic logic [31:0] fp_from_integer(input logic sign, input logic [31:0] magnitude);
    logic [5:0] zeros;
    logic [31:0] normalised;
    zeros = fp_clz32(magnitude);
    normalised = magnitude << zeros;
    if (magnitude == 32'd0) fp_from_integer = 32'd0;
    else
      fp_from_integer = fp_round_pack(sign, 12'sd158 - $signed({6'd0, zeros}),
                                      {normalised[31:6], |normalised[5:0]});
  endfunction

endpackage
/* verilator lint_on UNUSEDPARAM */
