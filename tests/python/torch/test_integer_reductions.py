"""Reductions composed of typed elementwise packets: integer sums (a tree
of ADD), maxima and minima of all elements (MAX, MIN), exact against
PyTorch CPU (integer addition wraps around and is associative); and
cumsum on CUMSUM, each row's running sum in element order."""

from __future__ import annotations

import pytest
import torch
from npu_testing import native, op_packets


def integers(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    info = torch.iinfo(dtype)
    t = torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)
    edges = torch.tensor([info.max, info.max, info.min], dtype=dtype)  # sums wrap
    t.view(-1)[:3] = edges[: t.numel()]
    return t


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_max_and_min_of_all_elements(dtype, n):
    host = (torch.randn(n) * 100).to(dtype) if dtype.is_floating_point else integers((n,), dtype, n)
    device = host.to("npu")
    with native("max", "min"):
        biggest, smallest = device.max(), device.min()
    assert torch.equal(biggest.cpu(), host.max()) and torch.equal(smallest.cpu(), host.min())


def test_a_nan_is_the_maximum_and_the_minimum():
    host = torch.tensor([1.0, float("nan"), 3.0])
    with native("max", "min"):
        assert torch.isnan(host.to("npu").max().cpu()) and torch.isnan(host.to("npu").min().cpu())


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 2)])
def test_integer_sums_wrap_around_like_the_cpu(dtype, dim):
    host = (torch.rand(5, 33, 3) < 0.5) if dtype == torch.bool else integers((5, 33, 3), dtype, 1)
    device = host.to("npu")
    with native("sum"):
        result = device.sum() if dim is None else device.sum(dim=dim)
        kept = device.sum(dim=1, keepdim=True, dtype=torch.int32)
    expected = host.sum() if dim is None else host.sum(dim=dim)
    assert result.dtype == expected.dtype and torch.equal(result.cpu(), expected)
    assert torch.equal(kept.cpu(), host.sum(dim=1, keepdim=True, dtype=torch.int32))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_integer_cumsum_matches_the_cpu(dtype, dim):
    host = (torch.rand(6, 37, generator=torch.Generator().manual_seed(2)) < 0.5).to(dtype) \
        if dtype == torch.bool else integers((6, 37), dtype, 2)
    device = host.to("npu")
    with native("cumsum"):
        result = device.cumsum(dim)
        as_int32 = device.cumsum(dim, dtype=torch.int32)
    assert result.dtype == host.cumsum(dim).dtype
    assert torch.equal(result.cpu(), host.cumsum(dim))
    assert torch.equal(as_int32.cpu(), host.cumsum(dim, dtype=torch.int32))


def test_positions_from_an_attention_mask_as_generate_builds_them():
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    device = mask.to("npu")
    with native("cumsum", "sub"):
        positions = device.long().cumsum(-1) - 1
    assert torch.equal(positions.cpu(), mask.long().cumsum(-1) - 1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("dim", [0, -1])
def test_reduced_float_cumsum_is_the_cpus_bit_for_bit(dtype, dim):
    # PyTorch's CPU adds bf16/f16 in binary32 and rounds each prefix once,
    # as CUMSUM's lanes do (denormal sums aside, which the lanes flush).
    host = torch.randn(5, 300, generator=torch.Generator().manual_seed(3)).to(dtype)
    with native("cumsum"):
        result = host.to("npu").cumsum(dim)
    assert result.dtype == dtype and torch.equal(result.cpu(), host.cumsum(dim))


def test_float32_cumsum_adds_in_element_order():
    # The CPU keeps a float32 running sum in binary64; CUMSUM adds in
    # binary32 in the same order: within the rounding of n additions.
    host = torch.randn(4, 500, generator=torch.Generator().manual_seed(4))
    with native("cumsum"):
        result = host.to("npu").cumsum(-1)
    sequential = torch.from_numpy(host.numpy().cumsum(-1, dtype="float32"))  # one rounding per add
    assert torch.equal(result.cpu(), sequential)
    scale = host.abs().cumsum(-1)
    assert ((result.cpu() - host.cumsum(-1)).abs() <= 500 * torch.finfo(torch.float32).eps * scale).all()


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (-1, False), (0, True), (1, False)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32,
                                   torch.int64], ids=str)
def test_argmax_and_argmin_give_the_first_extremum(name, dim, keepdim, dtype):
    g = torch.Generator().manual_seed(12)
    host = torch.randint(-3, 4, (5, 40, 3), generator=g).to(dtype)  # many ties
    if dtype.is_floating_point:
        host[1, 7, :] = float("nan")  # a NaN is the extremum of its row
        host[2, :, 0] = -0.0
        host[2, 5, 0] = 0.0  # -0 == +0: the first of them wins
        host[3, 9, 1] = torch.finfo(dtype).tiny / 4  # subnormals by value, not flushed
        host[3, 11, 1] = -torch.finfo(dtype).tiny / 4
    else:
        host[4, 3, :] = torch.iinfo(dtype).max
        host[4, 8, :] = torch.iinfo(dtype).min
    op = getattr(torch, name)
    out = torch.empty(0, dtype=torch.int64, device="npu")
    with native(name):
        result = op(host.to("npu"), dim=dim, keepdim=keepdim)
        op(host.to("npu"), dim=dim, keepdim=keepdim, out=out)
    expected = op(host, dim=dim, keepdim=keepdim)
    assert result.dtype == torch.int64 and torch.equal(result.cpu(), expected)
    assert torch.equal(out.cpu(), expected)


def test_argmax_over_a_vocabulary_as_greedy_decoding_does():
    logits = torch.randn(3, 151936)
    with native("argmax"):
        tokens = logits.to("npu").argmax(dim=-1)
    assert torch.equal(tokens.cpu(), logits.argmax(dim=-1))
    torch.npu.reset_stats()
    logits.to("npu").argmax(dim=-1)
    torch.npu.synchronize()
    assert op_packets("argmax") == 1  # ARGMAX over the rows in place


def test_argmax_of_int64_compares_all_64_bits():
    # Equal high words, low words that differ in sign: the extremum is the
    # larger unsigned low word under a high word of 0, the first among ties.
    host = torch.tensor([[3, -2**40, 2**40, 2**40, 2**40 + 2**31, 5],
                         [-1, -2**32, -2**32 + 1, 2**31, 2**31 - 1, 2**31]])
    with native("argmax", "argmin"):
        results = [(host.to("npu").argmax(-1), host.argmax(-1)),
                   (host.to("npu").argmin(-1), host.argmin(-1)),
                   (host.to("npu").argmax(), host.argmax())]
    for actual, expected in results:
        assert torch.equal(actual.cpu(), expected)
