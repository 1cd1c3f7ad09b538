#!/usr/bin/env python3
"""Derives the polynomial coefficients of isa/microcode.td.

Each polynomial is a near-minimax fit of its target function in relative (or
absolute) error over a dense grid (Lawson's iteratively reweighted least
squares), with the coefficients then rounded to binary32 one at a time, from
the lowest degree up, refitting the remaining ones after each rounding so that
they absorb the rounding error. Prints each fit as .td constants with the
achieved error; `npu-ulp` measures the programs that use them.

    scripts/fit-microcode-polynomials.py [name ...]
"""
import math
import struct
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 40


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def lawson(basis, target, weight, iterations=400):
    """Minimises max |weight * (basis @ c - target)| over the grid."""
    lw = np.full(len(target), 1.0 / len(target))
    coeffs = None
    for _ in range(iterations):
        sw = np.sqrt(lw)
        a = basis * (weight * sw)[:, None]
        b = target * weight * sw
        coeffs, *_ = np.linalg.lstsq(a, b, rcond=None)
        err = np.abs(weight * (basis @ coeffs - target))
        lw = lw * err
        total = lw.sum()
        if total == 0:
            break
        lw /= total
    return coeffs


def fit(name, func, lo, hi, powers, fixed=None, relative=True, points=4000, scale=None,
        negated_argument=False):
    """Fits func(x) ~ sum(fixed) + sum c_k x^k over [lo, hi] for k in powers.

    fixed: {power: value} terms that are not fitted (e.g. the leading 1).
    scale: optional function s(x) the error is measured relative to instead
    of func itself.
    negated_argument: also print the coefficients for the argument -x
    (c_k (-1)^k), as the programs that evaluate on -m use them.
    """
    fixed = fixed or {}
    # Chebyshev-distributed points resolve the error equioscillation well.
    t = np.cos(np.linspace(0, math.pi, points))
    xs = np.sort(lo + (hi - lo) * (t + 1) / 2)
    ys = np.array([float(func(mpmath.mpf(float(x)))) for x in xs])
    base = np.zeros_like(xs)
    for p, v in fixed.items():
        base += v * xs**p
    ref = np.abs(ys if scale is None else np.array([float(scale(x)) for x in xs]))
    weight = 1.0 / ref if relative else np.ones_like(xs)
    remaining = list(powers)
    rounded = {}
    while remaining:
        basis = np.stack([xs**p for p in remaining], axis=1)
        target = ys - base - sum((rounded[p] * xs**p for p in rounded), np.zeros_like(xs))
        coeffs = lawson(basis, target, weight)
        p = remaining.pop(0)
        rounded[p] = f32(coeffs[0])
    approx = base + sum(rounded[p] * xs**p for p in rounded)
    err = np.max(np.abs(weight * (approx - ys)))
    print(f"{name}: [{lo:.6g}, {hi:.6g}] max {'rel' if relative else 'abs'} error "
          f"{err:.3g} = 2^{math.log2(err) if err else -math.inf:.2f}")
    for p in powers:
        line = f"  x^{p}: 0x{bits(rounded[p]):08x}  // {rounded[p]!r}"
        if negated_argument:
            line += f"   for -x: 0x{bits(rounded[p] * (-1) ** p):08x}"
        print(line)
    return rounded


ERF_SMALL = 0.921875  # 0x3f6c0000: erf's switch from x (1 + Q) to 1 - erfc
ERFC_CENTER = 5.71  # 0x40b6b852, as the program forms v = t - ERFC_CENTER


def erf_over_x_minus_1(s):
    if s == 0:
        return 2 / mpmath.sqrt(mpmath.pi) - 1
    x = mpmath.sqrt(s)
    return mpmath.erf(x) / x - 1


def log_erfcx(t):
    return mpmath.log(mpmath.erfc(t)) + t * t


def normal_cdf(x):
    return mpmath.erfc(-x / mpmath.sqrt(2)) / 2


def phi_over_x(w):
    if w == 0:
        return 1 / mpmath.sqrt(2 * mpmath.pi)
    x = mpmath.sqrt(w)
    return (normal_cdf(x) - mpmath.mpf(0.5)) / x


LN2 = math.log(2)
SQRT_HALF = math.sqrt(0.5)
FITS = {
    # exp(r) on [0, ln2] (floor reduction); the constant term is exactly 1.
    "exp": lambda: fit("exp", mpmath.exp, -1e-6, LN2 + 1e-6, range(1, 7), fixed={0: 1.0}),
    # log(1 + f) = f + f^2 Q(f) for m = 1 + f in [sqrt(1/2), sqrt(2)).
    "log": lambda: fit("log", mpmath.log1p, SQRT_HALF - 1, math.sqrt(2) - 1, range(2, 11),
                       fixed={1: 1.0}),
    # log(1 + f) = f - f^2/2 + f^3 Q(f) for pow (its f - f^2/2 is summed exactly).
    "pow": lambda: fit("pow", mpmath.log1p, SQRT_HALF - 1, math.sqrt(2) - 1, range(3, 12),
                       fixed={1: 1.0, 2: -0.5}),
    # First guess of 1/m on [1, 2] (recip, div, and 1/(1 + z) in the sigmoid family).
    "recip": lambda: fit("recip", lambda m: 1 / m, 1.0, 2.0, range(0, 3), negated_argument=True),
    # First guess of 1/sqrt(m) on [1/2, 2] (rsqrt and sqrt).
    "rsqrt": lambda: fit("rsqrt", lambda m: 1 / mpmath.sqrt(m), 0.5, 2.0, range(0, 4),
                         negated_argument=True),
    # tanh(x) = x + x^3 P(x^2) below 0.55.
    "tanh": lambda: fit("tanh", mpmath.tanh, 1e-4, 0.55, [3, 5, 7, 9, 11], fixed={1: 1.0}),
    # sin and cos on |r| <= pi/4 plus the reduction's slack up to |x| = 2^22.
    "sin": lambda: fit("sin", mpmath.sin, 1e-4, 0.96, [3, 5, 7, 9], fixed={1: 1.0}),
    "cos": lambda: fit("cos", mpmath.cos, 0, 0.96, [2, 4, 6, 8], fixed={0: 1.0}),
    # erf(x) = x (1 + Q(x^2)) below ERF_SMALL, in relative error of erf(x)/x.
    "erf": lambda: fit("erf", erf_over_x_minus_1, 0, ERF_SMALL**2, range(0, 6),
                       scale=lambda s: erf_over_x_minus_1(s) + 1),
    # erfc(t) = exp(-t^2 + q(t)) for t in [0.9, 10.5] (erf above ERF_SMALL, and the
    # normal tail of gelu_erf down to its underflow): q(t) = log(erfcx(t)) in
    # absolute error (= the relative error of erfc), as a polynomial in
    # v = t - ERFC_CENTER because the monomials of t up to 10.5 round badly.
    "erfc": lambda: fit("erfc", lambda v: log_erfcx(v + ERFC_CENTER), 0.9 - ERFC_CENTER,
                        10.5 - ERFC_CENTER, range(0, 13), relative=False),
    # Phi(x) = 0.5 + x R(x^2) for |x| < 1.3 (gelu_erf), relative to Phi(-|x|)
    # (the smaller of the two it gives).
    "gelu_erf": lambda: fit("gelu_erf", phi_over_x, 0, 1.3**2, range(0, 6),
                            scale=lambda w: normal_cdf(-mpmath.sqrt(w)) / mpmath.sqrt(max(w, 1e-30))),
}


def main():
    names = sys.argv[1:] or list(FITS)
    for n in names:
        FITS[n]()


if __name__ == "__main__":
    main()
