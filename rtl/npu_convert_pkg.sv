// The storage types' conversions to and from a vector lane's 32-bit form
// (docs/types.md §2), bit for bit those of npu/arith/convert.h: bf16 and
// f16 widen exactly to binary32 and narrow with one rounding to nearest
// even (f16 with gradual underflow, both overflowing to an infinity, NaNs
// canonical); b8 reads as a mask and stores 0 or 1. Functions, like
// npu_fp_pkg, so that a stream evaluates them in the block that consumes
// the result.
package npu_convert_pkg;

  localparam logic [31:0] LANE_NAN = 32'h7fc0_0000;
  localparam logic [15:0] BF16_NAN = 16'h7fc0;
  localparam logic [15:0] F16_NAN = 16'h7e00;
  localparam logic [14:0] F16_INF_MAGNITUDE = 15'h7c00;

  // The binary32 exponents that bound f16's ranges: 2^-14 (the smallest
  // normal f16), 2^16 (every finite value from there on rounds to an
  // infinity) and 2^-25 (half the smallest subnormal: anything below
  // rounds to a zero).
  localparam logic [7:0] F16_MIN_NORMAL_EXP = 8'd113;
  localparam logic [7:0] F16_OVERFLOW_EXP = 8'd143;
  localparam logic [7:0] F16_MIN_ROUNDING_EXP = 8'd102;

  function automatic logic is_nan32(input logic [30:0] magnitude);
    is_nan32 = magnitude[30:23] == 8'hff && magnitude[22:0] != 23'd0;
  endfunction

  // bf16 is binary32's high half: widening is exact.
  function automatic logic [31:0] widen_bf16(input logic [15:0] h);
    widen_bf16 = {h, 16'd0};
  endfunction

  // Nearest bf16, ties to even: the high half plus one when the low half
  // is above half a unit, or exactly half and the high half odd. A carry
  // out of the fraction moves to the next binade, from the largest finite
  // value to an infinity.
  function automatic logic [15:0] narrow_bf16(input logic [31:0] x);
    logic round_up;
    round_up = x[15] && (x[14:0] != 15'd0 || x[16]);
    if (is_nan32(x[30:0])) narrow_bf16 = BF16_NAN;
    else narrow_bf16 = x[31:16] + {15'd0, round_up};
  endfunction

  // Every f16 is a binary32: a subnormal's leading one is moved to the
  // implicit position by a 10-bit logarithmic shifter and its exponent
  // lowered by the shift.
  function automatic logic [31:0] widen_f16(input logic [15:0] h);
    logic [4:0] exponent;
    logic [9:0] fraction, normalised;
    logic [3:0] zeros;
    exponent = h[14:10];
    fraction = h[9:0];
    normalised = fraction;
    zeros = '0;
    if (normalised[9:2] == '0) begin normalised = normalised << 8; zeros[3] = 1'b1; end
    if (normalised[9:6] == '0) begin normalised = normalised << 4; zeros[2] = 1'b1; end
    if (normalised[9:8] == '0) begin normalised = normalised << 2; zeros[1] = 1'b1; end
    if (!normalised[9]) begin normalised = normalised << 1; zeros[0] = 1'b1; end
    if (exponent == 5'h1f) widen_f16 = fraction != '0 ? LANE_NAN : {h[15], 31'h7f80_0000};
    else if (exponent != 5'd0) widen_f16 = {h[15], 8'd112 + {3'd0, exponent}, fraction, 13'd0};
    else if (fraction == '0) widen_f16 = {h[15], 31'd0};
    // The leading one at bit 9 - zeros: value 2^(-15 - zeros), biased 112 - zeros.
    else widen_f16 = {h[15], 8'd112 - {4'd0, zeros}, normalised[8:0], 14'd0};
  endfunction

  // Nearest f16, ties to even, with gradual underflow; from 65520 up an
  // infinity; any NaN gives F16_NAN; a binary32 denormal gives a zero.
  //
  // The significand (implicit one at bit 23) is shifted right by 13 for a
  // normal result and by up to 11 more below 2^-14, where the result's unit
  // is 2^-24 whatever the exponent; the bits shifted out of the 24 are
  // gathered into a sticky bit. The rounded quotient q (11 bits and a
  // carry) is added to the biased exponent minus one, so that q's implicit
  // one completes the exponent, a carry out of q moves to the next binade
  // (or from the largest finite value to the infinity) and a subnormal that
  // rounds up to 2^-14 becomes the smallest normal.
  function automatic logic [15:0] narrow_f16(input logic [31:0] x);
    logic [7:0] exponent;
    logic [3:0] extra_shift;
    logic [23:0] significand;
    logic normal_result, sticky, round_up;
    logic [11:0] q;  // one bit more than f16's significand: its carry
    logic [4:0] exponent_base;
    logic [14:0] magnitude;

    exponent = x[30:23];
    significand = {1'b1, x[22:0]};
    normal_result = exponent >= F16_MIN_NORMAL_EXP;
    // Up to 11 where the result is not a zero (the other shifts are unused).
    extra_shift = normal_result ? 4'd0 : 4'(F16_MIN_NORMAL_EXP - exponent);
    sticky = 1'b0;
    if (extra_shift[3]) begin
      sticky = significand[7:0] != '0;
      significand = significand >> 8;
    end
    if (extra_shift[2]) begin
      sticky = sticky || significand[3:0] != '0;
      significand = significand >> 4;
    end
    if (extra_shift[1]) begin
      sticky = sticky || significand[1:0] != '0;
      significand = significand >> 2;
    end
    if (extra_shift[0]) begin
      sticky = sticky || significand[0];
      significand = significand >> 1;
    end
    sticky = sticky || significand[11:0] != '0;
    round_up = significand[12] && (sticky || significand[13]);
    q = {1'b0, significand[23:13]} + {11'd0, round_up};
    exponent_base = normal_result ? 5'(exponent - F16_MIN_NORMAL_EXP) : 5'd0;
    magnitude = {exponent_base, 10'd0} + {3'd0, q};

    if (is_nan32(x[30:0])) narrow_f16 = F16_NAN;
    else if (exponent >= F16_OVERFLOW_EXP) narrow_f16 = {x[31], F16_INF_MAGNITUDE};
    else if (exponent < F16_MIN_ROUNDING_EXP) narrow_f16 = {x[31], 15'd0};
    else narrow_f16 = {x[31], magnitude};
  endfunction

  // b8: a nonzero byte is true; a lane holds a mask (all ones or zero).
  function automatic logic [31:0] widen_b8(input logic [7:0] b);
    widen_b8 = {32{b != 8'd0}};
  endfunction

  function automatic logic [7:0] narrow_b8(input logic [31:0] mask);
    narrow_b8 = {7'd0, mask != 32'd0};
  endfunction

endpackage
