"""Integer arithmetic on the npu (docs/types.md §3): ADD SUB MUL MAX MIN NEG,
the bitwise AND OR XOR NOT and the shifts SHL SHR on int32 and int64 tensors, with broadcasting, Python scalars and mixed-type
operands (PyTorch's type promotion, the converting side cast on the
device), compared with PyTorch CPU exactly (integers wrap around)."""

from __future__ import annotations

import operator

import pytest
import torch
from npu_testing import native

INTEGERS = [torch.int32, torch.int64]


def values(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Random integers over the whole range with the edge values mixed in:
    sums and products wrap around, carries cross an int64's low word."""
    g = torch.Generator().manual_seed(seed)
    info = torch.iinfo(dtype)
    t = torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)
    flat = t.view(-1)
    edges = torch.tensor([0, 1, -1, info.min, info.max, 2, -2, 0xFFFFFFFF if dtype == torch.int64
                          else 0x7FFF], dtype=dtype)
    flat[: min(flat.numel(), edges.numel())] = edges[: flat.numel()]
    if dtype == torch.int64 and flat.numel() > 12:
        flat[8:12] = torch.tensor([(1 << 32) - 1, 1 << 32, -(1 << 32), (1 << 31)], dtype=dtype)
    return t


OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "maximum": torch.maximum, "minimum": torch.minimum,
       "and": operator.and_, "or": operator.or_, "xor": operator.xor}


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shapes", [((37,), (37,)), ((5, 9), (9,)), ((5, 9), (5, 1)),
                                    ((3, 4, 6), (3, 1, 6)), ((6, 7), ())],
                         ids=["same", "row", "col", "slices", "scalar_tensor"])
def test_binary_ops_on_integers_match_the_cpu(dtype, name, shapes):
    op = OPS[name]
    a, b = values(shapes[0], dtype, 1), values(shapes[1], dtype, 2)
    with native():
        result = op(a.to("npu"), b.to("npu"))
    assert result.dtype == dtype
    assert torch.equal(result.cpu(), op(a, b))


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
def test_python_scalars_and_in_place_forms(dtype):
    a = values((4, 33), dtype, 3)
    d = a.to("npu")
    with native():
        plus = d + 7
        minus = 5 - d
        times = d * -3
        d.add_(11)
        d.sub_(torch.tensor(2, dtype=dtype).to("npu"))
    assert torch.equal(plus.cpu(), a + 7)
    assert torch.equal(minus.cpu(), 5 - a)
    assert torch.equal(times.cpu(), a * -3)
    assert torch.equal(d.cpu(), a + 11 - 2)


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
def test_bitwise_forms_on_integers_and_bools(dtype):
    a = values((4, 33), dtype, 5)
    flags = values((4, 33), dtype, 6) > 0
    d = a.to("npu")
    with native("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_and_"):
        results = {
            "and scalar": d & 0x5A5A, "or scalar": 3 | d, "xor scalar": d ^ -1,
            "not": ~d, "and bool": d & flags.to("npu"), "or bool": flags.to("npu") | d,
            "not bool": ~flags.to("npu"),
        }
        d &= torch.tensor(0x0FF0, dtype=dtype).to("npu")
    expected = {
        "and scalar": a & 0x5A5A, "or scalar": 3 | a, "xor scalar": a ^ -1, "not": ~a,
        "and bool": a & flags, "or bool": flags | a, "not bool": ~flags,
    }
    for name, result in results.items():
        assert result.dtype == expected[name].dtype, name
        assert torch.equal(result.cpu(), expected[name]), name
    assert torch.equal(d.cpu(), a & 0x0FF0)


def shift_amounts(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Amounts inside the width and outside it (negative, the width, past
    it), which PyTorch's CPU defines as 0 or the sign fill."""
    bits = torch.iinfo(dtype).bits
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(-3, bits + 3, shape, generator=g, dtype=dtype)
    edges = torch.tensor([0, 1, bits - 1, bits, bits + 1, -1, 31, 32, 33, 63, 64], dtype=dtype)
    t.view(-1)[: min(t.numel(), edges.numel())] = edges[: t.numel()]
    return t


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
@pytest.mark.parametrize("shapes", [((37,), (37,)), ((5, 9), (9,)), ((5, 9), (5, 1)), ((6, 7), ())],
                         ids=["same", "row", "col", "scalar_tensor"])
def test_shifts_match_the_cpu_with_amounts_outside_the_width(dtype, shapes):
    a, amounts = values(shapes[0], dtype, 9), shift_amounts(shapes[1], dtype, 10)
    d, n = a.to("npu"), amounts.to("npu")
    with native("bitwise_left_shift", "bitwise_right_shift"):
        left, right = d << n, d >> n
        functional = torch.bitwise_left_shift(d, n), torch.bitwise_right_shift(d, n)
    for got, want in [(left, a << amounts), (right, a >> amounts),
                      (functional[0], a << amounts), (functional[1], a >> amounts)]:
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
def test_shifts_by_python_scalars_and_in_place(dtype):
    a = values((4, 33), dtype, 11)
    d = a.to("npu")
    with native("bitwise_left_shift", "bitwise_right_shift", "bitwise_left_shift_",
                "bitwise_right_shift_"):
        results = [d << 3, d >> 5, d << 40, d >> 70, d >> 0,
                   torch.bitwise_left_shift(7, d & 15)]
        inplace = d.clone()
        inplace <<= 2
        inplace >>= torch.tensor(1, dtype=dtype).to("npu")
    expected = [a << 3, a >> 5, a << 40, a >> 70, a >> 0, torch.bitwise_left_shift(7, a & 15)]
    for got, want in zip(results, expected):
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
    assert torch.equal(inplace.cpu(), (a << 2) >> 1)


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
def test_integer_negation_wraps(dtype):
    a = values((3, 17), dtype, 12)
    with native("neg"):
        negated = -a.to("npu")
    assert torch.equal(negated.cpu(), -a)  # -min is min


def test_mixed_types_promote_as_pytorch_does():
    i32 = values((6, 5), torch.int32, 4)
    i64 = values((6, 5), torch.int64, 5)
    f32 = torch.randn(6, 5)
    with native():
        wide = i32.to("npu") + i64.to("npu")          # int64
        real = i64.to("npu") * f32.to("npu")           # float32: i64 cast on the device
        half = i32.to("npu") * 0.5                     # float32
        ratio = i32.to("npu") / i64.to("npu")          # true division: float32
    assert wide.dtype == torch.int64 and torch.equal(wide.cpu(), i32 + i64)
    assert real.dtype == torch.float32 and torch.equal(real.cpu(), i64 * f32)
    assert torch.equal(half.cpu(), i32 * 0.5)
    torch.testing.assert_close(ratio.cpu(), i32 / i64, rtol=0, atol=0, equal_nan=True)  # 0/0


def test_views_at_odd_offsets_and_out_forms():
    a = values((8, 9), torch.int64, 6)
    d = a.to("npu")
    out = torch.empty(8, 8, dtype=torch.int64, device="npu")
    with native():
        torch.add(d[:, 1:], d[:, :-1], out=out)
        transposed = d.t() * d.t()
    assert torch.equal(out.cpu(), a[:, 1:] + a[:, :-1])
    assert torch.equal(transposed.cpu(), a.t() * a.t())


def test_integer_alpha_scales_the_second_operand():
    a, b = values((5, 8), torch.int64, 7), values((5, 8), torch.int32, 8)
    with native("add", "sub"):
        plus = torch.add(a.to("npu"), b.to("npu"), alpha=3)
        minus = torch.sub(b.to("npu"), b.to("npu")[0], alpha=-7)
    assert torch.equal(plus.cpu(), torch.add(a, b, alpha=3))
    assert torch.equal(minus.cpu(), torch.sub(b, b[0], alpha=-7))


def test_what_the_isa_has_no_instruction_for_still_falls_back():
    flags = (torch.arange(10) % 3 == 0).to("npu")
    torch.npu.reset_stats()
    # bool + bool is a logical or: ADD has no b8 form.
    assert torch.equal((flags + flags).cpu(), flags.cpu() + flags.cpu())
    assert "aten::add.Tensor" in torch.npu.fallback_stats()
