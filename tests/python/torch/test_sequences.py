"""Tensors computed from their indices on the npu: arange (IOTA), compared
with PyTorch CPU exactly."""

from __future__ import annotations

import pytest
import torch
from npu_testing import native


ARANGE_ARGS = [(10,), (3, 17), (0, 100, 7), (50, -20, -3), (-5, 5), (0, 0), (7, 8)]
# int32's range: float32 there falls back (see below).
INT32_EDGE = (-(2**31), -(2**31) + 1000, 3)


@pytest.mark.parametrize("dtype,args",
                         [(d, a) for d in (torch.int64, torch.int32, torch.float32) for a in ARANGE_ARGS]
                         + [(torch.int64, INT32_EDGE), (torch.int32, INT32_EDGE)],
                         ids=str)
def test_arange_matches_the_cpu(dtype, args):
    expected = torch.arange(*args, dtype=dtype)
    with native():
        result = torch.arange(*args, dtype=dtype, device="npu")
    assert result.dtype == dtype and torch.equal(result.cpu(), expected)


def test_long_sequences_cross_many_beats():
    with native("arange.start_out"):
        result = torch.arange(5, 5 + 3 * 100003, 3, device="npu")
    assert torch.equal(result.cpu(), torch.arange(5, 5 + 3 * 100003, 3))


def test_int64_values_beyond_32_bits():
    # start and step are int32; the elements run past 2^32.
    args = (2**31 - 10, 2**31 - 10 + 2**31 * 3, 2**31 - 1)
    with native("arange.start_out"):
        result = torch.arange(*args, device="npu")
    assert torch.equal(result.cpu(), torch.arange(*args))


def test_arange_into_an_out_tensor_of_another_layout():
    out = torch.zeros(4, 6, dtype=torch.int64, device="npu").t()[0]  # strided
    with native("arange.start_out"):
        torch.arange(0, 4, out=out)
    assert torch.equal(out.cpu(), torch.arange(4))


@pytest.mark.parametrize("args,dtype", [((0, 1, 0.1), torch.float32),  # rounds differently
                                        ((0, 2**40, 2**35), torch.int64),  # step beyond int32
                                        ((0, 5.5), torch.int64),  # a float bound
                                        ((0, 10), torch.int16),  # no ISA type
                                        ((2**25, 2**25 + 10), torch.float32)],  # beyond 2^24
                         ids=str)
def test_what_iota_cannot_compute_exactly_falls_back(args, dtype):
    torch.npu.reset_stats()
    result = torch.arange(*args, dtype=dtype, device="npu")
    assert torch.equal(result.cpu(), torch.arange(*args, dtype=dtype))
    assert "aten::arange.start_out" in torch.npu.fallback_stats()


def test_arange_errors_are_pytorch_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 10, 0, device="npu")
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        torch.arange(0, 10, -1, device="npu")


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.int32], ids=str)
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -7, 100, -100])
@pytest.mark.parametrize("upper", [False, True])
def test_tril_and_triu_match_the_cpu(dtype, diagonal, upper):
    g = torch.Generator().manual_seed(9)
    host = torch.randint(-50, 50, (2, 3, 5, 7), generator=g).to(dtype)
    op = torch.triu if upper else torch.tril
    device = host.to("npu")
    with native():
        result = op(device, diagonal)
        transposed = op(device.transpose(-1, -2), diagonal)
        out = torch.empty(0, dtype=dtype, device="npu")
        op(device, diagonal, out=out)
        in_place = device.clone()
        (in_place.triu_ if upper else in_place.tril_)(diagonal)
    expected = op(host, diagonal)
    assert torch.equal(result.cpu(), expected)
    assert torch.equal(transposed.cpu(), op(host.transpose(-1, -2), diagonal))
    assert torch.equal(out.cpu(), expected) and torch.equal(in_place.cpu(), expected)


def test_a_causal_mask_built_on_the_device():
    # What attention code does: ones, tril, then a boolean mask.
    with native():
        mask = torch.ones(6, 9, dtype=torch.bool, device="npu").tril(diagonal=3)
    assert torch.equal(mask.cpu(), torch.ones(6, 9, dtype=torch.bool).tril(diagonal=3))
