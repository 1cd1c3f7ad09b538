"""Comparisons on the npu (EQ NE LT LE GT GE into bool masks), in PyTorch's
promoted type, against PyTorch CPU exactly."""

from __future__ import annotations

import operator

import pytest
import torch
from npu_testing import native

COMPARES = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}


def values(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        t = torch.randint(-3, 4, shape, generator=g).to(dtype)  # ties are common
        flat = t.view(-1)
        flat[:4] = torch.tensor([float("nan"), -0.0, float("inf"), -float("inf")])[: flat.numel()]
        return t
    info = torch.iinfo(dtype)
    t = torch.randint(-3, 4, shape, generator=g, dtype=dtype)
    flat = t.view(-1)
    edges = torch.tensor([info.min, info.max, -1, 0], dtype=dtype)
    flat[:4] = edges[: flat.numel()]
    if dtype == torch.int64 and flat.numel() > 6:
        flat[4:6] = torch.tensor([1 << 32, -(1 << 32)])  # equal low words, different high
    return t


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("name", COMPARES)
@pytest.mark.parametrize("shapes", [((40,), (40,)), ((5, 9), (9,)), ((5, 9), (5, 1)),
                                    ((3, 4, 6), (3, 1, 6)), ((6, 7), ())],
                         ids=["same", "row", "col", "slices", "scalar_tensor"])
def test_compares_match_the_cpu(dtype, name, shapes):
    op = COMPARES[name]
    a, b = values(shapes[0], dtype, 1), values(shapes[1], dtype, 2)
    with native(name):
        result = op(a.to("npu"), b.to("npu"))
        flipped = op(b.to("npu"), a.to("npu"))
    assert result.dtype == torch.bool and torch.equal(result.cpu(), op(a, b))
    assert torch.equal(flipped.cpu(), op(b, a))


@pytest.mark.parametrize("name", COMPARES)
def test_python_scalars_mixed_types_and_out_forms(name):
    op = COMPARES[name]
    ints = values((4, 10), torch.int64, 3)
    floats = values((4, 10), torch.float32, 4)
    out = torch.empty(0, dtype=torch.bool, device="npu")
    with native():
        with_int = op(ints.to("npu"), 2)
        with_float = op(ints.to("npu"), 1.5)     # compared in float32
        mixed = op(ints.to("npu"), floats.to("npu"))
        getattr(torch, name)(floats.to("npu"), 0.0, out=out)
    assert torch.equal(with_int.cpu(), op(ints, 2))
    assert torch.equal(with_float.cpu(), op(ints, 1.5))
    assert torch.equal(mixed.cpu(), op(ints, floats))
    assert torch.equal(out.cpu(), getattr(torch, name)(floats, 0.0))


def test_in_place_compares_store_in_the_tensors_own_type():
    a = values((3, 8), torch.float32, 5)
    d = a.to("npu")
    with native():
        d.lt_(1.0)
    assert torch.equal(d.cpu(), a.lt(1.0).float())


def test_a_mask_of_odd_length_rows():
    # b8 rows of 7 elements start inside words: the packets stay aligned.
    a, b = values((5, 7), torch.int64, 6), values((5, 1), torch.int64, 7)
    with native():
        result = a.to("npu")[:, 1:] > b.to("npu")
    assert torch.equal(result.cpu(), a[:, 1:] > b)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("shapes", [((33,), (33,)), ((4, 9), (9,)), ((4, 9), (4, 1)), ((5,), ())],
                         ids=["same", "row", "col", "scalar_tensor"])
def test_bool_bitwise_ops_match_the_cpu(name, shapes):
    g = torch.Generator().manual_seed(11)
    a, b = torch.rand(shapes[0], generator=g) < 0.5, torch.rand(shapes[1], generator=g) < 0.5
    op = getattr(torch, name)
    out = torch.empty(0, dtype=torch.bool, device="npu")
    with native(name):
        result = op(a.to("npu"), b.to("npu"))
        op(a.to("npu"), b.to("npu"), out=out)
        with_scalar = op(a.to("npu"), True)
        in_place = a.to("npu")
        getattr(in_place, name + "_")(b.to("npu").expand(a.shape) if b.dim() else b.to("npu"))
    expected = op(a, b)
    assert torch.equal(result.cpu(), expected) and torch.equal(out.cpu(), expected)
    assert torch.equal(with_scalar.cpu(), op(a, True))
    assert torch.equal(in_place.cpu(), expected)


def test_bool_not_matches_the_cpu():
    a = torch.rand(5, 7) < 0.5
    with native("bitwise_not"):
        result = ~a.to("npu")
        strided = ~a.to("npu").t()
    assert torch.equal(result.cpu(), ~a) and torch.equal(strided.cpu(), ~a.t())
    d = a.to("npu")
    d.bitwise_not_()
    assert torch.equal(d.cpu(), ~a)


# Truth values the CPU's logical ops see: zeros of both signs are false,
# NaN, infinities and subnormals true.
TRUTHS = {
    torch.float32: [0.0, -0.0, 1.0, -2.5, float("nan"), float("inf"), 1e-45],
    torch.int32: [0, 1, -1, 2**31 - 1, -2**31],
    torch.int64: [0, 1, -1, 2**63 - 1, -2**63, 2**32],
    torch.bool: [False, True],
}


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("types", [(torch.bool, torch.bool), (torch.float32, torch.float32),
                                   (torch.int64, torch.bool), (torch.int32, torch.float32)], ids=str)
def test_logical_ops_match_the_cpu(name, types):
    a = torch.tensor(TRUTHS[types[0]], dtype=types[0])
    b = torch.tensor(TRUTHS[types[1]], dtype=types[1])
    a, b = a.repeat_interleave(len(b)), b.repeat(len(a))  # every pair
    op = getattr(torch, name)
    out = torch.empty(0, dtype=torch.bool, device="npu")
    with native(name):
        result = op(a.to("npu"), b.to("npu"))
        op(a.to("npu"), b.to("npu"), out=out)
        rows = op(a.to("npu").view(-1, len(TRUTHS[types[1]])), b[: len(TRUTHS[types[1]])].to("npu"))
        with_scalar = op(a.to("npu"), torch.tensor(0.0))  # a CPU 0-dim tensor
    expected = op(a, b)
    assert torch.equal(result.cpu(), expected) and torch.equal(out.cpu(), expected)
    assert torch.equal(rows.cpu(), op(a.view(-1, len(TRUTHS[types[1]])), b[: len(TRUTHS[types[1]])]))
    assert torch.equal(with_scalar.cpu(), op(a, torch.tensor(0.0)))
    if types == (torch.bool, torch.bool):
        in_place = a.to("npu")
        with native(name + "_"):
            getattr(in_place, name + "_")(b.to("npu"))
        assert torch.equal(in_place.cpu(), expected)


@pytest.mark.parametrize("dtype", list(TRUTHS), ids=str)
def test_logical_not_matches_the_cpu(dtype):
    a = torch.tensor(TRUTHS[dtype], dtype=dtype)
    out = torch.empty(0, dtype=torch.bool, device="npu")
    with native("logical_not"):
        result = torch.logical_not(a.to("npu"))
        torch.logical_not(a.to("npu"), out=out)
    assert torch.equal(result.cpu(), torch.logical_not(a)) and torch.equal(out.cpu(), torch.logical_not(a))
    if dtype == torch.bool:
        in_place = a.to("npu")
        with native("logical_not_"):
            in_place.logical_not_()
        assert torch.equal(in_place.cpu(), ~a)


def test_logical_ops_into_a_float_result_fall_back():
    """A non-bool result (logical_and_ on a float tensor) has no bool form."""
    a = torch.tensor([0.0, 2.0, -1.0])
    d = a.to("npu")
    torch.npu.reset_stats()
    d.logical_and_(torch.tensor([1.0, 1.0, 0.0]).to("npu"))
    assert torch.equal(d.cpu(), a.clone().logical_and_(torch.tensor([1.0, 1.0, 0.0])))
    assert "aten::logical_and_" in torch.npu.fallback_stats()


def test_what_the_bridge_does_not_lower_still_falls_back():
    # int16 is not an ISA type.
    a = torch.tensor([6, 3, 5], dtype=torch.int16)
    torch.npu.reset_stats()
    assert torch.equal((a.to("npu") & 3).cpu(), a & 3)
    assert torch.equal((a.to("npu") << 2).cpu(), a << 2)
    stats = torch.npu.fallback_stats()
    assert any("bitwise_and" in op for op in stats) and any("shift" in op for op in stats), stats


@pytest.mark.parametrize("invert", [False, True])
def test_isin_as_generate_checks_stop_tokens(invert):
    ids = torch.randint(0, 20, (3, 9), generator=torch.Generator().manual_seed(13))
    for stops in (torch.tensor([2]), torch.tensor([4, 7, 11]), torch.tensor(5), torch.tensor([], dtype=torch.int64)):
        with native():
            result = torch.isin(ids.to("npu"), stops.to("npu"), invert=invert)
        assert torch.equal(result.cpu(), torch.isin(ids, stops, invert=invert))


def test_masked_fill_of_integer_tensors():
    ids = torch.randint(-5, 5, (4, 6), dtype=torch.int64)
    mask = ids > 0
    with native("masked_fill"):
        filled = ids.to("npu").masked_fill(mask.to("npu"), 1)
        in_place = ids.to("npu")
        in_place.masked_fill_(mask.to("npu")[0], -(2**40))  # a row mask broadcast
    assert torch.equal(filled.cpu(), ids.masked_fill(mask, 1))
    assert torch.equal(in_place.cpu(), ids.masked_fill(mask[0], -(2**40)))


def test_bool_times_bool_is_a_logical_and_on_the_device():
    a, b = torch.rand(9) < 0.5, torch.rand(9) < 0.5
    with native("bitwise_and"):
        result = a.to("npu") * b.to("npu")
    assert result.dtype == torch.bool and torch.equal(result.cpu(), a * b)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
def test_an_integer_tensor_and_a_bool_as_generate_combines_them(dtype):
    info = torch.iinfo(dtype)
    values = torch.tensor([0, 1, 2, 3, -1, -2, info.min, info.max, 5, 6], dtype=dtype)
    flags = torch.tensor([True, True, True, False, True, True, True, True, False, True])
    with native("bitwise_and"):
        left = values.to("npu") & flags.to("npu")
        right = flags.to("npu") & values.to("npu")
        broadcast = values.to("npu").view(2, 5) & flags.to("npu")[:5]
    assert torch.equal(left.cpu(), values & flags) and torch.equal(right.cpu(), flags & values)
    assert torch.equal(broadcast.cpu(), values.view(2, 5) & flags[:5])
