// The vector lane's primitive unit as a function: every primitive of
// docs/arith.md §2, selected by the micro-code opcode of npu_microcode_pkg.
// Float primitives read denormals as zeros, flush tiny results after
// rounding and return the canonical NaN; integer primitives work on the raw
// 32-bit patterns. npu_fp_alu wraps it as a combinational unit; the vector
// engine calls it in the clocked block that stores the result, so that a
// Verilated model evaluates it only in cycles that use it.
package npu_fp_alu_pkg;

  function automatic logic [31:0] fp_alu(input logic [npu_microcode_pkg::MC_PRIM_BITS-1:0] prim,
                                         input logic [31:0] src0, input logic [31:0] src1,
                                         input logic [31:0] src2);
    logic [31:0] fma_b, fma_c;
    logic any_nan, both_zero;
    logic [31:0] canon0, canon1;
    logic signed [32:0] key0, key1;
    logic [7:0] exp0;
    logic [23:0] sig0, integer_part, fraction, half, rounded;
    logic [4:0] fraction_bits;
    logic [31:0] round_result, f2i_result, f2i_magnitude;
    logic [63:0] product, trunc_magnitude, trunc_value;
    logic [31:0] f2iz_result;
    logic [63:0] f2lz_result;
    logic [63:0] l2f_magnitude;
    logic shift_in_range;

    // fadd, fsub and fmul are the fused unit with b = 1 or c = -0.
    fma_b = src1;
    fma_c = src2;
    unique case (prim)
      npu_microcode_pkg::MC_FADD: begin fma_b = npu_fp_pkg::FP_ONE; fma_c = src1; end
      // -b is b with the sign flipped; a NaN b stays a NaN either way.
      npu_microcode_pkg::MC_FSUB: begin fma_b = npu_fp_pkg::FP_ONE; fma_c = {~src1[31], src1[30:0]}; end
      npu_microcode_pkg::MC_FMUL: fma_c = npu_fp_pkg::FP_NEG_ZERO;
      default: ;
    endcase

    // Comparisons: -0 and +0 (and denormals of either sign) compare equal in
    // flt and fle; fmin/fmax order -0 below +0.
    any_nan = npu_fp_pkg::fp_is_nan(src0) || npu_fp_pkg::fp_is_nan(src1);
    canon0 = npu_fp_pkg::fp_canonical(src0);
    canon1 = npu_fp_pkg::fp_canonical(src1);
    key0 = npu_fp_pkg::fp_order_key(canon0);
    key1 = npu_fp_pkg::fp_order_key(canon1);
    both_zero = npu_fp_pkg::fp_is_zero(src0) && npu_fp_pkg::fp_is_zero(src1);

    // fround and f2i: the nearest integer, ties to even. For 0.5 <= |a| <
    // 2^23 the significand is split at the binary point; larger magnitudes
    // are integral already, smaller ones round to zero.
    exp0 = src0[30:23];
    sig0 = {1'b1, src0[22:0]};
    fraction_bits = 5'(8'd150 - exp0);
    integer_part = sig0 >> fraction_bits;
    fraction = sig0 & ((24'd1 << fraction_bits) - 24'd1);
    half = 24'd1 << (fraction_bits - 5'd1);
    rounded = integer_part + 24'(fraction > half || (fraction == half && integer_part[0]));
    if (npu_fp_pkg::fp_is_nan(src0)) round_result = npu_fp_pkg::FP_CANONICAL_NAN;
    else if (exp0 >= 8'd150) round_result = canon0;
    else if (exp0 < 8'd126) round_result = {src0[31], 31'd0};
    else round_result = rounded == 24'd0 ? {src0[31], 31'd0}
                                          : npu_fp_pkg::fp_from_integer(src0[31], {8'd0, rounded});
    // f2i: below 2^31 the integer is the significand shifted into place.
    if (exp0 >= 8'd150) f2i_magnitude = {8'd0, sig0} << (exp0 - 8'd150);
    else if (exp0 < 8'd126) f2i_magnitude = 32'd0;
    else f2i_magnitude = {8'd0, rounded};
    if (npu_fp_pkg::fp_is_nan(src0)) f2i_result = 32'd0;
    else if (exp0 >= 8'd158) f2i_result = src0[31] ? 32'h8000_0000 : 32'h7fff_ffff;
    else f2i_result = src0[31] ? -f2i_magnitude : f2i_magnitude;

    // The truncating conversions (f2iz, f2lzlo, f2lzhi): the significand
    // shifted into a 64-bit field without rounding; |a| < 1 (and denormals)
    // give 0; the int32 and int64 ranges saturate.
    if (exp0 >= 8'd150) trunc_magnitude = {40'd0, sig0} << (exp0 - 8'd150);
    else if (exp0 < 8'd127) trunc_magnitude = 64'd0;
    else trunc_magnitude = {40'd0, sig0 >> (8'd150 - exp0)};
    trunc_value = src0[31] ? -trunc_magnitude : trunc_magnitude;
    if (npu_fp_pkg::fp_is_nan(src0)) f2iz_result = 32'd0;
    else if (exp0 >= 8'd158) f2iz_result = src0[31] ? 32'h8000_0000 : 32'h7fff_ffff;
    else f2iz_result = trunc_value[31:0];
    if (npu_fp_pkg::fp_is_nan(src0)) f2lz_result = 64'd0;
    else if (exp0 >= 8'd190)
      f2lz_result = src0[31] ? 64'h8000_0000_0000_0000 : 64'h7fff_ffff_ffff_ffff;
    else f2lz_result = trunc_value;

    // One 32 x 32 multiplier for imul (low word) and imulhu (high word).
    product = {32'd0, src0} * {32'd0, src1};
    // Variable shifts: amounts from 32 up shift every bit out.
    shift_in_range = src1 < 32'd32;
    // l2f: the int64 (src1:src0) as sign and magnitude; -2^63 keeps its
    // bits, which read as the magnitude 2^63.
    l2f_magnitude = src1[31] ? -{src1, src0} : {src1, src0};

    unique case (prim)
      npu_microcode_pkg::MC_FADD, npu_microcode_pkg::MC_FSUB, npu_microcode_pkg::MC_FMUL,
      npu_microcode_pkg::MC_FFMA: fp_alu = npu_fp_pkg::fp_fma(src0, fma_b, fma_c);
      npu_microcode_pkg::MC_FMIN:
        fp_alu = any_nan ? npu_fp_pkg::FP_CANONICAL_NAN : (key0 <= key1 ? canon0 : canon1);
      npu_microcode_pkg::MC_FMAX:
        fp_alu = any_nan ? npu_fp_pkg::FP_CANONICAL_NAN : (key0 >= key1 ? canon0 : canon1);
      npu_microcode_pkg::MC_FABS:
        fp_alu = npu_fp_pkg::fp_is_nan(src0) ? npu_fp_pkg::FP_CANONICAL_NAN : {1'b0, canon0[30:0]};
      npu_microcode_pkg::MC_FNEG:
        fp_alu = npu_fp_pkg::fp_is_nan(src0) ? npu_fp_pkg::FP_CANONICAL_NAN
                                            : {~canon0[31], canon0[30:0]};
      npu_microcode_pkg::MC_FLT: fp_alu = {32{!any_nan && !both_zero && key0 < key1}};
      npu_microcode_pkg::MC_FLE: fp_alu = {32{!any_nan && (both_zero || key0 <= key1)}};
      npu_microcode_pkg::MC_FISNAN: fp_alu = {32{npu_fp_pkg::fp_is_nan(src0)}};
      npu_microcode_pkg::MC_FROUND: fp_alu = round_result;
      npu_microcode_pkg::MC_F2I: fp_alu = f2i_result;
      // A two's-complement int32 as sign and magnitude; -2^31 keeps its bits.
      npu_microcode_pkg::MC_I2F: fp_alu = npu_fp_pkg::fp_from_integer(src0[31], src0[31] ? -src0 : src0);
      npu_microcode_pkg::MC_IADD: fp_alu = src0 + src1;
      npu_microcode_pkg::MC_ISUB: fp_alu = src0 - src1;
      npu_microcode_pkg::MC_ISHL: fp_alu = src0 << src1[4:0];
      npu_microcode_pkg::MC_ISHR: fp_alu = src0 >> src1[4:0];
      npu_microcode_pkg::MC_ISRA: fp_alu = $unsigned($signed(src0) >>> src1[4:0]);
      npu_microcode_pkg::MC_IAND: fp_alu = src0 & src1;
      npu_microcode_pkg::MC_IOR: fp_alu = src0 | src1;
      npu_microcode_pkg::MC_IXOR: fp_alu = src0 ^ src1;
      npu_microcode_pkg::MC_SEL: fp_alu = (src0 & src1) | (~src0 & src2);
      npu_microcode_pkg::MC_IMUL: fp_alu = product[31:0];
      npu_microcode_pkg::MC_IMULHU: fp_alu = product[63:32];
      npu_microcode_pkg::MC_IEQ: fp_alu = {32{src0 == src1}};
      npu_microcode_pkg::MC_ILT: fp_alu = {32{$signed(src0) < $signed(src1)}};
      npu_microcode_pkg::MC_ILTU: fp_alu = {32{src0 < src1}};
      npu_microcode_pkg::MC_ISHLV: fp_alu = shift_in_range ? src0 << src1[4:0] : 32'd0;
      npu_microcode_pkg::MC_ISHRV: fp_alu = shift_in_range ? src0 >> src1[4:0] : 32'd0;
      npu_microcode_pkg::MC_ISRAV:
        fp_alu = $unsigned($signed(src0) >>> (shift_in_range ? src1[4:0] : 5'd31));
      npu_microcode_pkg::MC_L2F: fp_alu = npu_fp_pkg::fp_from_integer64(src1[31], l2f_magnitude);
      npu_microcode_pkg::MC_F2IZ: fp_alu = f2iz_result;
      npu_microcode_pkg::MC_F2LZLO: fp_alu = f2lz_result[31:0];
      npu_microcode_pkg::MC_F2LZHI: fp_alu = f2lz_result[63:32];
      default: fp_alu = 32'd0;
    endcase
  endfunction

endpackage
