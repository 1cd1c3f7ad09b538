"""where and masked_fill on SELECT/SELECTS for the six types (docs/pytorch.md):
bit for bit against PyTorch's CPU, -0 and the NaN payloads of the 32-bit
types included, under the
broadcasts of attention masks, scalar branches on either side, i64 values
past the int32 immediate, and in-place writes into views."""

from __future__ import annotations

import pytest
import torch
from npu_testing import native, op_packets

DTYPES = [torch.float32, torch.int32, torch.int64, torch.bfloat16, torch.float16, torch.bool]
BITS = {4: torch.int32, 2: torch.int16, 8: torch.int64, 1: torch.uint8}


def values(shape: tuple[int, ...], dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=g).to(dtype)
        flat = x.view(-1)
        if flat.numel() > 6:  # a subnormal: kept, where a CAST to binary32 would flush it
            flat[5] = torch.finfo(dtype).tiny / 4
        for i, special in enumerate([float("nan"), -0.0, float("inf"), float("-inf")][: flat.numel()]):
            flat[i] = special
        if flat.numel() > 4:  # a NaN with a payload: moved as bits
            flat.view(BITS[x.element_size()])[4] = flat.view(BITS[x.element_size()])[0] | 3
        return x
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype)
    if x.numel() > 2:
        x.view(-1)[0], x.view(-1)[1] = info.min, info.max
    return x


def assert_bits_equal(got: torch.Tensor, want: torch.Tensor) -> None:
    """Equal bits; but a bf16/f16 NaN, which the lanes hold widened and store
    as the type's canonical NaN (docs/types.md §2): NaN where the CPU has one."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype == torch.bool:
        assert torch.equal(got, want)
        return
    if want.dtype in (torch.bfloat16, torch.float16):
        assert torch.equal(got.isnan(), want.isnan())
        got, want = got.masked_fill(got.isnan(), 0), want.masked_fill(want.isnan(), 0)
    assert torch.equal(got.view(BITS[want.element_size()]), want.view(BITS[want.element_size()]))


SHAPES = [  # cond, a, b
    ((2, 3, 5), (2, 3, 5), (2, 3, 5)),
    ((2, 1, 4, 5), (2, 3, 4, 5), (5,)),  # a batch's mask over every head
    ((1, 1, 4, 5), (2, 3, 4, 5), (2, 3, 4, 5)),  # one mask row block for all
    ((3, 1), (3, 4), (1, 4)),
    ((4, 1, 6), (4, 5, 6), (4, 5, 1)),
    ((), (3, 3), (3, 3)),
    ((7,), (7,), ()),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("branches", ["tensors", "scalar b", "scalar a", "scalars"])
def test_where_matches_cpu_bit_for_bit(dtype: torch.dtype, shapes: tuple, branches: str) -> None:
    g = torch.Generator().manual_seed(hash((str(dtype), shapes, branches)) % 2**31)
    cond = torch.rand(shapes[0], generator=g) > 0.5
    a, b = values(shapes[1], dtype, g), values(shapes[2], dtype, g)
    scalar = True if dtype == torch.bool else (-2**40 if dtype == torch.int64 else 3)
    if branches in ("scalar b", "scalars"):
        b = scalar
    if branches in ("scalar a", "scalars"):
        a = -1.5 if dtype.is_floating_point else scalar
    on_npu = [x.npu() if torch.is_tensor(x) else x for x in (cond, a, b)]
    with native("where"):
        got = torch.where(*on_npu)
    # Copies of broadcast operands (a 2-byte type in i32 words), a NOT, the select.
    assert op_packets("where") <= 12
    assert_bits_equal(got.cpu(), torch.where(cond, a, b))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_shape", [(2, 3, 4), (4,), (3, 1), (2, 1, 4), ()], ids=str)
def test_masked_fill_matches_cpu_bit_for_bit(dtype: torch.dtype, mask_shape: tuple) -> None:
    g = torch.Generator().manual_seed(len(mask_shape) + 7 * DTYPES.index(dtype))
    x = values((2, 3, 4), dtype, g)
    mask = torch.rand(mask_shape, generator=g) > 0.5
    fills = [True] if dtype == torch.bool else (
        [1.5, float("-inf"), 1e-40] if dtype.is_floating_point else [7, torch.iinfo(dtype).min])
    if dtype == torch.int64:
        fills.append(2**40)  # past the int32 immediate: a device scalar
    for fill in fills:
        with native("masked_fill"):
            got = x.npu().masked_fill(mask.npu(), fill)
        assert_bits_equal(got.cpu(), x.masked_fill(mask, fill))
        inplace = x.npu()
        with native("masked_fill_"):
            inplace.masked_fill_(mask.npu(), torch.tensor(fill, dtype=dtype).npu())
        assert_bits_equal(inplace.cpu(), x.clone().masked_fill_(mask, torch.tensor(fill, dtype=dtype)))


def test_masked_fill_writes_views_that_start_inside_a_word() -> None:
    x = torch.rand(9) > 0.5
    mask = torch.rand(8) > 0.5
    device = x.npu()
    with native("masked_fill_"):
        device[1:].masked_fill_(mask.npu(), True)
    x[1:].masked_fill_(mask, True)
    assert torch.equal(device.cpu(), x)
    y = torch.randn(4, 6)
    strided_mask = torch.rand(4, 3) > 0.5
    device = y.npu()
    with native("masked_fill_"):
        device[:, ::2].masked_fill_(strided_mask.npu(), 9.0)
    y[:, ::2].masked_fill_(strided_mask, 9.0)
    assert torch.equal(device.cpu(), y)


def test_masked_fill_of_a_score_matrix_is_a_few_packets() -> None:
    scores = torch.randn(2, 4, 8, 8)
    causal = torch.ones(8, 8, dtype=torch.bool).triu(1)
    with native("masked_fill"):
        got = scores.npu().masked_fill(causal.npu(), float("-inf"))
    # NOT of one mask row block, then SELECTS (mbcast row).
    assert op_packets("masked_fill") == 2
    assert torch.equal(got.cpu(), scores.masked_fill(causal, float("-inf")))
