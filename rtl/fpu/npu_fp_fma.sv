// Fused multiply-add a * b + c on binary32, one rounding, combinational
// (docs/arith.md §1-2). It is the only adder and multiplier of the design:
// fadd is fma(a, 1, b), fsub fma(a, 1, -b) and fmul fma(a, b, -0), which
// equal the separately rounded operations bit for bit (a product times one
// is exact; adding -0 changes neither a non-zero sum nor the sign rules of
// a zero one).
//
// The exact sum is formed in a 104-bit window: the 48-bit product sits at
// bits 30..77 and c is shifted to its place (c's exponent minus the
// product's, d, between -30 and 49). Below -30, c lies entirely under the
// product's round bit and only its non-zero-ness matters (a sticky bit at
// bit 0). From 50 on, the product is below a quarter of c's ulp and the
// result is c itself.
module npu_fp_fma (
  input  logic [31:0] a,
  input  logic [31:0] b,
  input  logic [31:0] c,
  output logic [31:0] result
);

  localparam int unsigned WINDOW = 104;

  function automatic logic [6:0] leading_zeros(input logic [WINDOW-1:0] v);
    leading_zeros = 7'(WINDOW);
    for (int i = 0; i < WINDOW; i++)
      if (v[i]) leading_zeros = 7'(WINDOW - 1 - i);
  endfunction

  logic a_nan, b_nan, c_nan, a_inf, b_inf, c_inf, a_zero, b_zero, c_zero;
  logic product_sign, product_zero;
  logic [47:0] product;
  logic signed [11:0] c_offset;      // d: c's exponent minus the product's, in bits
  logic [WINDOW-1:0] product_window, c_window, magnitude, normalised;
  logic result_sign;
  logic [6:0] zeros;
  logic signed [11:0] exponent;

  assign a_nan = npu_fp_pkg::fp_is_nan(a);
  assign b_nan = npu_fp_pkg::fp_is_nan(b);
  assign c_nan = npu_fp_pkg::fp_is_nan(c);
  assign a_inf = npu_fp_pkg::fp_is_inf(a);
  assign b_inf = npu_fp_pkg::fp_is_inf(b);
  assign c_inf = npu_fp_pkg::fp_is_inf(c);
  assign a_zero = npu_fp_pkg::fp_is_zero(a);
  assign b_zero = npu_fp_pkg::fp_is_zero(b);
  assign c_zero = npu_fp_pkg::fp_is_zero(c);
  assign product_sign = a[31] ^ b[31];
  assign product_zero = a_zero || b_zero;
  assign product = {1'b1, a[22:0]} * {1'b1, b[22:0]};
  assign c_offset = $signed({4'd0, c[30:23]}) - $signed({4'd0, a[30:23]}) -
                    $signed({4'd0, b[30:23]}) + 12'sd150;

  always_comb begin
    product_window = {26'd0, product, 30'd0};
    if (c_zero) c_window = '0;
    else if (c_offset < -12'sd30) c_window = {{(WINDOW - 1) {1'b0}}, 1'b1};
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

    zeros = leading_zeros(magnitude);
    normalised = magnitude << zeros;
    // The leading one is bit 103 - zeros and bit 0 is worth 2^(ea + eb - 330)
    // (the product of the 24-bit significands is worth 2^(ea + eb - 300) and
    // sits 30 bits up), so the biased exponent is ea + eb - zeros - 100.
    exponent = $signed({4'd0, a[30:23]}) + $signed({4'd0, b[30:23]}) -
               $signed({5'd0, zeros}) - 12'sd100;

    if (a_nan || b_nan || c_nan) result = npu_fp_pkg::FP_CANONICAL_NAN;
    else if (a_inf || b_inf) begin
      if (product_zero || (c_inf && c[31] != product_sign)) result = npu_fp_pkg::FP_CANONICAL_NAN;
      else result = {product_sign, npu_fp_pkg::FP_POS_INF[30:0]};
    end else if (c_inf) result = c;
    else if (product_zero) result = c_zero ? {product_sign & c[31], 31'd0} : c;
    else if (!c_zero && c_offset > 12'sd49) result = c;
    else if (magnitude == '0) result = 32'd0;
    else
      result = npu_fp_pkg::fp_round_pack(result_sign, exponent,
                             {normalised[WINDOW-1:WINDOW-26], |normalised[WINDOW-27:0]});
  end

endmodule
