"""Every native op against PyTorch CPU: broadcasting, non-contiguous inputs,
size-1 and empty dims, functional / in-place / out forms. Each case asserts
that the op built packets and nothing fell back to the CPU."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import npu_bridge
from npu_testing import EXACT, SUMS, ULPS, native, op_packets
from op_samples import TOLERANCES, op_name, out_dtype, out_shapes, registered_ops, sample, written_arguments


def npu(t: torch.Tensor) -> torch.Tensor:
    return t.to("npu")


def check(result: torch.Tensor, expected: torch.Tensor, tolerance: dict[str, float]) -> None:
    assert result.device.type == "npu"
    torch.testing.assert_close(result.cpu(), expected, equal_nan=True, **tolerance)


# --- Binary elementwise ------------------------------------------------------------

BROADCAST_SHAPES = [
    ((3, 5), (3, 5)),  # same shape
    ((4, 6), (6,)),  # row vector
    ((4, 6), (4, 1)),  # column vector
    ((3, 4), ()),  # 0-dim npu tensor
    ((1, 6), (4, 6)),  # the left operand is the broadcast one
    ((4, 1), (1, 5)),  # both broadcast
    ((2, 3, 5), (2, 1, 5)),  # a row per outer slice
    ((2, 3, 5), (3, 1)),  # the same column per outer slice
    ((2, 1, 3, 1), (1, 4, 1, 5)),  # materialised
    ((2, 3, 2, 2, 3), (3, 1, 1, 3)),  # five dims
    ((1, 1), (1,)),
    ((0, 3), (3,)),  # empty
]

BINARY: dict[str, tuple[Callable, str, dict]] = {
    "add": (torch.add, "add", EXACT),
    "sub": (torch.sub, "sub", EXACT),
    "mul": (torch.mul, "mul", EXACT),
    "div": (torch.div, "div", EXACT),
    "maximum": (torch.maximum, "maximum", EXACT),
    "minimum": (torch.minimum, "minimum", EXACT),
}


def operands(shape_a, shape_b):
    a = torch.randn(shape_a)
    b = torch.randn(shape_b)
    return a, b.abs() + 0.5  # keep divisors away from zero


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_broadcasting(name, shapes):
    fn, op, tolerance = BINARY[name]
    a, b = operands(*shapes)
    with native(op) if a.numel() and b.numel() else native():
        result = fn(npu(a), npu(b))
    check(result, fn(a, b), tolerance)


def random_broadcast_pair(rng: torch.Generator) -> tuple[list[int], list[int]]:
    rank = int(torch.randint(1, 5, (1,), generator=rng))
    shape = [int(torch.randint(0, 5, (1,), generator=rng)) for _ in range(rank)]
    other = [1 if torch.rand(1, generator=rng) < 0.4 else size for size in shape]
    return shape, other[int(torch.randint(0, rank, (1,), generator=rng)):]


@pytest.mark.parametrize("seed", range(12))
def test_binary_random_shapes(seed):
    rng = torch.Generator().manual_seed(seed)
    shape_a, shape_b = random_broadcast_pair(rng)
    if seed % 2:
        shape_a, shape_b = shape_b, shape_a
    for name in ("add", "sub", "mul", "div"):
        fn, op, tolerance = BINARY[name]
        a, b = operands(shape_a, shape_b)
        expected = fn(a, b)
        with native(op) if expected.numel() else native():
            result = fn(npu(a), npu(b))
        check(result, expected, tolerance)


@pytest.mark.parametrize("seed", range(8))
def test_mm_random_shapes_and_layouts(seed):
    rng = torch.Generator().manual_seed(seed)
    m, k, n = (int(v) for v in torch.randint(1, 40, (3,), generator=rng))
    a = torch.randn(k, m).t() if seed % 2 else torch.randn(m, k)
    b = torch.randn(n, k).t() if seed % 3 else torch.randn(k, n)
    x, y = npu(a), npu(b)
    assert x.stride() == a.stride() and y.stride() == b.stride()  # transposes stay transposed
    with native("mm"):
        result = x @ y
    assert op_packets("mm") == 1
    check(result, a @ b, SUMS)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_non_contiguous_operands(name):
    fn, op, tolerance = BINARY[name]
    a = torch.randn(5, 3)
    b = torch.randn(3, 10).abs() + 0.5
    with native(op):
        result = fn(npu(a).t(), npu(b)[:, ::2])
    check(result, fn(a.t(), b[:, ::2]), tolerance)


@pytest.mark.parametrize(
    "expression",
    [
        lambda x: x + 2.5,
        lambda x: 2.5 - x,
        lambda x: x - 1,
        lambda x: x * -2,
        lambda x: x / 3,
        lambda x: torch.add(x, 1.5, alpha=2),
        lambda x: torch.sub(x, 1.5, alpha=0.5),
        lambda x: torch.rsub(x, 4.0),
    ],
)
def test_binary_with_python_scalars(expression):
    x = torch.randn(4, 7)
    with native():
        result = expression(npu(x))
    assert torch.npu.op_stats() and sum(s["packets"] for s in torch.npu.op_stats().values()) > 0
    check(result, expression(x), ULPS)


# A 0-dim CPU tensor on either side of a binary op: one scalar instruction
# computes `a op s` and another `s op a` (the bridge pairs them in
# ScalarForms, Ops.h); with alpha, s op alpha*a scales a first (MULS).
@pytest.mark.parametrize("scalar_first", [False, True], ids=["tensor_op_scalar", "scalar_op_tensor"])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_scalar_forms(name, scalar_first):
    fn = getattr(torch, name)
    x, s = torch.rand(4, 7) + 0.5, torch.tensor(1.75)
    kwargs = {"alpha": 2.5} if name in ("add", "sub") else {}
    with native(name):
        result = fn(s, npu(x), **kwargs) if scalar_first else fn(npu(x), s, **kwargs)
    assert op_packets(name) == (2 if scalar_first and kwargs else 1)
    check(result, fn(s, x, **kwargs) if scalar_first else fn(x, s, **kwargs), ULPS)


def test_binary_alpha():
    a, b = torch.randn(3, 8), torch.randn(8)
    with native("add", "sub"):
        added = torch.add(npu(a), npu(b), alpha=2.5)
        subtracted = torch.sub(npu(a), npu(b), alpha=-0.5)
    check(added, torch.add(a, b, alpha=2.5), ULPS)
    check(subtracted, torch.sub(a, b, alpha=-0.5), ULPS)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_in_place(name):
    fn, op, tolerance = BINARY[name]
    a, b = operands((4, 6), (6,))
    x = npu(a)
    with native(op + "_"):
        getattr(x, name + "_")(npu(b))
    check(x, fn(a, b), tolerance)
    # In place on a non-contiguous view writes through to its base.
    base = torch.randn(6, 4)
    y = npu(base)
    with native(op + "_"):
        getattr(y.t(), name + "_")(npu(b[:4]).unsqueeze(1))
    expected = base.clone()
    getattr(expected.t(), name + "_")(b[:4].unsqueeze(1))
    check(y, expected, tolerance)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum"])
def test_binary_out(name):
    fn, op, tolerance = BINARY[name]
    a, b = operands((3, 4), (4,))
    out = torch.empty(0, device="npu")
    with native(op + ".out"):
        fn(npu(a), npu(b), out=out)
    check(out, fn(a, b), tolerance)
    strided = torch.zeros(4, 3, device="npu").t()
    with native(op + ".out"):
        fn(npu(a), npu(b), out=strided)
    check(strided, fn(a, b), tolerance)


# --- Unary ---------------------------------------------------------------------------

POSITIVE = {"log", "rsqrt", "sqrt"}
def registered_unary_ops() -> list[str]:
    """The unary ATen ops of the registration lines (NPU_UNARY...): those of
    npu_bridge._C._instruction_ops() whose functional form takes one tensor.
    A new registration line is tested here with no edit."""
    return sorted(name for name in npu_bridge._C._instruction_ops()
                  if "." not in name and not name.endswith("_")
                  and len(getattr(torch.ops.aten, name).default._schema.arguments) == 1)


# The unary instructions that round once or not at all agree with the CPU to
# the bit; the micro-programmed functions to a few ulp.
EXACT_UNARY = {"neg", "reciprocal", "abs", "relu"}
UNARY = {name: EXACT if name in EXACT_UNARY else ULPS for name in registered_unary_ops()}


def test_the_unary_ops_are_the_registered_ones():
    assert {"neg", "exp", "erf", "relu"} <= UNARY.keys() and EXACT_UNARY <= UNARY.keys()


def unary_input(name: str, shape=(5, 9)) -> torch.Tensor:
    x = torch.randn(shape) * 3
    return x.abs() + 0.1 if name in POSITIVE else x


def unary_fn(name: str) -> Callable:
    return getattr(torch.ops.aten, name).default


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    x = unary_input(name)
    fn = unary_fn(name)
    with native(name):
        result = fn(npu(x))
    check(result, fn(x), UNARY[name])


@pytest.mark.parametrize("name", UNARY)
def test_unary_in_place_out_and_views(name):
    fn = unary_fn(name)
    x = unary_input(name, (6, 4))
    inplace = npu(x)
    with native(name + "_"):
        getattr(torch.ops.aten, name + "_")(inplace)
    check(inplace, fn(x), UNARY[name])
    out = torch.empty(0, device="npu")
    with native(name + ".out"):
        getattr(torch.ops.aten, name).out(npu(x), out=out)
    check(out, fn(x), UNARY[name])
    with native(name):
        transposed = fn(npu(x).t())
    check(transposed, fn(x.t()), UNARY[name])
    with native():
        empty = fn(torch.empty(0, 3, device="npu"))
    assert empty.shape == (0, 3)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_both_forms_are_native(approximate):
    # "none" (the exact GELU) runs GELU_ERF, "tanh" runs GELU.
    x = torch.randn(4, 10) * 3
    expected = F.gelu(x, approximate=approximate)
    with native("gelu"):
        result = F.gelu(npu(x), approximate=approximate)
    assert op_packets("gelu") == 1
    check(result, expected, ULPS)
    inplace = npu(x)
    with native("gelu_"):
        torch.ops.aten.gelu_(inplace, approximate=approximate)
    check(inplace, expected, ULPS)
    out = torch.empty(10, 4, device="npu").t()  # a transposed destination
    with native("gelu.out"):
        torch.ops.aten.gelu.out(npu(x), approximate=approximate, out=out)
    check(out, expected, ULPS)


def test_erf_and_exact_gelu_special_values():
    # docs/arith.md §4.1. PyTorch's CPU gelu computes 0.5·x·(1 + erf(x/√2)):
    # NaN at −inf and −0 once erf rounds to −1; GELU_ERF gives the limit −0
    # and the tail's tiny negative values.
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), 4.0, -4.0, float("nan")])
    with native("erf"):
        result = torch.erf(npu(x))
    check(result, torch.erf(x), EXACT)
    assert torch.equal(result.cpu().signbit(), torch.erf(x).signbit())
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), -8.0, -14.0, float("nan")])
    with native("gelu"):
        result = F.gelu(npu(x)).cpu()
    assert result[:4].tolist() == [0.0, 0.0, float("inf"), 0.0]
    assert result[[1, 3, 5]].signbit().all() and not result[0].signbit()
    assert -1e-14 < result[4] < 0  # x·Φ(x) = −8·6.2e−16
    assert result[6].isnan()


def test_erf_and_exact_gelu_run_under_strict_mode():
    x, g = torch.randn(3, 8) * 2, torch.randn(3, 8)
    torch.npu.set_strict(True)
    try:
        with native("erf", "gelu", "gelu_backward"):
            y = npu(x).requires_grad_()
            F.gelu(torch.erf(y)).backward(npu(g))
        assert op_packets("erf") == op_packets("gelu") == op_packets("gelu_backward") == 1
    finally:
        torch.npu.set_strict(False)
    leaf = x.clone().requires_grad_()
    F.gelu(torch.erf(leaf)).backward(g)
    check(y.grad, leaf.grad, ULPS)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, 1.7])
def test_pow_tensor_scalar(exponent):
    x = torch.rand(3, 7) + 0.25
    with native("pow"):
        result = npu(x).pow(exponent)
    check(result, x.pow(exponent), ULPS)
    y = npu(x)
    with native("pow_"):
        y.pow_(exponent)
    check(y, x.pow(exponent), ULPS)


# Bases and exponents whose special cases C99 F.9.4.4 names (torch.pow's CPU
# kernel follows them): zeros of both signs, +-1, infinities, NaN, negative
# bases under odd, even and non-integral exponents.
POW_SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -2.5, 1e-5, 1e30,
                float("inf"), float("-inf"), float("nan")]


def test_pow_tensor_tensor_on_special_pairs():
    """pow(Tensor, Tensor) on POW: every pair of special base and exponent,
    within ULPS of the CPU, infinities and NaNs where it has them."""
    values = torch.tensor(POW_SPECIALS)
    base, exponent = torch.meshgrid(values, values, indexing="ij")
    with native("pow"):
        result = torch.pow(npu(base), npu(exponent))
    check(result, torch.pow(base, exponent), ULPS)


@pytest.mark.parametrize("base_shape,exponent_shape", [
    ((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 7), (5, 1)), ((5, 7), ()), ((2, 3, 4), (3, 1)),
    ((1, 7), (5, 7))], ids=str)
def test_pow_tensor_tensor_broadcasts(base_shape, exponent_shape):
    base = torch.rand(base_shape) * 3
    exponent = torch.randn(exponent_shape) * 2
    with native("pow"):
        result = npu(base) ** npu(exponent)
    check(result, base ** exponent, ULPS)
    inplace = npu(base.expand(torch.broadcast_shapes(base_shape, exponent_shape)).contiguous())
    with native("pow_"):
        inplace.pow_(npu(exponent))
    check(inplace, base ** exponent, ULPS)
    out = npu(torch.empty(0))
    with native("pow.Tensor_Tensor_out"):
        torch.pow(npu(base), npu(exponent), out=out)
    check(out, base ** exponent, ULPS)


def test_pow_scalar_base_and_cpu_scalar_exponent():
    exponent = torch.randn(4, 6) * 3
    with native("pow.Scalar"):
        result = 2.5 ** npu(exponent)
    check(result, 2.5 ** exponent, ULPS)
    base = torch.rand(4, 6) + 0.5
    with native("pow"):
        result = torch.pow(npu(base), torch.tensor(1.5))  # a CPU 0-dim exponent
    check(result, torch.pow(base, torch.tensor(1.5)), ULPS)


def test_pow_tensor_tensor_gradients():
    base = (torch.rand(3, 5) + 0.5).requires_grad_()
    exponent = torch.randn(3, 5).requires_grad_()
    (base ** exponent).sum().backward()
    base_npu = npu(base.detach()).requires_grad_()
    exponent_npu = npu(exponent.detach()).requires_grad_()
    with native():
        (base_npu ** exponent_npu).sum().backward()
    check(base_npu.grad, base.grad, ULPS)
    check(exponent_npu.grad, exponent.grad, ULPS)


CLAMP_BOUNDS = [(-0.5, 0.75), (0.5, None), (None, -0.25), (1.0, -1.0), (float("nan"), 1.0)]


def test_unary_ops_with_scalar_operands_on_empty_tensors():
    """An empty input emits no packet (an instruction's count is at least 1)."""
    x = npu(torch.empty(0, 4))
    with native():
        results = [torch.clamp(x, -1.0, 1.0), x.clone().clamp_(-1.0, 1.0),
                   torch.clamp(x, -1.0, 1.0, out=npu(torch.empty(0, 4))), torch.pow(x, 3.5)]
    for result in results:
        assert result.shape == (0, 4)


@pytest.mark.parametrize("lo,hi", CLAMP_BOUNDS, ids=str)
def test_clamp_scalar_bounds(lo, hi):
    x = torch.randn(6, 5)
    x[0, 0] = float("nan")
    x[1, 1], x[1, 2] = float("inf"), -float("inf")
    with native("clamp"):
        result = torch.clamp(npu(x), lo, hi)
    check(result, torch.clamp(x, lo, hi), EXACT)
    inplace = npu(x)
    with native("clamp_"):
        inplace.clamp_(lo, hi)
    check(inplace, torch.clamp(x, lo, hi), EXACT)
    out = torch.zeros(5, 6, device="npu").t()
    with native("clamp.out"):
        torch.clamp(npu(x), lo, hi, out=out)
    check(out, torch.clamp(x, lo, hi), EXACT)
    with native("clamp"):
        transposed = torch.clamp(npu(x).t(), lo, hi)
    check(transposed, torch.clamp(x.t(), lo, hi), EXACT)


def test_clamp_gradient_is_right_with_its_mask_on_the_cpu():
    x = torch.randn(4, 6)
    x_npu = npu(x).requires_grad_()
    torch.npu.reset_stats()
    torch.clamp(x_npu, -0.5, 0.5).mul(npu(torch.arange(6.0))).sum().backward()
    x_cpu = x.clone().requires_grad_()
    torch.clamp(x_cpu, -0.5, 0.5).mul(torch.arange(6.0)).sum().backward()
    check(x_npu.grad, x_cpu.grad, EXACT)
    assert op_packets("clamp") == 1
    # The mask needs compares, which the ISA lacks; only they fall back.
    assert "aten::clamp" not in torch.npu.fallback_stats()


def test_clamp_without_bounds_is_an_error():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        torch.clamp(torch.ones(3, device="npu"))


# --- Matrix products ----------------------------------------------------------------


@pytest.mark.parametrize(
    "m,k,n", [(5, 7, 3), (1, 4, 1), (64, 64, 64), (3, 1, 2), (17, 33, 9)], ids=str
)
def test_mm(m, k, n):
    a, b = torch.randn(m, k), torch.randn(k, n)
    with native("mm"):
        result = torch.mm(npu(a), npu(b))
    check(result, a @ b, SUMS)


def test_mm_reads_transposes_and_pitched_rows_in_place():
    a, b = torch.randn(7, 5), torch.randn(9, 7)
    big = torch.randn(5, 12)
    cases = [
        (lambda x, y: x.t() @ y.t(), a, b),  # both transposed: flags
        (lambda x, y: x[:, 2:9] @ y[:7, :], big, torch.randn(7, 3)),  # row pitch 12
    ]
    for fn, x, y in cases:
        with native("mm"):
            result = fn(npu(x), npu(y))
        assert op_packets("mm") == 1, "a transposed or pitched operand was gathered"
        check(result, fn(x, y), SUMS)


def test_mm_gathers_other_layouts_on_the_device():
    a = torch.randn(10, 6)[::2]  # every other row: no single pitch... but a pitch of 12
    b = torch.randn(6, 8)[:, ::2]  # column stride 2: gathered
    with native("mm"):
        result = npu(a) @ npu(b)
    check(result, a @ b, SUMS)


def test_mm_edge_shapes_and_out():
    a, b = torch.randn(4, 0), torch.randn(0, 3)
    with native("mm"):
        zeros = torch.mm(npu(a), npu(b))
    check(zeros, torch.zeros(4, 3), EXACT)
    with native():
        empty = torch.mm(torch.empty(0, 3, device="npu"), npu(torch.randn(3, 2)))
    assert empty.shape == (0, 2)
    a, b = torch.randn(3, 5), torch.randn(5, 4)
    out = torch.zeros(4, 3, device="npu").t()
    with native("mm.out"):
        torch.mm(npu(a), npu(b), out=out)
    check(out, a @ b, SUMS)


@pytest.mark.parametrize("bias_shape", [(4,), (3, 4), (3, 1), (1,)], ids=str)
def test_addmm(bias_shape):
    bias, a, b = torch.randn(bias_shape), torch.randn(3, 6), torch.randn(6, 4)
    with native("addmm"):
        result = torch.addmm(npu(bias), npu(a), npu(b))
        scaled = torch.addmm(npu(bias), npu(a), npu(b), beta=0.5, alpha=2.0)
    check(result, torch.addmm(bias, a, b), SUMS)
    check(scaled, torch.addmm(bias, a, b, beta=0.5, alpha=2.0), SUMS)


def test_linear_and_matmul_paths():
    layer = torch.nn.Linear(16, 8)
    x2, x3 = torch.randn(5, 16), torch.randn(2, 5, 16)
    npu_layer = torch.nn.Linear(16, 8).to("npu")
    npu_layer.load_state_dict(layer.state_dict())
    with torch.no_grad(), native("addmm"):
        y2 = npu_layer(npu(x2))
        y3 = npu_layer(npu(x3))
    check(y2, layer(x2).detach(), SUMS)
    check(y3, layer(x3).detach(), SUMS)
    w = torch.randn(8, 16)
    with native("mm"):
        no_bias = F.linear(npu(x3), npu(w))
    assert op_packets("mm") == 1, "the transposed weight was gathered"
    check(no_bias, F.linear(x3, w), SUMS)


def test_matrix_vector_and_dot_products():
    a, v, w = torch.randn(5, 7), torch.randn(7), torch.randn(14)
    with native("mv", "dot"):
        product = npu(a) @ npu(v)
        strided = torch.mv(npu(a), npu(w)[::2])
        inner = npu(v) @ npu(w)[1::2]
    check(product, a @ v, SUMS)
    check(strided, a @ w[::2], SUMS)
    check(inner, v @ w[1::2], SUMS)


def test_bmm_and_attention_shaped_matmul():
    a, b = torch.randn(3, 4, 5), torch.randn(3, 5, 6)
    with native("bmm"):
        result = torch.bmm(npu(a), npu(b))
    check(result, torch.bmm(a, b), SUMS)
    q, k = torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16)
    with native("bmm"):
        scores = npu(q) @ npu(k).transpose(-1, -2)
    assert op_packets("bmm") == 1, "the transposed keys were gathered"
    check(scores, q @ k.transpose(-1, -2), SUMS)
    shared = torch.randn(5, 6)
    with native():
        broadcast = npu(a) @ npu(shared)
    check(broadcast, a @ shared, SUMS)
    with native("bmm"):
        expanded = torch.bmm(npu(a), npu(shared).expand(3, 5, 6))
    check(expanded, torch.bmm(a, shared.expand(3, 5, 6)), SUMS)
    out = torch.empty(0, device="npu")
    with native("bmm.out"):
        torch.bmm(npu(a), npu(b), out=out)
    check(out, torch.bmm(a, b), SUMS)


# --- Reductions ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sum", "mean", "amax"])
@pytest.mark.parametrize(
    "dim,keepdim", [(-1, False), (0, True), ((0, 2), False), ((1,), True), (None, False)], ids=str
)
def test_reductions(name, dim, keepdim):
    x = torch.randn(3, 4, 5)
    fn = getattr(torch, name)

    def apply(t):
        if dim is None:
            return fn(t) if name != "amax" else t.amax()
        return fn(t, dim, keepdim=keepdim)

    with native(name):
        result = apply(npu(x))
    check(result, apply(x), SUMS)
    with native(name):
        transposed = apply(npu(x).transpose(0, 2))
    check(transposed, apply(x.transpose(0, 2)), SUMS)


def test_reductions_of_empty_dims_and_out():
    x = torch.randn(3, 0)
    with native("sum", "mean"):
        sums = npu(x).sum(1)
        means = npu(x).mean(1)
    check(sums, x.sum(1), EXACT)
    check(means, x.mean(1), EXACT)
    y = torch.randn(4, 6)
    out = torch.empty(0, device="npu")
    with native("sum.out"):
        torch.sum(npu(y), 1, out=out)
    check(out, y.sum(1), SUMS)


def test_sums_of_types_outside_the_isa_fall_back():
    values = torch.arange(5, dtype=torch.int16)
    torch.npu.reset_stats()
    assert npu(values).sum().item() == values.sum().item()
    assert "aten::sum" in torch.npu.fallback_stats()


# --- Softmax, RMS norm, embedding ------------------------------------------------------


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(dim, log):
    x = torch.randn(3, 5, 7) * 4
    fn = F.log_softmax if log else F.softmax
    op = "_log_softmax" if log else "_softmax"
    with native(op):
        result = fn(npu(x), dim=dim)
        transposed = fn(npu(x).transpose(0, 2), dim=dim)
    check(result, fn(x, dim=dim), ULPS)
    check(transposed, fn(x.transpose(0, 2), dim=dim), ULPS)


def test_safe_softmax_zeroes_fully_masked_rows():
    x = torch.randn(4, 6)
    x[1] = -math.inf
    x[2, :3] = -math.inf
    with native("_safe_softmax"):
        result = torch.ops.aten._safe_softmax(npu(x), -1)
    check(result, torch.ops.aten._safe_softmax(x, -1), ULPS)


@pytest.mark.parametrize("weighted", [False, True])
def test_rms_norm(weighted):
    x = torch.randn(2, 5, 16)
    weight = torch.randn(16) if weighted else None
    with native("_fused_rms_norm"):
        result = F.rms_norm(npu(x), [16], npu(weight) if weighted else None, eps=1e-5)
    check(result, F.rms_norm(x, [16], weight, eps=1e-5), ULPS)
    module = torch.nn.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        module.weight.copy_(torch.randn(16))
        expected = module(x)
        module.to("npu")
        with native("_fused_rms_norm"):
            got = module(npu(x).transpose(0, 1)).transpose(0, 1)
    check(got, expected, ULPS)


@pytest.mark.parametrize("weighted,biased", [(False, False), (True, False), (False, True), (True, True)])
def test_layer_norm_forward_is_native(weighted, biased):
    x = torch.randn(3, 5, 16) * 4 + 2
    weight = torch.randn(16) if weighted else None
    bias = torch.randn(16) if biased else None
    with native("native_layer_norm"):
        out, mean, rstd = torch.ops.aten.native_layer_norm(
            npu(x).transpose(0, 1), [16], npu(weight) if weighted else None,
            npu(bias) if biased else None, 1e-5)
    want, want_mean, want_rstd = torch.ops.aten.native_layer_norm(
        x.transpose(0, 1), [16], weight, bias, 1e-5)
    check(out, want, SUMS)
    assert mean.shape == want_mean.shape and rstd.shape == want_rstd.shape
    check(mean, want_mean, SUMS)
    check(rstd, want_rstd, SUMS)
    module = torch.nn.LayerNorm([4, 16])
    with torch.no_grad():
        module.weight.copy_(torch.randn(4, 16))
        module.bias.copy_(torch.randn(4, 16))
        x2 = torch.randn(2, 4, 16)
        expected = module(x2)
        module.to("npu")
        with native("native_layer_norm"):
            got = module(npu(x2))
    check(got, expected, SUMS)


# The backward sums g and g * xhat over a row in another order than the CPU
# kernel, and the difference of those means cancels: docs/arith.md
# (LAYERNORM_BWD).
LAYER_NORM_GRADIENTS = {"rtol": 1e-4, "atol": 1e-4}


@pytest.mark.parametrize("weighted,biased", [(False, False), (True, False), (False, True), (True, True)])
def test_layer_norm_backward_is_native(weighted, biased):
    """F.layer_norm's gradients (input, weight, bias) by LAYERNORM_BWD and
    COL_SUM, on a strided input, against the CPU (docs/arith.md)."""
    x = torch.randn(3, 5, 16) * 4 + 2
    weight = torch.randn(16) if weighted else None
    bias = torch.randn(16) if biased else None
    grad = torch.randn(5, 3, 16)
    inputs = [t for t in (x, weight, bias) if t is not None]

    def layer_norm(*leaves):
        rest = iter(leaves[1:])
        w = next(rest) if weighted else None
        b = next(rest) if biased else None
        return F.layer_norm(leaves[0].transpose(0, 1), [16], w, b, 1e-5)

    leaves = [npu(t).requires_grad_() for t in inputs]
    with native("native_layer_norm", "native_layer_norm_backward"):
        layer_norm(*leaves).backward(npu(grad))
    cpu_leaves = [t.clone().requires_grad_() for t in inputs]
    layer_norm(*cpu_leaves).backward(grad)
    for got, want in zip(leaves, cpu_leaves, strict=True):
        check(got.grad, want.grad, LAYER_NORM_GRADIENTS)


def test_layer_norm_backward_output_mask_and_empty_rows():
    """Only the gradients asked for are computed; no rows give zero weight
    and bias gradients."""
    x, weight, bias = torch.randn(4, 8), torch.randn(8), torch.randn(8)
    grad = torch.randn(4, 8)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [8], weight, bias, 1e-5)
    want = torch.ops.aten.native_layer_norm_backward(grad, x, [8], mean, rstd, weight, bias,
                                                     [False, True, False])
    with native("native_layer_norm_backward"):
        got = torch.ops.aten.native_layer_norm_backward(
            npu(grad), npu(x), [8], npu(mean), npu(rstd), npu(weight), npu(bias),
            [False, True, False])
    assert got[0] is None and got[2] is None
    check(got[1], want[1], LAYER_NORM_GRADIENTS)
    empty = torch.empty(0, 8)
    with native("native_layer_norm_backward"):
        got = torch.ops.aten.native_layer_norm_backward(
            npu(empty), npu(empty), [8], npu(torch.empty(0, 1)), npu(torch.empty(0, 1)),
            npu(weight), npu(bias), [True, True, True])
    assert got[0].shape == (0, 8)
    check(got[1], torch.zeros(8), EXACT)
    check(got[2], torch.zeros(8), EXACT)


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_embedding(index_dtype):
    table = torch.randn(11, 6)
    indices = torch.randint(0, 11, (3, 4), dtype=index_dtype)
    with native("embedding"):
        result = F.embedding(npu(indices), npu(table))
    check(result, F.embedding(indices, table), EXACT)
    module = torch.nn.Embedding(11, 6)
    expected = module(indices.long()).detach()
    module.to("npu")
    with torch.no_grad(), native("embedding"):
        got = module(npu(indices))
    check(got, expected, EXACT)


# --- Selection and shape ---------------------------------------------------------------


def test_where_and_masked_fill_with_infinities():
    x, y = torch.randn(4, 5), torch.randn(5)
    cond = torch.rand(4, 5) > 0.5
    row_mask = torch.rand(5) > 0.5
    cases = [
        (lambda c, a, b: torch.where(c, a, b), (cond, x, y)),
        (lambda c, a, b: torch.where(c, a, -math.inf), (cond, x, y)),
        (lambda c, a, b: torch.where(c, 0.0, torch.finfo(torch.float32).min), (cond, x, y)),
        (lambda c, a, b: a.masked_fill(c, -math.inf), (row_mask, x, y)),
        (lambda c, a, b: a.masked_fill(c, torch.tensor(2.5)), (cond, x, y)),
    ]
    for fn, args in cases:
        torch.npu.reset_stats()
        result = fn(*(npu(t) for t in args))
        torch.npu.synchronize()
        assert torch.npu.fallback_stats() == {}
        check(result, fn(*args), EXACT)
    z = npu(x)
    with native("masked_fill_"):
        z.masked_fill_(npu(cond), 0.0)
    check(z, x.masked_fill(cond, 0.0), EXACT)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim):
    parts = [torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4)]
    with native("cat"):
        result = torch.cat([npu(p) for p in parts], dim=dim)
        mixed = torch.cat([npu(parts[0]).transpose(0, 1).transpose(0, 1), npu(parts[1])], dim=dim)
    check(result, torch.cat(parts, dim=dim), EXACT)
    check(mixed, torch.cat(parts[:2], dim=dim), EXACT)
    ints = [torch.arange(6).view(2, 3), torch.arange(4).view(2, 2)]
    with native("cat"):
        joined = torch.cat([npu(t) for t in ints], dim=1)
    assert torch.equal(joined.cpu(), torch.cat(ints, dim=1))
    with native("cat"):
        with_empty = torch.cat([npu(parts[0]), torch.empty(0, device="npu")])
    check(with_empty, parts[0], EXACT)


def test_clone_and_contiguous_gather_on_the_device():
    x = torch.randn(3, 4, 5)
    view = npu(x).permute(2, 0, 1)
    with native("_copy_from"):
        copied = view.contiguous()
        cloned = view.clone()
    assert copied.is_contiguous()
    check(copied, x.permute(2, 0, 1).contiguous(), EXACT)
    check(cloned, x.permute(2, 0, 1), EXACT)


def test_rms_norm_gradient_is_native():
    # Once the forward is an NPU op, autograd asks the NPU for its gradient.
    x, weight = torch.randn(3, 5, 8), torch.randn(8)
    cpu_x, cpu_w = x.clone().requires_grad_(), weight.clone().requires_grad_()
    F.rms_norm(cpu_x, [8], cpu_w, eps=1e-6).mul(torch.arange(8.0)).sum().backward()
    npu_x, npu_w = npu(x).requires_grad_(), npu(weight).requires_grad_()
    out = F.rms_norm(npu_x, [8], npu_w, eps=1e-6)
    with native("_fused_rms_norm_backward"):
        out.mul(npu(torch.arange(8.0))).sum().backward()
    check(npu_x.grad, cpu_x.grad, SUMS)
    check(npu_w.grad, cpu_w.grad, SUMS)


# --- Every registered op on its sample -----------------------------------------------

# Registered ops with no result to compare with the CPU's: metadata,
# allocation, random fills, transfers between devices, dispatch choices.
NOT_COMPUTED = {
    "aten::_copy_from": "copies between devices (test_copy_views.py)",
    "aten::_copy_from_and_resize": "copies between devices (test_copy_views.py)",
    "aten::_to_cpu": "the CPU fallback's transfer (test_fallback.py)",
    "aten::_has_compatible_shallow_copy_type": "compares tensor types (test_module_move.py)",
    "aten::_fused_sdp_choice": "picks an attention implementation",
    "aten::_local_scalar_dense": "one host copy (test_copy_views.py)",
    "aten::empty.memory_format": "allocation",
    "aten::empty_strided": "allocation",
    "aten::resize_": "metadata (test_memory.py)",
    "aten::set_": "metadata (test_memory.py)",
    "aten::set_.source_Storage": "metadata (test_memory.py)",
    "aten::set_.source_Storage_storage_offset": "metadata (test_memory.py)",
    "aten::set_.source_Tensor": "metadata (test_memory.py)",
    "aten::normal_": "random (test_device.py)",
    "aten::native_dropout": "random (test_dropout.py)",
    "aten::convolution_overrideable": "the CPU convolution on host copies (test_fallback.py)",
    "aten::convolution_backward_overrideable": "the CPU convolution on host copies (test_fallback.py)",
    "aten::uniform_": "random (test_device.py)",
    "aten::_fused_rms_norm_backward": "no CPU kernel: test_rms_norm_gradient_is_native checks it against autograd on the CPU",
    "aten::record_stream": "stream bookkeeping, no CPU kernel (test_streams_events.py)",
}


def computed_ops() -> list[torch._ops.OpOverload]:
    return [op for op in registered_ops() if op_name(op) not in NOT_COMPUTED]


def on_npu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to("npu")
    if isinstance(value, list):
        return [on_npu(v) for v in value]
    return value


def cloned(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list):
        return [cloned(v) for v in value]
    return value


def tensors_of(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    return []


@pytest.mark.parametrize("op", computed_ops(), ids=op_name)
def test_every_registered_op_on_its_sample_matches_the_cpu(op):
    """The op's sample (op_samples.py: a new op's one place) on the npu and
    on the CPU: no fallback, and every result and written argument agree to
    the op's tolerance (op_samples.TOLERANCES, else SUMS)."""
    kwargs = sample(op)
    outs = out_shapes(op, kwargs)
    cpu_kwargs = {name: cloned(value) for name, value in kwargs.items()}
    npu_kwargs = {name: on_npu(value) for name, value in kwargs.items()}
    for name, shape in outs.items():
        cpu_kwargs[name] = torch.empty(shape, dtype=out_dtype(op))
        npu_kwargs[name] = torch.empty(shape, dtype=out_dtype(op), device="npu")
    expected = op(**cpu_kwargs)
    with native():
        result = op(**npu_kwargs)
    tolerance = TOLERANCES.get(op_name(op), SUMS)
    written = [a.name for a in written_arguments(op)]
    pairs = list(zip(tensors_of(result), tensors_of(expected), strict=True)) + [
        pair for name in written for pair in zip(tensors_of(npu_kwargs[name]), tensors_of(cpu_kwargs[name]), strict=True)]
    assert pairs, f"{op_name(op)} returned and wrote no tensor"
    for got, want in pairs:
        assert got.device.type == "npu"
        torch.testing.assert_close(got.cpu(), want, equal_nan=True, **tolerance)


@pytest.mark.parametrize("ord_, dim, keepdim", [
    (2, None, False), (2, (0, 2), True), (1, -1, False), (float("inf"), (1,), False), (float("inf"), None, True),
])
def test_vector_norm_is_native_for_orders_2_1_and_inf(ord_, dim, keepdim):
    x = torch.randn(3, 5, 7)
    with native():
        got = torch.linalg.vector_norm(x.npu(), ord_, dim, keepdim)
    torch.testing.assert_close(got.cpu(), torch.linalg.vector_norm(x, ord_, dim, keepdim), rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_runs_on_the_npu_without_fallback():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    reference.load_state_dict(model.state_dict())
    x = torch.randn(4, 8)
    reference(x).square().sum().backward()
    expected = torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
    model.npu()(x.npu()).square().sum().backward()
    torch.npu.reset_stats()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    assert torch.npu.fallback_stats() == {}
    torch.testing.assert_close(total.cpu(), expected, rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-5, atol=1e-6)
