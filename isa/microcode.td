//===- microcode.td - Micro-programs of the vector lanes -------------------===//
//
// Every function the vector engine evaluates per element that is not a
// single primitive: straight-line programs of the primitives of base.td.
// npu-tblgen turns them into C++ function templates for the ISS
// (--gen-microcode-cpp) and into the vector engine's micro-code ROM
// (--gen-microcode-rom); docs/arith.md explains each algorithm and its
// measured error. Polynomial coefficients come from
// scripts/fit-microcode-polynomials.py.
//
// Shared step sequences are lists with fixed register names; a program that
// includes one must not use those names for anything else.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// exp
//===----------------------------------------------------------------------===//

// exp(xc) for xc in [-88, 89] (the caller clamps; a NaN passes through).
// n = floor(xc / ln 2), computed as round(xc * log2(e) - 0.49999997) by adding
// 1.5 * 2^23 + Bias (the sum's low bits are then n + Bias); r = xc - n ln 2
// in [0, ln 2) by Cody-Waite with ln 2 = 0x3f317200 + 0x35bfbe8e (the high
// part has 15 significant bits, so n * high is exact); exp(r) by a degree-6
// polynomial; the result is exp(r) * 2^(n + Bias - 127), the scale being
// (n + Bias) << 23. The caller's clamps keep n + Bias in [0, 255]: 0 makes
// the scale +0 (the result underflows), 255 makes it +inf (it overflows).
// Reads $xc; writes $u $t $n $r.
class ExpReduceSteps<int magic> {
  list<dag> Steps = [
    (ffma:$u $xc, 0x3fb8aa3b, 0xbeffffff), // xc * log2(e) - 0.49999997
    (fadd:$t $u, magic),                   // + 1.5 * 2^23 + Bias: rounds to an integer
    (fsub:$n $t, magic),                   // n, exactly
    (ffma:$r $n, 0xbf317200, $xc),         // xc - n * ln2_hi, exact
    (ffma:$r $n, 0xb5bfbe8e, $r)           // - n * ln2_lo
  ];
}
defvar ExpReduce = ExpReduceSteps<0x4b40007f>.Steps; // Bias 127: e^xc itself
// Reads $r; writes $p = the polynomial for exp(r) without its last step.
defvar ExpPolynomial = [
  (ffma:$p $r, 0x3aff2aa5, 0x3bff7cdd),
  (ffma:$p $p, $r, 0x3d2baae9),
  (ffma:$p $p, $r, 0x3e2a9c42),
  (ffma:$p $p, $r, 0x3f00005d),
  (ffma:$p $p, $r, 0x3f7ffffd)
];
// Reads $r $t $p; writes $s $e = exp(r) * scale.
defvar ExpFinish = ExpPolynomial # [
  (ffma:$p $p, $r, 0x3f800000),            // exp(r) in [1, 2)
  (ishl:$s $t, 23),                        // the scale (0 or +inf at the clamps)
  (fmul:$e $p, $s)
];
// As ExpFinish, and also $el: exp(r) * scale = e + el to about 2^-48
// relative (el is the rounding error of the polynomial's last step).
defvar ExpFinishTwoPart = ExpPolynomial # [
  (ffma:$pe $p, $r, 0x3f800000),           // exp(r) in [1, 2), rounded
  (fsub:$pl 0x3f800000, $pe),              // 1 - pe, exact
  (ffma:$pl $p, $r, $pl),                  // its rounding error
  (ishl:$s $t, 23),
  (fmul:$e $pe, $s),
  (fmul:$el $pl, $s)
];

let Reference = "std::exp(x)" in
def MP_exp : MicroProgram<"exp", ["x"],
    [(fmin:$xc $x, 0x42b20000),               // 89: n = 128, the scale is +inf
     (fmax:$xc $xc, 0xc2b00000)]              // -88: n = -127, the scale is +0
    # ExpReduce # ExpFinish, "e",
    "e^x. Cody-Waite reduction to [0, ln 2), degree-6 polynomial, exact scaling.">;

//===----------------------------------------------------------------------===//
// log
//===----------------------------------------------------------------------===//

// x = 2^k m with m in [sqrt(1/2), sqrt(2)) taken from the bit pattern,
// f = m - 1 exactly; log(1 + f) = f + f^2 Q(f) with a degree-8 Q; the result
// is k ln 2 + log(1 + f) with a two-part ln 2.
let Reference = "std::log(x)" in
def MP_log : MicroProgram<"log", ["x"],
    [(isub:$a $x, 0x3f3504f3),               // bits of x / sqrt(1/2)
     (isra:$k $a, 23),                       // k
     (iand:$a $a, 0xff800000),               // k << 23
     (isub:$m $x, $a),                       // m = x / 2^k
     (fsub:$f $m, 0x3f800000),               // f = m - 1, exact
     (i2f:$kf $k),
     (fmul:$f2 $f, $f),
     (ffma:$q $f, 0xbd9c1f5e, 0x3e043f30),
     (ffma:$q $q, $f, 0xbe07a787),
     (ffma:$q $q, $f, 0x3e113595),
     (ffma:$q $q, $f, 0xbe2a1201),
     (ffma:$q $q, $f, 0x3e4cd214),
     (ffma:$q $q, $f, 0xbe80021c),
     (ffma:$q $q, $f, 0x3eaaaaa8),
     (ffma:$q $q, $f, 0xbefffffc),
     (ffma:$y $f2, $q, $f),                  // log(1 + f)
     (ffma:$y $kf, 0xb102e308, $y),          // + k ln2_lo
     (ffma:$y $kf, 0x3f317218, $y),          // + k ln2_hi
     // x <= 0, +inf and NaN: -inf for +-0, NaN below zero and for NaN, x for +inf.
     (flt:$pos 0, $x),
     (flt:$fin $x, 0x7f800000),
     (iand:$ok $pos, $fin),
     (sel:$sp $pos, $x, 0xff800000),
     (fle:$nn 0, $x),
     (sel:$sp $nn, $sp, 0x7fc00000),
     (sel:$y $ok, $y, $sp)], "y",
    "Natural logarithm. Exponent and mantissa from the bit pattern, degree-10 polynomial "
    "for log(1 + f), two-part ln 2.">;

//===----------------------------------------------------------------------===//
// Reciprocal, division, square root
//===----------------------------------------------------------------------===//

// RN(1/m) for -m = $mn in [-2, -1]: a quadratic first guess (relative error
// 2^-6.6), two Newton steps (2^-26.5) and a third, y (1 + e + 2 e^2), that
// rounds correctly. 1/m = y (1 + e + e^2 + ...) always lies above y + y e;
// the e^2 term settles m = 2 - 2^-23, where the plain step y + y e lands
// exactly on a midpoint (Markstein's exception). It is 2 e^2 because e + e^2
// itself would round back to e there. That the overshoot y e^2 (|e| is about
// 2^-24) never carries a result across a midpoint is checked for all 2^23
// significands by arith_microcode_test. Writes $y, $e, $e2.
defvar ReciprocalOfMantissa = [
  (ffma:$y $mn, 0x3ea57eb6, 0x3fba2e8e),
  (ffma:$y $y, $mn, 0x4007c1f2),
  (ffma:$e $mn, $y, 0x3f800000),           // 1 - m y
  (ffma:$y $y, $e, $y),
  (ffma:$e $mn, $y, 0x3f800000),
  (ffma:$y $y, $e, $y),
  (ffma:$e $mn, $y, 0x3f800000),
  (fadd:$e2 $e, $e),
  (ffma:$e $e, $e2, $e),                   // e + 2 e^2
  (ffma:$y $y, $e, $y)
];

let Reference = "1.0 / x" in
def MP_recip : MicroProgram<"recip", ["x"],
    [(iand:$mb $x, 0x007fffff),
     (ior:$mn $mb, 0xbf800000)]              // -m, x = +-m 2^e
    # ReciprocalOfMantissa #
    [(iand:$se $x, 0xff800000),
     (isub:$s 0x7f000000, $se),              // +-2^-e (sign kept: 0x7f000000 - 2^31 wraps)
     (fmul:$r $y, $s),                       // exact, or flushed below 2^-126
     // +-0, +-inf, NaN: 1/x is +-inf, +-0, NaN.
     (isub:$z $se, 0x00800000),
     (fabs:$z $z),
     (flt:$ok $z, 0x7f000000),               // exponent field in 1..254
     (fisnan:$nan $x),
     (ixor:$sp $x, 0x7f800000),
     (sel:$sp $nan, $x, $sp),
     (sel:$r $ok, $r, $sp)], "r",
    "1/x, correctly rounded. Mantissa reciprocal by Newton-Raphson, exact exponent scaling.">;

let Reference = "a / b" in
def MP_div : MicroProgram<"div", ["a", "b"],
    [(iand:$mb $b, 0x007fffff),
     (ior:$mn $mb, 0xbf800000),              // -mb
     (ixor:$sg $a, $b),
     (iand:$sg $sg, 0x80000000),
     (iand:$ma $a, 0x007fffff),
     (ior:$ma $ma, 0x3f800000),
     (ior:$ma $ma, $sg)]                     // +-ma with the quotient's sign
    # ReciprocalOfMantissa #
    [(fmul:$q $ma, $y),                      // within 1 ulp of ma/mb
     (ffma:$rem $mn, $q, $ma),               // ma - mb q, exact
     (ffma:$q $rem, $y, $q),                 // correctly rounded ma/mb in (1/2, 2)
     // Scale by 2^k, k = Ea - Eb in [-253, 253], as 2^k1 * 2^k2 with
     // k1 = floor(k/2): q 2^k1 is exact (or flushed when the result is
     // tiny anyway) and the second product rounds once.
     (iand:$ea $a, 0x7f800000),
     (iand:$eb $b, 0x7f800000),
     (isub:$kb $ea, $eb),                    // k << 23
     (isra:$k1 $kb, 24),
     (ishl:$k1 $k1, 23),                     // k1 << 23
     (iadd:$s1 $k1, 0x3f800000),             // 2^k1
     (isub:$s2 $kb, $k1),
     (iadd:$s2 $s2, 0x3f800000),             // 2^(k - k1)
     (fmul:$q $q, $s1),
     (fmul:$q $q, $s2),
     // An operand that is zero, infinite or NaN: a * (1/b) with 1/b exact
     // for such b (exponent field flipped), which gives IEEE a/b.
     (isub:$za $ea, 0x00800000),
     (fabs:$za $za),
     (flt:$oka $za, 0x7f000000),
     (isub:$zb $eb, 0x00800000),
     (fabs:$zb $zb),
     (flt:$okb $zb, 0x7f000000),
     (iand:$ok $oka, $okb),
     (fisnan:$bn $b),
     (ixor:$rb $b, 0x7f800000),
     (sel:$rb $bn, $b, $rb),
     (fmul:$sp $a, $rb),
     (sel:$q $ok, $q, $sp)], "q",
    "a/b, correctly rounded: mantissa quotient by Markstein's method, exact exponent scaling.">;

// x = m 4^k with m in [1/2, 2) from the bit pattern (the exponent's low bit
// goes into m). $mb holds the low 24 bits of x.
let Reference = "1.0 / std::sqrt(x)" in
def MP_rsqrt : MicroProgram<"rsqrt", ["x"],
    [(iand:$mb $x, 0x00ffffff),
     (ior:$mn $mb, 0xbf000000),              // -m
     (ffma:$y $mn, 0x3e5cb422, 0x3f8cf7b4),  // cubic first guess, relative error 2^-7.2
     (ffma:$y $y, $mn, 0x4005bfa3),
     (ffma:$y $y, $mn, 0x400cd99b),
     (fmul:$mh $mn, 0x3f000000),             // -m/2
     (fmul:$t $mh, $y),                      // Newton: y += y (1/2 - m y^2 / 2)
     (ffma:$t $t, $y, 0x3f000000),
     (ffma:$y $y, $t, $y),
     (fmul:$t $mh, $y),
     (ffma:$t $t, $y, 0x3f000000),
     (ffma:$y $y, $t, $y),
     (ishr:$h $x, 1),
     (iand:$h $h, 0x3f800000),               // floor(E/2) << 23
     (isub:$s 0x5f000000, $h),               // 2^-k
     (fmul:$r $y, $s),
     // x <= 0, +inf, NaN: +-0 -> +-inf, +inf -> +0, otherwise NaN.
     (flt:$pos 0, $x),
     (flt:$fin $x, 0x7f800000),
     (iand:$ok $pos, $fin),
     (fle:$nn 0, $x),
     (ixor:$sp $x, 0x7f800000),
     (sel:$sp $nn, $sp, 0x7fc00000),
     (sel:$r $ok, $r, $sp)], "r",
    "1/sqrt(x). Cubic first guess on the mantissa, two Newton steps, exact exponent scaling.">;

let Reference = "std::sqrt(x)" in
def MP_sqrt : MicroProgram<"sqrt", ["x"],
    [(iand:$mb $x, 0x00ffffff),
     (ior:$mn $mb, 0xbf000000),              // -m
     (ffma:$y $mn, 0x3e5cb422, 0x3f8cf7b4),  // y ~ 1/sqrt(m), relative error 2^-7.2
     (ffma:$y $y, $mn, 0x4005bfa3),
     (ffma:$y $y, $mn, 0x400cd99b),
     (fmul:$gn $mn, $y),                     // -g, g ~ sqrt(m)
     (fmul:$h $y, 0x3f000000),               // h ~ 1/(2 sqrt(m))
     (ffma:$c $gn, $h, 0x3f000000),          // coupled Newton: c = 1/2 - g h
     (ffma:$gn $gn, $c, $gn),
     (ffma:$h $h, $c, $h),
     (ffma:$c $gn, $h, 0x3f000000),
     (ffma:$gn $gn, $c, $gn),
     (ffma:$h $h, $c, $h),
     (ffma:$d $gn, $gn, $mn),                // g^2 - m, exact
     (ffma:$gn $d, $h, $gn),                 // -(g + (m - g^2) h): correctly rounded
     (ishr:$s $x, 1),
     (iand:$s $s, 0x3f800000),               // floor(E/2) << 23
     (iadd:$s $s, 0xa0000000),               // -2^k
     (fmul:$r $gn, $s),
     // x <= 0, +inf, NaN: +-0 and +inf are their own roots, otherwise NaN.
     (flt:$pos 0, $x),
     (flt:$fin $x, 0x7f800000),
     (iand:$ok $pos, $fin),
     (fle:$nn 0, $x),
     (sel:$sp $nn, $x, 0x7fc00000),
     (sel:$r $ok, $r, $sp)], "r",
    "sqrt(x), correctly rounded: coupled Newton iteration for sqrt and 1/(2 sqrt), "
    "final remainder correction, exact exponent scaling.">;

//===----------------------------------------------------------------------===//
// Sign operations
//===----------------------------------------------------------------------===//

let Reference = "-x" in
def MP_neg : MicroProgram<"neg", ["x"], [(fneg:$y $x)], "y", "-x.">;
let Reference = "std::fabs(x)" in
def MP_abs : MicroProgram<"abs", ["x"], [(fabs:$y $x)], "y", "|x|.">;
let Reference = "std::isnan(x) ? x : (x > 0 ? x : 0.0)" in
def MP_relu : MicroProgram<"relu", ["x"], [(fmax:$y $x, 0)], "y", "max(x, +0); NaN stays NaN.">;

//===----------------------------------------------------------------------===//
// Sigmoid family
//===----------------------------------------------------------------------===//

// 1/(1 + z) for -(1 + z) = $dn in [-2, -1]: the first guess of
// ReciprocalOfMantissa and two Newton steps (not correctly rounded).
// Writes $r, $e1.
defvar ReciprocalOfOnePlus = [
  (ffma:$r $dn, 0x3ea57eb6, 0x3fba2e8e),
  (ffma:$r $r, $dn, 0x4007c1f2),
  (ffma:$e1 $dn, $r, 0x3f800000),
  (ffma:$r $r, $e1, $r),
  (ffma:$e1 $dn, $r, 0x3f800000),
  (ffma:$r $r, $e1, $r)
];

// The sigmoid of an argument v whose reduction `reduce` provides:
// $neg = (v < 0), and $t, $r as ExpReduceSteps<0x4b400097> makes them for
// e^-|v| clamped at |v| <= 104. Then e^-|v| * 2^24 = $e + $el (the scale
// 2^24 keeps e^v normal down to v = -104, below which v e^v underflows),
// 1 + e^-|v| = -($dn + $dl) exactly, $r ~ 1/(1 + e^-|v|) and its residual
// $e1 = 1 - (1 + e^-|v|) r, so that 1/(1 + e^-|v|) = r (1 + e1) to about
// 2^-48. With u = 1 for v >= 0 and u = e^v (scaled) for v < 0,
// sigmoid(v) = u r (1 + e1) is then evaluated with one final rounding, and
// $k undoes the scale.
class SigmoidSteps<list<dag> reduce> {
  list<dag> Steps = reduce # ExpFinishTwoPart #
    [(fmul:$z $e, 0x33800000),               // e^-|v| (its low part is negligible next to 1)
     (fsub:$dn 0xbf800000, $z),              // -(1 + z), rounded
     (fsub:$dl 0xbf800000, $dn),             // exact (Sterbenz)
     (fsub:$dl $dl, $z)]                     // -(1 + z) - dn, exact (Fast2Sum)
    # ReciprocalOfOnePlus #
    [(ffma:$e1 $dn, $r, 0x3f800000),
     (ffma:$e1 $dl, $r, $e1),                // 1 - (1 + z) r
     (sel:$k $neg, 0x33800000, 0x3f800000)]; // undoes the 2^24 for v < 0
}

// sigmoid(x) for the input $x; also $xc = max(-|x|, -104).
defvar SigmoidOfX = SigmoidSteps<
    [(flt:$neg $x, 0),
     (ior:$xc $x, 0x80000000),               // -|x|
     (fmax:$xc $xc, 0xc2d00000)]             // -104: n = -151, the scale is +0
    # ExpReduceSteps<0x4b400097>.Steps>.Steps; // Bias 151: scale 2^(n + 24)

// Reads $u $ul (u + ul = the numerator), writes $y = (u + ul) r (1 + e1) k.
defvar SigmoidQuotient = [
  (fmul:$c $u, $e1),
  (fmul:$c $c, $r),
  (ffma:$c $ul, $r, $c),
  (ffma:$y $u, $r, $c),
  (fmul:$y $y, $k)
];

let Reference = "sigmoid(x)" in
def MP_sigmoid : MicroProgram<"sigmoid", ["x"], SigmoidOfX #
    [(sel:$u $neg, $e, 0x3f800000),
     (sel:$ul $neg, $el, 0)] # SigmoidQuotient, "y",
    "1/(1 + e^-x) as u/(1 + e^-|x|), u = 1 for x >= 0 and e^x below, from a two-part "
    "exponential and a Newton reciprocal with its residual.">;

// m sigmoid(v) for the multiplier $xs: for v < 0 the numerator m e^v is
// formed exactly as xh + xl first. $xb is m bounded where e1 is 0 anyway
// (so that an infinite m does not meet e1 = 0 in the correction term). A
// result that underflows, and m = -0, keep the sign of m (which is the sign
// of v).
defvar ProductWithSigmoid = [
  (fmul:$xh $xs, $e),
  (fneg:$xhn $xh),
  (ffma:$xl $xs, $e, $xhn),                  // m e - xh, exact
  (ffma:$xl $xs, $el, $xl),
  (sel:$u $neg, $xh, $xs),
  (sel:$ub $neg, $xh, $xb),
  (sel:$ul $neg, $xl, 0),
  (fmul:$c $ub, $e1),
  (fmul:$c $c, $r),
  (ffma:$c $ul, $r, $c),
  (ffma:$y $u, $r, $c),
  (fmul:$y $y, $k),
  (iand:$sg $xs, 0x80000000),
  (ior:$y $y, $sg)
];

let Reference = "std::isinf(x) ? (x > 0 ? x : -0.0) : x * sigmoid(x)" in
def MP_silu : MicroProgram<"silu", ["x"], SigmoidOfX #
    [(sel:$xs $neg, $xc, $x),                // x, or max(x, -104) when negative
     (fneg:$xb $xc)]                         // min(x, 104) for x >= 0
    # ProductWithSigmoid, "y",
    "x sigmoid(x) with x e^x formed exactly for x < 0; -0 at -inf.">;

// Writes $s = sigmoid(v) / k and $c = 1 - sigmoid(v) for the derivatives.
defvar SigmoidAndComplement = [
  (sel:$u $neg, $e, 0x3f800000),
  (sel:$ul $neg, $el, 0),
  (fmul:$c $u, $e1),
  (fmul:$c $c, $r),
  (ffma:$c $ul, $r, $c),
  (ffma:$s $u, $r, $c),                      // sigmoid(v) / k
  (sel:$w $neg, 0x3f800000, $e),
  (sel:$wl $neg, 0, $el),
  (fmul:$c $w, $e1),
  (fmul:$c $c, $r),
  (ffma:$c $wl, $r, $c),
  (ffma:$c $w, $r, $c),
  (sel:$kc $neg, 0x3f800000, 0x33800000),
  (fmul:$c $c, $kc)                          // 1 - sigmoid(v)
];

let Reference = "siluBackward(x, dy)" in
def MP_silu_bwd : MicroProgram<"silu_bwd", ["x", "dy"], SigmoidOfX # SigmoidAndComplement #
    [(fneg:$xb $xc),
     (sel:$xs $neg, $xc, $xb),               // x clamped to [-104, 104]: 1 - sigmoid is 0 beyond
     (ffma:$g $xs, $c, 0x3f800000),          // 1 + x (1 - sigmoid(x))
     (fmul:$ds $s, $g),
     (fmul:$ds $ds, $k),
     (fmul:$dx $ds, $dy)], "dx",
    "dy * silu'(x) = dy sigmoid(x) (1 + x (1 - sigmoid(x))).">;

// GELU, tanh form: 0.5 x (1 + tanh(v/2)) = x sigmoid(v) with
// v = x (A + B x^2), A = 2 sqrt(2/pi), B = 0.044715 A. For x < 0, e^v is
// as sensitive to v's rounding as |v| is large (up to 104), so v is carried
// as w + wl with w ~ A + B x^2 exact to about 2^-45 (both constants in two
// parts, every product and the sum error-free), and the reduction forms
// -|x| (w + wl) - n ln 2 with fused multiply-adds from the unrounded
// factors. |x| is clamped to 16, where e^-|v| is 0 already.
defvar GeluReduce = [
  (flt:$neg $x, 0),
  (ior:$ax $x, 0x80000000),
  (fmax:$ax $ax, 0xc1800000),                // -min(|x|, 16)
  (fmul:$x2 $ax, $ax),
  (fneg:$tn $x2),
  (ffma:$x2l $ax, $ax, $tn),                 // x^2 - x2, exact
  (fmul:$p $x2, 0x3d922279),
  (fneg:$tn $p),
  (ffma:$pl $x2, 0x3d922279, $tn),           // B_hi x2 - p, exact
  (fadd:$w $p, 0x3fcc422a),                  // TwoSum(p, A_hi)
  (fsub:$bv $w, $p),
  (fsub:$av $w, $bv),
  (fsub:$da $p, $av),
  (fsub:$db 0x3fcc422a, $bv),
  (fadd:$wl $da, $db),
  (fadd:$wl $wl, $pl),
  (ffma:$wl $x2l, 0x3d922279, $wl),
  (ffma:$wl $x2, 0x3124d8b5, $wl),           // + B_lo x2
  (fadd:$wl $wl, 0xb342bc9b),                // + A_lo
  (fmul:$xc $ax, $w),                        // -|v|, rounded
  (fmax:$xc $xc, 0xc2d00000),                // -104
  (ffma:$u $xc, 0x3fb8aa3b, 0xbeffffff),
  (fadd:$t $u, 0x4b400097),
  (fsub:$n $t, 0x4b400097),
  (fmul:$nl $n, 0xbf317200),                 // exact
  (ffma:$r $ax, $w, $nl),                    // -|x| w - n ln2_hi
  (ffma:$r $n, 0xb5bfbe8e, $r),
  (ffma:$r $ax, $wl, $r)                     // - |x| wl
];

let Reference = "std::isinf(x) ? (x > 0 ? x : -0.0) : x * sigmoid(geluArgument(x))" in
def MP_gelu : MicroProgram<"gelu", ["x"], SigmoidSteps<GeluReduce>.Steps #
    [(fmax:$xs $x, 0xc1800000),              // e^v is 0 below -16: keeps -inf * 0 away
     (fneg:$xb $ax)]                         // min(x, 16) for x >= 0
    # ProductWithSigmoid, "y",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as x sigmoid(v), "
    "v = 2 sqrt(2/pi) (x + 0.044715 x^3) carried in two parts.">;

let Reference = "geluBackward(x, dy)" in
def MP_gelu_bwd : MicroProgram<"gelu_bwd", ["x", "dy"], SigmoidSteps<GeluReduce>.Steps #
    SigmoidAndComplement #
    [(fmul:$dv $x2, 0x3e5b33b6),
     (fadd:$dv $dv, 0x3fcc422a),             // v' = A + 3 B x^2
     (fmul:$dv $dv, $ax),                    // -|x| v'
     (sel:$sx $neg, 0xbf800000, 0x3f800000),
     (fmul:$dv $dv, $sx),                    // -x v', |x| <= 16
     (fneg:$dv $dv),
     (ffma:$g $dv, $c, 0x3f800000),          // 1 + x v' (1 - sigmoid(v))
     (fmul:$ds $s, $g),
     (fmul:$ds $ds, $k),
     (fmul:$dx $ds, $dy)], "dx",
    "dy * gelu'(x) = dy sigmoid(v) (1 + x v' (1 - sigmoid(v))) for the tanh form.">;

//===----------------------------------------------------------------------===//
// erf and the exact GELU
//===----------------------------------------------------------------------===//

// erfc(t) 2^24 = $e for t = $pa or t = $pa / sqrt(2) in [0.9, 10.5], as
// exp(-t^2 + q(t)) with q(t) = log(erfcx(t)) a polynomial in $v = t - 5.71
// (absolute error 2^-23.3, i.e. the relative error of erfc). -t^2 = pa pb
// enters the reduced argument through fused multiply-adds from the exact
// factors, because exp amplifies the argument's error by its size (up to
// 112): only the n of the reduction comes from the rounded sum. q's
// constant term Q0 = -2.33 (0xc015146d, the fit's) is split: Q0_HI =
// 0xbf999a00 (-1.2, a multiple of 2^-15) joins -n ln2_hi exactly, Q0 - Q0_HI
// ends the polynomial. Over [0.9, 10.5], q - Q0_HI lies in [-1.73, 0.5] and
// -t^2 - n ln2_hi + Q0_HI in [-0.5, 2.42] (unsplit: q in [-2.93, -0.7] and
// -t^2 - n ln2_hi in [0.7, 3.62]), so that their roundings, each an error
// relative to erfc, are mostly 2^-24 rather than 2^-23. The
// scale 2^24 (bias 151) keeps erfc normal down to where gelu_erf underflows;
// below that the clamp at -104 makes the scale +0. Reads $v $pa $pb; writes
// $q $xc $u $t $n $nl $r and those of ExpFinish.
defvar ErfcScaled = [
  (ffma:$q $v, 0x2d28de7f, 0xaf0e80b8),
  (ffma:$q $q, $v, 0x30324dd9),
  (ffma:$q $q, $v, 0xb177b757),
  (ffma:$q $q, $v, 0x332be0c2),
  (ffma:$q $q, $v, 0xb4bee275),
  (ffma:$q $q, $v, 0x36378354),
  (ffma:$q $q, $v, 0xb7b657e9),
  (ffma:$q $q, $v, 0x393addc4),
  (ffma:$q $q, $v, 0xbac6617c),
  (ffma:$q $q, $v, 0x3c66b296),
  (ffma:$q $q, $v, 0xbe2e36be),
  (ffma:$q $q, $v, 0xbf908eda),              // q(t) - Q0_HI
  (ffma:$xc $pa, $pb, $q),                   // -t^2 + q - Q0_HI, rounded: only for n
  (fmax:$xc $xc, 0xc2cd9998),                // -104 - Q0_HI: n = -151, the scale is +0
  (ffma:$u $xc, 0x3fb8aa3b, 0xc00eccd4),     // (xc + Q0_HI) log2(e) - 1/2
  (fadd:$t $u, 0x4b400097),                  // Bias 151: scale 2^(n + 24)
  (fsub:$n $t, 0x4b400097),
  (ffma:$nl $n, 0xbf317200, 0xbf999a00),     // -n ln2_hi + Q0_HI: exact, on 2^-15 below 2^7
  (ffma:$r $pa, $pb, $nl),                   // -t^2 - n ln2_hi + Q0_HI, one rounding
  (ffma:$r $n, 0xb5bfbe8e, $r),
  (fadd:$r $r, $q)
] # ExpFinish;

let Reference = "std::erf(x)" in
def MP_erf : MicroProgram<"erf", ["x"],
    [(fabs:$ax $x),
     (fmin:$pa $ax, 0x41280000),             // t = min(|x|, 10.5): erf is 1 from 3.92
     (fneg:$pb $pa),                         // pa pb = -t^2 exactly
     (fadd:$v $pa, 0xc0b6b852)]              // t - 5.71
    # ErfcScaled #
    [(ffma:$yl $e, 0xb3800000, 0x3f800000),  // erf(t) = 1 - erfc(t)
     (iand:$sg $x, 0x80000000),
     (ior:$yl $yl, $sg),
     // |x| < 0.921875: x (1 + Q(x^2)), Q of degree 5; the fused last step
     // keeps x's tiny values from flushing early, and -0.
     (fmul:$s2 $x, $x),
     (ffma:$qs $s2, 0xba1d2471, 0x3ba3a507),
     (ffma:$qs $qs, $s2, 0xbcdb4733),
     (ffma:$qs $qs, $s2, 0x3de70d5a),
     (ffma:$qs $qs, $s2, 0xbec09374),
     (ffma:$qs $qs, $s2, 0x3e0375d3),
     (ffma:$ys $x, $qs, $x),
     (flt:$small $ax, 0x3f6c0000),
     (sel:$y $small, $ys, $yl)], "y",
    "erf(x): x (1 + Q(x^2)) below 0.921875, 1 - erfc(|x|) with the sign of x above, "
    "erfc = exp(-x^2 + q(|x|)) with -x^2 entering the reduction exactly.">;

// For gelu_erf(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2. Writes $ax,
// $pa = min(|x|, 14.8) (below -14.8 the result underflows), $neg = (x < 0),
// $e = 2 Phi(-|x|) 2^24 and $phl = Phi(|x|), both for |x| >= 1.3, and for
// |x| < 1.3 $phs = Phi(x) = 1/2 + x R(x^2), R of degree 5.
defvar NormalCdf = [
  (fabs:$ax $x),
  (fmin:$pa $ax, 0x416ccccd),                // 14.8
  (fmul:$pb $pa, 0xbf000000),                // pa pb = -x^2/2 exactly
  (ffma:$v $pa, 0x3f3504f3, 0xc0b6b852)]     // t - 5.71, t = |x| / sqrt(2)
  # ErfcScaled #
  [(flt:$neg $x, 0),
   (ffma:$phl $e, 0xb3000000, 0x3f800000),   // Phi(|x|) = 1 - erfc(t) / 2
   (fmul:$w $x, $x),
   (ffma:$rp $w, 0xb6d1aebf, 0x38e3b252),
   (ffma:$rp $rp, $w, 0xba9aa583),
   (ffma:$rp $rp, $w, 0x3c2356df),
   (ffma:$rp $rp, $w, 0xbd882b93),
   (ffma:$rp $rp, $w, 0x3ecc4227),
   (ffma:$phs $x, $rp, 0x3f000000),
   (flt:$small $ax, 0x3fa66666)];            // 1.3

let Reference = "std::isinf(x) ? (x > 0 ? x : -0.0) : x * normalCdf(x)" in
def MP_gelu_erf : MicroProgram<"gelu_erf", ["x"], NormalCdf #
    [(sel:$m $neg, $e, $phl),
     (sel:$k $neg, 0x33000000, 0x3f800000),  // 2^-25 undoes 2 * 2^24 for x < 0
     (sel:$m $small, $phs, $m),
     (sel:$k $small, 0x3f800000, $k),
     (fmax:$xs $x, 0xc1800000),              // Phi is 0 below -16: keeps -inf * 0 away
     (fmul:$y $xs, $m),
     (fmul:$y $y, $k)], "y",
    "0.5 x (1 + erf(x / sqrt(2))) = x Phi(x), Phi(x) = erfc(-x / sqrt(2)) / 2 "
    "from the erf program's erfc, so that the tail keeps its relative accuracy.">;

// gelu_erf'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi). For
// x < 0 it is formed as -(|x| phi(x) - Phi(x)), so that the limit at -inf is
// -0.
let Reference = "geluErfBackward(x, dy)" in
def MP_gelu_erf_bwd : MicroProgram<"gelu_erf_bwd", ["x", "dy"], NormalCdf #
    [(fmul:$eh $e, 0x3f000000),              // Phi(-|x|) 2^24
     (sel:$b $neg, $eh, $phl),
     (sel:$b $small, $phs, $b),              // Phi(x), scaled by 2^24 when x <= -1.3
     // exp(-x^2/2) 2^24, the argument entering the reduction exactly.
     (fmul:$xc $pa, $pb),
     (fmax:$xc $xc, 0xc2d00000),
     (ffma:$u $xc, 0x3fb8aa3b, 0xbeffffff),
     (fadd:$t $u, 0x4b400097),
     (fsub:$n $t, 0x4b400097),
     (fmul:$nl $n, 0xbf317200),
     (ffma:$r $pa, $pb, $nl),
     (ffma:$r $n, 0xb5bfbe8e, $r)]
    # ExpFinish #
    [(fle:$large 0x3fa66666, $ax),
     (iand:$negl $neg, $large),              // x <= -1.3: everything scaled by 2^24
     (sel:$c $negl, 0x3ecc422a, 0x32cc422a),   // 1/sqrt(2 pi), or with 2^-24
     (fmul:$g $e, $c),                       // phi(x), scaled alike
     (sel:$k $neg, 0xbf800000, 0x3f800000),
     (sel:$k $negl, 0xb3800000, $k),           // the sign flip, and 2^-24
     (sel:$sg $neg, 0x80000000, 0),
     (ixor:$b $b, $sg),
     (ffma:$d $pa, $g, $b),                  // |x| phi -+ Phi
     (fmul:$d $d, $k),
     (fmul:$dx $d, $dy)], "dx",
    "dy * (Phi(x) + x phi(x)), the derivative of x Phi(x), from the gelu_erf core "
    "and a second exponential exp(-x^2/2) with its argument exact.">;

//===----------------------------------------------------------------------===//
// tanh
//===----------------------------------------------------------------------===//

let Reference = "std::tanh(x)" in
def MP_tanh : MicroProgram<"tanh", ["x"],
    [(fabs:$ax $x),
     (fmul:$xc $ax, 0xc0000000),             // -2|x|
     (fmax:$xc $xc, 0xc2b00000)]             // -88
    # ExpReduce # ExpFinish #
    [(fsub:$dn 0xbf800000, $e)]              // -(1 + z), z = e^-2|x|
    # ReciprocalOfOnePlus #
    [(fmul:$w $e, $r),
     (ffma:$t $w, 0xc0000000, 0x3f800000),   // tanh|x| = 1 - 2 z / (1 + z)
     (iand:$sg $x, 0x80000000),
     (ixor:$t $t, $sg),
     // |x| < 0.55: x (1 + x^2 P(x^2)), P of degree 4 (this order keeps -0).
     (fmul:$x2 $x, $x),
     (ffma:$q $x2, 0xbbcc90d0, 0x3cac728c),
     (ffma:$q $q, $x2, 0xbd5c8f3f),
     (ffma:$q $q, $x2, 0x3e088677),
     (ffma:$q $q, $x2, 0xbeaaaaa5),
     (ffma:$q $q, $x2, 0x3f800000),
     (fmul:$ys $x, $q),
     (flt:$small $ax, 0x3f0ccccd),
     (sel:$y $small, $ys, $t)], "y",
    "tanh(x): odd polynomial below 0.55, 1 - 2 e^-2|x| / (1 + e^-2|x|) with the sign of x above.">;

//===----------------------------------------------------------------------===//
// sin, cos
//===----------------------------------------------------------------------===//

// n = round(x * 2/pi) (in the low bits of $t), r = x - n pi/2 with a
// three-part pi/2, sin(r) and cos(r) by odd and even polynomials. The parts
// of pi/2 are rounded down so that all three products with n = +0 are -0 and
// r keeps the sign of x = -0. The rounding of 2/pi (off by 2.6e-8) makes n
// off by one near half-integers for large |x|, so the polynomials cover
// |r| <= 0.96, enough for |x| < 2^22; r is clamped there so that |result| <= 1
// even where the reduction fails (beyond 2^22).
defvar SinCosCore = [
  (ffma:$t $x, 0x3f22f983, 0x4b400000),      // x * 2/pi + 1.5 * 2^23
  (fsub:$n $t, 0x4b400000),
  (ffma:$r $n, 0xbfc90fda, $x),
  (ffma:$r $n, 0xb3a22168, $r),
  (ffma:$r $n, 0xa7c234c5, $r),
  (fmin:$r $r, 0x3f75c28f),                  // 0.96
  (fmax:$r $r, 0xbf75c28f),
  (fmul:$r2 $r, $r),
  (ffma:$s $r2, 0x3637c62a, 0xb9501434),
  (ffma:$s $s, $r2, 0x3c0888a4),
  (ffma:$s $s, $r2, 0xbe2aaaab),
  (ffma:$s $s, $r2, 0x3f800000),
  (fmul:$s $r, $s),                          // sin(r) = r (1 + r^2 S(r^2)), keeps -0
  (ffma:$c $r2, 0x37c9effb, 0xbab5f4a7),
  (ffma:$c $c, $r2, 0x3d2aaa67),
  (ffma:$c $c, $r2, 0xbeffffff),
  (ffma:$c $c, $r2, 0x3f800000)              // cos(r)
];
// From the quadrant q in the low bits of $t: sin(r), cos(r), -sin(r),
// -cos(r) for q mod 4 = 0..3.
defvar SinCosQuadrant = [
  (ishl:$odd $t, 31),
  (isra:$odd $odd, 31),
  (sel:$y $odd, $c, $s),
  (ishl:$sg $t, 30),
  (iand:$sg $sg, 0x80000000),
  (ixor:$y $y, $sg)
];

let Reference = "std::sin(x)" in
def MP_sin : MicroProgram<"sin", ["x"],
    SinCosCore # SinCosQuadrant, "y",
    "sin(x): Cody-Waite reduction by pi/2, polynomials for sin and cos on [-pi/4, pi/4].">;
let Reference = "std::cos(x)" in
def MP_cos : MicroProgram<"cos", ["x"],
    SinCosCore # [(iadd:$t $t, 1)] # SinCosQuadrant, "y",
    "cos(x) = sin(x + pi/2) by the quadrant: the same reduction as sin.">;

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

// x^y = sign * exp(y ln|x|) with ln|x| = lh + ll in two parts: |x| = 2^k m
// as in log, ln(m) = f - f^2/2 + f^3 Q(f) with f - f^2/2 summed without
// error, then y (lh + ll) = yh + yl exactly up to y ll, and exp(yh + yl)
// with yl added to the reduced argument. Special cases follow C99 F.9.4.4
// (as torch.pow does for a general exponent): x^(+-0) = 1 and 1^y = 1 even
// for NaN; (-1)^(+-inf) = 1; a negative finite x with a finite non-integral
// y gives NaN; the sign is negative when x has its sign bit set and y is an
// odd integer (so (-0)^3 = -0 and (-inf)^-1 = -0).
let Reference = "std::pow(x, y)" in
def MP_pow : MicroProgram<"pow", ["x", "y"],
    [(fabs:$ax $x),
     (isub:$a $ax, 0x3f3504f3),
     (isra:$k $a, 23),
     (iand:$a $a, 0xff800000),
     (isub:$m $ax, $a),
     (fsub:$f $m, 0x3f800000),               // f = m - 1, exact
     (i2f:$kf $k),
     (fmul:$f2 $f, $f),
     (fneg:$tn $f2),
     (ffma:$f2l $f, $f, $tn),                // f^2 - f2, exact
     (ffma:$q $f, 0x3d8a399f, 0xbdef00ee),
     (ffma:$q $q, $f, 0x3df36005),
     (ffma:$q $q, $f, 0xbdfe1465),
     (ffma:$q $q, $f, 0x3e119dd1),
     (ffma:$q $q, $f, 0xbe2aae22),
     (ffma:$q $q, $f, 0x3e4cd23b),
     (ffma:$q $q, $f, 0xbe800003),
     (ffma:$q $q, $f, 0x3eaaaaa4),           // Q(f)
     (ffma:$sh $f2, 0xbf000000, $f),         // f - f2/2, rounded
     (fsub:$u $f, $sh),                      // exact (Sterbenz)
     (ffma:$sl $f2, 0xbf000000, $u),         // its rounding error, exact
     (ffma:$sl $f2l, 0xbf000000, $sl),
     (fmul:$f3 $f2, $f),
     (ffma:$sl $f3, $q, $sl),                // ln(m) = sh + sl
     (fmul:$kh $kf, 0x3f317200),             // k ln2_hi, exact
     (fadd:$lh $kh, $sh),                    // Fast2Sum: |k ln2_hi| >= |sh| unless k = 0
     (fsub:$u $lh, $kh),
     (fsub:$u $sh, $u),
     (fadd:$ll $u, $sl),
     (ffma:$ll $kf, 0x35bfbe8e, $ll),        // ln|x| = lh + ll, |ll| up to 0.02
     (fadd:$h $lh, $ll),                     // renormalise: Fast2Sum(lh, ll)
     (fsub:$u $h, $lh),
     (fsub:$ll $ll, $u),                     // ln|x| = h + ll, |ll| <= ulp(h)/2
     // |x| = 0, inf, NaN: ln|x| = -inf, inf, NaN.
     (flt:$pos 0, $ax),
     (flt:$fin $ax, 0x7f800000),
     (iand:$ok $pos, $fin),
     (fle:$zero $ax, 0),
     (sel:$sp $zero, 0xff800000, $ax),
     (sel:$lh $ok, $h, $sp),
     (sel:$ll $ok, $ll, 0),
     // |x| = 1: ln|x| = 0, and y ln|x| = 0 also for infinite or NaN y.
     (fle:$o1 $ax, 0x3f800000),
     (fle:$o2 0x3f800000, $ax),
     (iand:$one $o1, $o2),
     (sel:$pz $one, 0, $y),
     (fmul:$yh $pz, $lh),
     (fneg:$tn $yh),
     (ffma:$yl $pz, $lh, $tn),               // y lh - yh, exact
     (ffma:$yl $pz, $ll, $yl),
     (fabs:$ay $yh),
     (flt:$small $ay, 0x42b20000),           // beyond 89 the result is 0 or inf whatever yl
     (sel:$yl $small, $yl, 0),
     (fmin:$xc $yh, 0x42b20000),
     (fmax:$xc $xc, 0xc2b00000)]
    # ExpReduce #
    [(fadd:$r $r, $yl)]
    # ExpFinish #
    [// The sign bit of x when y is an odd integer.
     (fround:$pr $y),
     (fle:$i1 $pr, $y),
     (fle:$i2 $y, $pr),
     (iand:$int $i1, $i2),                   // y integral or infinite
     (fmin:$pc $y, 0x4e800000),              // |y| <= 2^30 keeps f2i's low bit
     (fmax:$pc $pc, 0xce800000),
     (f2i:$odd $pc),
     (ishl:$odd $odd, 31),
     (iand:$odd $odd, $int),
     (iand:$odd $odd, $x),
     (ixor:$e $e, $odd),
     // A negative finite x with a non-integral y (NaN included): NaN.
     (flt:$n1 $x, 0),
     (flt:$n2 0xff800000, $x),
     (iand:$bad $n1, $n2),
     (sel:$t $int, $e, 0x7fc00000),
     (sel:$e $bad, $t, $e),
     // y = +-0: 1, even for x = 0, inf or NaN.
     (fabs:$ap $y),
     (fle:$p0 $ap, 0),
     (sel:$e $p0, 0x3f800000, $e)], "e",
    "x^y = exp(y ln|x|) with ln|x| and the product in two parts; C99 special cases.">;

//===----------------------------------------------------------------------===//
// Elementwise binary operations
//===----------------------------------------------------------------------===//

// The vector engine runs even single-primitive operations as programs, so
// that the ISS and the RTL share one path for every elementwise instruction.
def MP_add : MicroProgram<"add", ["a", "b"], [(fadd:$r $a, $b)], "r", "a + b.">;
def MP_sub : MicroProgram<"sub", ["a", "b"], [(fsub:$r $a, $b)], "r", "a - b.">;
def MP_mul : MicroProgram<"mul", ["a", "b"], [(fmul:$r $a, $b)], "r", "a * b.">;
def MP_max : MicroProgram<"max", ["a", "b"], [(fmax:$r $a, $b)], "r",
                          "max(a, b): NaN if either is NaN, -0 < +0.">;
def MP_min : MicroProgram<"min", ["a", "b"], [(fmin:$r $a, $b)], "r",
                          "min(a, b): NaN if either is NaN, -0 < +0.">;
let Reference = "orderedMin(orderedMax(x, lo), hi)" in
def MP_clamp : MicroProgram<"clamp", ["x", "lo", "hi"], [(fmax:$t $x, $lo), (fmin:$y $t, $hi)], "y",
                            "min(max(x, lo), hi): NaN if any input is NaN, hi when lo > hi.">;
// The steps of clamp_bwd's recipe (isa/nn.td: an engine step takes two
// inputs, and each step's load canonicalises them, so a compare mask
// reaches the next step as the canonical NaN or +0).
def MP_le : MicroProgram<"le", ["a", "b"], [(fle:$r $a, $b)], "r",
                         "all-ones if a <= b (ordered; -0 == +0) else +0.">;
let Reference = "std::isnan(m) ? dy : 0.0" in
def MP_mask_pass : MicroProgram<"mask_pass", ["m", "dy"],
    [(fisnan:$k $m),
     (iand:$r $k, $dy)], "r",
    "dy where m is NaN (a compare mask of an earlier step, as its load canonicalised it), "
    "else +0.">;

//===----------------------------------------------------------------------===//
// Pointwise backward of clamp
//===----------------------------------------------------------------------===//

// dy where lo <= x <= hi, else +0 (torch's where(mask, dy, 0)): the mask of
// two ordered compares (false for a NaN x or bound) and-ed with dy, which
// its load canonicalised (a denormal is a zero of its sign, a NaN the
// canonical NaN).
let Reference = "(lo <= x && x <= hi) ? dy : 0.0" in
def MP_clamp_bwd : MicroProgram<"clamp_bwd", ["x", "dy", "lo", "hi"],
    [(fle:$a $lo, $x),
     (fle:$b $x, $hi),
     (iand:$m $a, $b),
     (iand:$dx $m, $dy)], "dx",
    "dy where lo <= x <= hi (ordered compares), else +0.">;
