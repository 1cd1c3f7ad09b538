// The binary32 arithmetic of docs/arith.md §1-2 as functions: operand
// classification with denormals-are-zero, the canonical NaN, the one
// rounding step every unit ends with (round to nearest even with an
// unbounded exponent, then flush results below 2^-126 and overflow results
// of 2^128 or more), the integer-to-float conversion and the fused
// multiply-add. Functions rather than modules so that a unit can evaluate
// them inside the clocked block that consumes the result (the matrix PEs):
// the hardware is the same, and Verilator then skips the logic in cycles
// whose result is not used.
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

  // sign * magnitude rounded to binary32 (the integer-to-float conversions).
  function automatic logic [31:0] fp_from_integer(input logic sign, input logic [31:0] magnitude);
    logic [4:0] zeros;
    logic [31:0] normalised;
    // A logarithmic shifter finds the leading one.
    normalised = magnitude;
    zeros = '0;
    if (normalised[31:16] == '0) begin normalised = normalised << 16; zeros[4] = 1'b1; end
    if (normalised[31:24] == '0) begin normalised = normalised << 8; zeros[3] = 1'b1; end
    if (normalised[31:28] == '0) begin normalised = normalised << 4; zeros[2] = 1'b1; end
    if (normalised[31:30] == '0) begin normalised = normalised << 2; zeros[1] = 1'b1; end
    if (!normalised[31]) begin normalised = normalised << 1; zeros[0] = 1'b1; end
    if (magnitude == 32'd0) fp_from_integer = 32'd0;
    else
      fp_from_integer = fp_round_pack(sign, 12'sd158 - $signed({7'd0, zeros}),
                                      {normalised[31:6], |normalised[5:0]});
  endfunction

  // sign * magnitude rounded to binary32 for a 64-bit magnitude (l2f, the
  // int64 conversion): the same logarithmic normaliser, six levels.
  function automatic logic [31:0] fp_from_integer64(input logic sign,
                                                    input logic [63:0] magnitude);
    logic [5:0] zeros;
    logic [63:0] normalised;
    normalised = magnitude;
    zeros = '0;
    if (normalised[63:32] == '0) begin normalised = normalised << 32; zeros[5] = 1'b1; end
    if (normalised[63:48] == '0) begin normalised = normalised << 16; zeros[4] = 1'b1; end
    if (normalised[63:56] == '0) begin normalised = normalised << 8; zeros[3] = 1'b1; end
    if (normalised[63:60] == '0) begin normalised = normalised << 4; zeros[2] = 1'b1; end
    if (normalised[63:62] == '0) begin normalised = normalised << 2; zeros[1] = 1'b1; end
    if (!normalised[63]) begin normalised = normalised << 1; zeros[0] = 1'b1; end
    if (magnitude == 64'd0) fp_from_integer64 = 32'd0;
    else
      fp_from_integer64 = fp_round_pack(sign, 12'sd190 - $signed({6'd0, zeros}),
                                        {normalised[63:38], |normalised[37:0]});
  endfunction

  // Fused multiply-add a * b + c, one rounding (docs/arith.md §1-2).
  //
  // The exact sum is formed in a 104-bit window: the 48-bit product sits at
  // bits 30..77 and c is shifted to its place (c's exponent minus the
  // product's, d, between -30 and 49). Below -30, c lies entirely under the
  // product's round bit and only its non-zero-ness matters (a sticky bit at
  // bit 0). From 50 on, the product is below a quarter of c's ulp and the
  // result is c itself.
  function automatic logic [31:0] fp_fma(input logic [31:0] a, input logic [31:0] b,
                                         input logic [31:0] c);
    logic product_sign, product_zero, c_zero, result_sign;
    logic [47:0] product;
    logic signed [11:0] c_offset;    // d: c's exponent minus the product's, in bits
    logic [103:0] product_window, c_window, magnitude, normalised;
    logic [127:0] x;
    logic [6:0] zeros;
    logic signed [11:0] exponent;

    product_sign = a[31] ^ b[31];
    product_zero = fp_is_zero(a) || fp_is_zero(b);
    c_zero = fp_is_zero(c);
    product = {1'b1, a[22:0]} * {1'b1, b[22:0]};
    c_offset = $signed({4'd0, c[30:23]}) - $signed({4'd0, a[30:23]}) -
               $signed({4'd0, b[30:23]}) + 12'sd150;
    product_window = {26'd0, product, 30'd0};
    if (c_zero) c_window = '0;
    else if (c_offset < -12'sd30) c_window = 104'd1;
    else c_window = {80'd0, 1'b1, c[22:0]} << (c_offset + 12'sd30);

    // Sign-magnitude sum; an exact cancellation is +0.
    if (product_sign == c[31] || c_zero) begin
      magnitude = product_window + c_window;
      result_sign = product_sign;
    end else if (product_window >= c_window) begin
      magnitude = product_window - c_window;
      result_sign = product_sign;
    end else begin
      magnitude = c_window - product_window;
      result_sign = c[31];
    end

    // Normalise by a logarithmic shifter: halve the search each stage.
    x = {magnitude, 24'd0};
    zeros = '0;
    if (x[127:64] == '0) begin x = x << 64; zeros[6] = 1'b1; end
    if (x[127:96] == '0) begin x = x << 32; zeros[5] = 1'b1; end
    if (x[127:112] == '0) begin x = x << 16; zeros[4] = 1'b1; end
    if (x[127:120] == '0) begin x = x << 8; zeros[3] = 1'b1; end
    if (x[127:124] == '0) begin x = x << 4; zeros[2] = 1'b1; end
    if (x[127:126] == '0) begin x = x << 2; zeros[1] = 1'b1; end
    if (!x[127]) begin x = x << 1; zeros[0] = 1'b1; end
    normalised = x[127:24];
    // The leading one is bit 103 - zeros and bit 0 is worth 2^(ea + eb - 330)
    // (the product of the 24-bit significands is worth 2^(ea + eb - 300) and
    // sits 30 bits up), so the biased exponent is ea + eb - zeros - 100.
    exponent = $signed({4'd0, a[30:23]}) + $signed({4'd0, b[30:23]}) -
               $signed({5'd0, zeros}) - 12'sd100;

    if (fp_is_nan(a) || fp_is_nan(b) || fp_is_nan(c)) fp_fma = FP_CANONICAL_NAN;
    else if (fp_is_inf(a) || fp_is_inf(b)) begin
      if (product_zero || (fp_is_inf(c) && c[31] != product_sign)) fp_fma = FP_CANONICAL_NAN;
      else fp_fma = {product_sign, FP_POS_INF[30:0]};
    end else if (fp_is_inf(c)) fp_fma = c;
    else if (product_zero) fp_fma = c_zero ? {product_sign & c[31], 31'd0} : c;
    else if (!c_zero && c_offset > 12'sd49) fp_fma = c;
    else if (magnitude == '0) fp_fma = 32'd0;
    else fp_fma = fp_round_pack(result_sign, exponent, {normalised[103:78], |normalised[77:0]});
  endfunction

endpackage
/* verilator lint_on UNUSEDPARAM */
