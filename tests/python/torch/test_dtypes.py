"""Tensors of the ISA's six types on the npu (docs/types.md §1, §6) and the
conversions between them: CAST packets, compared with PyTorch CPU's
`.to(dtype)` bit for bit."""

from __future__ import annotations

import itertools

import pytest
import torch
from npu_testing import native, op_packets

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool]
FLOATS = {torch.float32, torch.bfloat16, torch.float16}


def samples(dtype: torch.dtype, target: torch.dtype) -> torch.Tensor:
    """Values of `dtype` that convert to `target` with a defined result on
    the CPU: floats going to an integer type stay inside its range (PyTorch
    leaves out-of-range and NaN conversions undefined; docs/types.md §3)."""
    g = torch.Generator().manual_seed(7)
    if dtype == torch.bool:
        return torch.rand(257, generator=g) < 0.5
    if dtype in FLOATS:
        edges = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 65504.0, 1e-8, -1e-8,
                 3.0e-5, 6.0e-8, 1.00390625, 1.0009765625, 255.99]
        values = torch.cat([torch.tensor(edges), torch.randn(240, generator=g) * 1000])
        if target not in FLOATS and target != torch.bool:
            values = values.clamp(-30000, 30000)
        else:
            values = torch.cat([values, torch.tensor([float("inf"), float("-inf"), float("nan"),
                                                      1e-40, 3.4e38, -3.4e38])])
        return values.to(dtype)
    info = torch.iinfo(dtype)
    edges = [0, 1, -1, 2, info.min, info.max, info.min + 1, info.max - 1, 1 << 24, (1 << 24) + 1,
             (1 << 24) + 3, 65504, 65520, -65520]
    if dtype == torch.int64:
        edges += [1 << 32, (1 << 32) - 1, -(1 << 32), (1 << 53) + 1, (1 << 63) - 1025]
    randoms = torch.randint(info.min, info.max, (240,), generator=g, dtype=dtype)
    return torch.cat([torch.tensor(edges, dtype=dtype), randoms])


def daz(values: torch.Tensor, target: torch.dtype) -> torch.Tensor:
    """The values as CAST to `target` reads them (a same-type copy moves
    bits): binary32 (and bf16, which
    widens to binary32) subnormals are zero, sign kept (docs/arith.md §1,
    docs/pytorch.md "Subnormals and NaNs"); f16 subnormals widen to normal
    binary32 values and stay."""
    if values.dtype not in (torch.float32, torch.bfloat16) or values.dtype == target:
        return values
    tiny = values.abs() < torch.finfo(torch.float32).tiny
    return torch.where(tiny & (values != 0), values * 0, values)


def same_bits(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype in FLOATS:
        # NaN payloads aside (the NPU stores the canonical NaN), bit for bit.
        nan = expected.isnan()
        assert torch.equal(actual.isnan(), nan)
        bits = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}
        dtype = bits[expected.dtype]
        assert torch.equal(actual[~nan].view(dtype), expected[~nan].view(dtype))
    else:
        assert torch.equal(actual, expected)


@pytest.mark.parametrize("source,target", list(itertools.product(DTYPES, DTYPES)),
                         ids=lambda d: str(d).removeprefix("torch."))
def test_to_dtype_is_a_cast_on_the_device_equal_to_the_cpu(source, target):
    host = samples(source, target)
    device = host.to("npu")
    assert device.dtype == source
    same_bits(device.cpu(), host)
    with native():
        converted = device.to(target)
    same_bits(converted.cpu(), daz(host, target).to(target))
    if source != target:
        assert op_packets("_copy_from") > 0


@pytest.mark.parametrize("target", [torch.float32, torch.int64, torch.bool, torch.bfloat16])
def test_conversions_of_views_at_any_offset_and_stride(target):
    # A bool or bf16 view may start off a word boundary; a transposed view is
    # not contiguous: both are gathered first, and the result lands in a
    # strided destination through a buffer.
    for source in (torch.bool, torch.bfloat16, torch.int32, torch.float16):
        host = samples(source, target)[:240].reshape(12, 20)
        device = host.to("npu")
        with native():
            odd = device[:, 1:].to(target)
            transposed = device.t().to(target)
            out = torch.empty(20, 12, dtype=target, device="npu").t()
            out.copy_(device)
        same_bits(odd.cpu(), daz(host[:, 1:], target).to(target))
        same_bits(transposed.cpu(), daz(host.t(), target).to(target))
        same_bits(out.cpu(), daz(host, target).to(target))


def test_broadcast_copy_between_types():
    row = torch.arange(7, dtype=torch.int64)
    out = torch.zeros(5, 7, device="npu")
    with native():
        out.copy_(row.to("npu"))
    assert torch.equal(out.cpu(), row.float().expand(5, 7))


def test_types_without_an_isa_type_still_convert_through_the_cpu():
    host = torch.arange(10, dtype=torch.int16)
    device = host.to("npu")
    torch.npu.reset_stats()
    assert torch.equal(device.to(torch.float32).cpu(), host.float())
    assert any("Short->Float" in op for op in torch.npu.fallback_stats())


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.int32],
                         ids=str)
def test_any_and_all_run_on_the_device(dtype):
    g = torch.Generator().manual_seed(3)
    host = (torch.rand(4, 6, 5, generator=g) < 0.3).to(dtype)
    host[0] = 1  # a slice all true
    host[1] = 0  # a slice all false
    if dtype == torch.float32:
        host[2, 0, 0] = float("nan")  # NaN is true
        host[3, 1, 1] = -0.0
    device = host.to("npu")
    with native("any", "all"):
        results = [(op(device), op(host)) for op in (torch.any, torch.all)]
        for dim in (0, 1, -1, (0, 2)):
            for keepdim in (False, True):
                results += [(torch.any(device, dim=dim, keepdim=keepdim),
                             torch.any(host, dim=dim, keepdim=keepdim)),
                            (torch.all(device, dim=dim, keepdim=keepdim),
                             torch.all(host, dim=dim, keepdim=keepdim))]
        out = torch.empty(0, dtype=torch.bool, device="npu")
        torch.any(device, -1, out=out)
        results.append((out, torch.any(host, -1)))
    for actual, expected in results:
        assert actual.dtype == torch.bool and torch.equal(actual.cpu(), expected)


def test_any_and_all_of_nothing():
    empty = torch.zeros(3, 0, dtype=torch.bool, device="npu")
    with native():
        assert torch.equal(empty.any(dim=1).cpu(), torch.zeros(3, dtype=torch.bool))
        assert torch.equal(empty.all(dim=1).cpu(), torch.ones(3, dtype=torch.bool))
        assert not empty.any().item() and empty.all().item()


def test_counting_true_elements_is_one_count_on_the_device():
    g = torch.Generator().manual_seed(4)
    flags = torch.rand(3, 50, 7, generator=g) < 0.4
    device = flags.to("npu")
    with native("sum"):
        results = [(device.sum(), flags.sum()), (device.sum(dim=1), flags.sum(dim=1)),
                   (device.sum(dim=(0, 2), keepdim=True), flags.sum(dim=(0, 2), keepdim=True)),
                   (device.sum(-1, dtype=torch.int32), flags.sum(-1, dtype=torch.int32)),
                   (device.sum(-1, dtype=torch.float32), flags.sum(-1, dtype=torch.float32)),
                   (device.sum(0), flags.sum(0))]
        torch.npu.reset_stats()
        device.sum(-1)
        assert op_packets("sum") == 1  # COUNT alone: the reduced dim is already last
    for actual, expected in results:
        assert actual.dtype == expected.dtype and torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_count_nonzero_runs_on_the_device(dtype):
    g = torch.Generator().manual_seed(5)
    host = (torch.rand(5, 9, 6, generator=g) * 3).to(dtype) * (torch.rand(5, 9, 6, generator=g) < 0.5)
    if dtype in FLOATS:
        host[0, 0, 0], host[0, 0, 1] = float("nan"), -0.0  # NaN counts, -0 does not
    device = host.to("npu")
    with native("count_nonzero"):
        results = [(torch.count_nonzero(device), torch.count_nonzero(host))]
        for dim in (0, 1, -1, (0, 2), ()):
            results.append((torch.count_nonzero(device, dim=dim), torch.count_nonzero(host, dim=dim)))
        # A view at an odd byte offset and stride, gathered into rows first.
        results.append((torch.count_nonzero(device[1:, ::2, 1:], dim=1),
                        torch.count_nonzero(host[1:, ::2, 1:], dim=1)))
    for actual, expected in results:
        assert actual.dtype == torch.int64 and torch.equal(actual.cpu(), expected)


def test_any_and_all_are_one_packet():
    flags = torch.rand(6, 33) < 0.5
    flags[0], flags[1] = True, False
    device = flags.to("npu")
    with native("any", "all"):
        torch.npu.reset_stats()
        any_rows, all_rows = device.any(dim=1), device.all(dim=1)
        assert op_packets("any") == 1 and op_packets("all") == 1
    assert torch.equal(any_rows.cpu(), flags.any(dim=1))
    assert torch.equal(all_rows.cpu(), flags.all(dim=1))
