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
// Reads $r $t; writes $p $s $e = exp(r) * scale.
defvar ExpFinish = [
  (ffma:$p $r, 0x3aff2aa5, 0x3bff7cdd),
  (ffma:$p $p, $r, 0x3d2baae9),
  (ffma:$p $p, $r, 0x3e2a9c42),
  (ffma:$p $p, $r, 0x3f00005d),
  (ffma:$p $p, $r, 0x3f7ffffd),
  (ffma:$p $p, $r, 0x3f800000),            // exp(r) in [1, 2)
  (ishl:$s $t, 23),                        // the scale (0 or +inf at the clamps)
  (fmul:$e $p, $s)
];

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

def MP_neg : MicroProgram<"neg", ["x"], [(fneg:$y $x)], "y", "-x.">;
def MP_abs : MicroProgram<"abs", ["x"], [(fabs:$y $x)], "y", "|x|.">;
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

// For input $x: $xc = max(-|x|, -104), $e = e^-|x| * 2^24 (the scale keeps
// e^x normal down to x = -104, below which x e^x underflows), $z = e^-|x|,
// $r = 1/(1 + z). sigmoid(x) is r for x >= 0 and e^x r for x < 0.
defvar SigmoidCore = [
  (ior:$xc $x, 0x80000000),                  // -|x|
  (fmax:$xc $xc, 0xc2d00000)]                // -104: n = -151, the scale is +0
  # ExpReduceSteps<0x4b400097>.Steps         // Bias 151: scale 2^(n + 24)
  # ExpFinish #
  [(fmul:$z $e, 0x33800000),                 // e^-|x|
   (fsub:$dn 0xbf800000, $z)]                // -(1 + z)
  # ReciprocalOfOnePlus;

def MP_sigmoid : MicroProgram<"sigmoid", ["x"], SigmoidCore #
    [(flt:$neg $x, 0),
     (fmul:$a $e, $r),
     (fmul:$a $a, 0x33800000),               // e^x / (1 + e^x) for x < 0
     (sel:$y $neg, $a, $r)], "y",
    "1/(1 + e^-x) as 1/(1 + e^-|x|), times e^x for negative x.">;

def MP_silu : MicroProgram<"silu", ["x"], SigmoidCore #
    [(flt:$neg $x, 0),
     (sel:$xs $neg, $xc, $x),                // x, or max(x, -104) when negative
     (fmul:$v $xs, $r),                      // x sigmoid(x) for x >= 0
     (fmul:$a $v, $e),
     (fmul:$a $a, 0x33800000),               // x e^x / (1 + e^x) for x < 0
     (sel:$y $neg, $a, $v)], "y",
    "x sigmoid(x); -0 at -inf.">;

def MP_silu_bwd : MicroProgram<"silu_bwd", ["x", "dy"], SigmoidCore #
    [(flt:$neg $x, 0),
     (fmul:$zr $z, $r),                      // 1 - sigmoid(|x|)
     (sel:$c $neg, $r, $zr),                 // 1 - sigmoid(x)
     (sel:$xs $neg, $xc, $x),
     (ffma:$g $xs, $c, 0x3f800000),          // 1 + x (1 - sigmoid(x))
     (fmul:$dp $r, $g),                      // sigmoid(x) g for x >= 0
     (fmul:$dn $e, $r),
     (fmul:$dn $dn, $g),
     (fmul:$dn $dn, 0x33800000),             // for x < 0
     (sel:$ds $neg, $dn, $dp),
     (fmul:$dx $ds, $dy)], "dx",
    "dy * silu'(x) = dy sigmoid(x) (1 + x (1 - sigmoid(x))).">;

// GELU, tanh form: 0.5 x (1 + tanh(v/2)) = x sigmoid(v) with
// v = 2 sqrt(2/pi) (x + 0.044715 x^3).
defvar GeluArgument = [
  (fmul:$w $x0, $x0),
  (ffma:$w $w, 0x3d922279, 0x3fcc422a),      // 2 sqrt(2/pi) (1 + 0.044715 x^2)
  (fmul:$x $x0, $w)                          // v
];

def MP_gelu : MicroProgram<"gelu", ["x0"], GeluArgument # SigmoidCore #
    [(flt:$neg $x0, 0),
     (fmax:$xk $x0, 0xc1800000),             // -16 (e^v is 0 there): keeps -inf * 0 away
     (fmul:$p $xk, $r),
     (fmul:$a $p, $e),
     (fmul:$a $a, 0x33800000),
     (sel:$y $neg, $a, $p)], "y",
    "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)).">;

def MP_gelu_bwd : MicroProgram<"gelu_bwd", ["x0", "dy"], GeluArgument # SigmoidCore #
    [(flt:$neg $x0, 0),
     (fmul:$zr $z, $r),
     (sel:$c $neg, $r, $zr),                 // 1 - sigmoid(v)
     (fmax:$xk $x0, 0xc1800000),             // |x| <= 16: 1 - sigmoid(v) is 0 beyond,
     (fmin:$xk $xk, 0x41800000),             // and x v' must stay finite
     (fmul:$dv $xk, $xk),
     (ffma:$dv $dv, 0x3e560ccd, 0x3fcc422a), // v' = 2 sqrt(2/pi) (1 + 3 * 0.044715 x^2)
     (fmul:$dv $dv, $xk),                    // x v'
     (ffma:$g $dv, $c, 0x3f800000),          // 1 + x v' (1 - sigmoid(v))
     (fmul:$dp $r, $g),
     (fmul:$dn $e, $r),
     (fmul:$dn $dn, $g),
     (fmul:$dn $dn, 0x33800000),
     (sel:$ds $neg, $dn, $dp),               // sigmoid(v) g
     (fmul:$dx $ds, $dy)], "dx",
    "dy * gelu'(x) = dy sigmoid(v) (1 + x v' (1 - sigmoid(v))) for the tanh form.">;

//===----------------------------------------------------------------------===//
// tanh
//===----------------------------------------------------------------------===//

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
// three-part pi/2, sin(r) and cos(r) by odd and even polynomials on
// |r| <= pi/4 (+ the reduction's slack). The parts of pi/2 are rounded
// down so that all three products with n = +0 are -0 and r keeps the sign
// of x = -0.
defvar SinCosCore = [
  (ffma:$t $x, 0x3f22f983, 0x4b400000),      // x * 2/pi + 1.5 * 2^23
  (fsub:$n $t, 0x4b400000),
  (ffma:$r $n, 0xbfc90fda, $x),
  (ffma:$r $n, 0xb3a22168, $r),
  (ffma:$r $n, 0xa7c234c5, $r),
  (fmin:$r $r, 0x3f4ccccd),                  // 0.8, 0.8: only arguments beyond the
  (fmax:$r $r, 0xbf4ccccd),                  // reduction's range get here; keeps |y| <= 1
  (fmul:$r2 $r, $r),
  (ffma:$s $r2, 0xb94c8dfa, 0x3c088363),
  (ffma:$s $s, $r2, 0xbe2aaaa2),
  (ffma:$s $s, $r2, 0x3f800000),
  (fmul:$s $r, $s),                          // sin(r) = r (1 + r^2 S(r^2)), keeps -0
  (ffma:$c $r2, 0x37ccf383, 0xbab60613),
  (ffma:$c $c, $r2, 0x3d2aaaa5),
  (ffma:$c $c, $r2, 0xbf000000),
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

def MP_sin : MicroProgram<"sin", ["x"],
    SinCosCore # SinCosQuadrant, "y",
    "sin(x): Cody-Waite reduction by pi/2, polynomials for sin and cos on [-pi/4, pi/4].">;
def MP_cos : MicroProgram<"cos", ["x"],
    SinCosCore # [(iadd:$t $t, 1)] # SinCosQuadrant, "y",
    "cos(x) = sin(x + pi/2) by the quadrant: the same reduction as sin.">;
