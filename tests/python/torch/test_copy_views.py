"""Copies host<->npu and npu<->npu (any dtype, any layout) and views: the
device side of every copy is COPY / COPY_STRIDED packets, never the host."""

from __future__ import annotations

import pytest
import torch

from npu_testing import native, op_packets

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int16, torch.uint8, torch.bool]


def sample(shape, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(0, 100, shape).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_trip_and_item(dtype):
    x = sample((3, 5), dtype)
    y = x.to("npu")
    assert y.dtype == dtype and torch.equal(y.cpu(), x)
    assert y[1, 2].item() == x[1, 2].item()
    with native("_copy_from"):
        strided = y.t().contiguous()
    assert torch.equal(strided.cpu(), x.t())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fill_and_zero(dtype):
    x = torch.empty(5, 3, dtype=dtype, device="npu")
    value = True if dtype == torch.bool else 3
    with native("fill_"):
        x.fill_(value)
    assert torch.equal(x.cpu(), torch.full((5, 3), value, dtype=dtype))
    with native("fill_"):
        x[:, 1].zero_()
    expected = torch.full((5, 3), value, dtype=dtype)
    expected[:, 1] = 0
    assert torch.equal(x.cpu(), expected)
    odd = torch.zeros(7, dtype=dtype, device="npu")
    with native("fill_"):
        odd[1:6].fill_(value)  # unaligned starts and lengths for small dtypes
    expected = torch.zeros(7, dtype=dtype)
    expected[1:6] = value
    assert torch.equal(odd.cpu(), expected)


def test_non_contiguous_sources_are_gathered_on_the_device():
    x = torch.randn(4, 6, 5, 3, 2)
    y = x.to("npu")
    views = [
        lambda t: t.permute(4, 2, 0, 3, 1),  # five dims: iterated packets
        lambda t: t[:, ::2, 1:4],
        lambda t: t[..., 0].transpose(0, 2),
        lambda t: t[1, :, :, 0:1, 1].expand(6, 5, 4),  # broadcast (stride 0)
        lambda t: t.as_strided((3, 4), (7, 2), 5),
    ]
    for view in views:
        with native("_copy_from"):
            dense = view(y).contiguous()
        assert torch.equal(dense.cpu(), view(x).contiguous())
        assert torch.equal(view(y).cpu(), view(x))  # device -> host of a view


def test_copy_into_views():
    base = torch.zeros(4, 6)
    y = base.to("npu")
    src = torch.randn(4, 3)
    with native("_copy_from"):
        y[:, 1:4] = src.to("npu")  # rows with gaps: one packet per row
    base[:, 1:4] = src
    assert torch.equal(y.cpu(), base)
    y.t()[2:5] = src.t()  # host -> strided view
    base.t()[2:5] = src.t()
    assert torch.equal(y.cpu(), base)
    z = torch.zeros(3, 4, device="npu")
    with native("_copy_from"):
        z.t().copy_(torch.arange(12.0).view(4, 3).to("npu"))  # a dense permutation: one gather
    assert op_packets("_copy_from") == 1
    assert torch.equal(z.cpu(), torch.arange(12.0).view(4, 3).t())


def test_overlapping_copies_are_refused_as_on_the_cpu():
    # copy_ refuses a source that partly overlaps the destination and a
    # destination whose elements share memory, with PyTorch's messages.
    y = torch.arange(10.0).to("npu")
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer"):
        y[1:].copy_(y[:-1])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers"):
        y[:1].expand(4).copy_(torch.ones(4).to("npu"))
    assert torch.equal(y.cpu(), torch.arange(10.0))  # untouched
    # The way PyTorch asks for: a clone. COPY needs disjoint ranges, which
    # the clone is.
    with native("_copy_from"):
        y[1:].copy_(y[:-1].clone())
    assert torch.equal(y.cpu(), torch.tensor([0.0, 0, 1, 2, 3, 4, 5, 6, 7, 8]))
    # A view of the same data: nothing to copy, as copy_'s early exit.
    torch.npu.reset_stats()
    y.copy_(y.view(2, 5).view(10))
    assert torch.npu.op_stats()["_copy_from"]["calls"] == 0


def test_broadcasting_copy_and_dtype_conversions():
    y = torch.zeros(3, 4, device="npu")
    with native("_copy_from"):
        y.copy_(torch.arange(4.0).to("npu"))
    assert torch.equal(y.cpu(), torch.arange(4.0).expand(3, 4))
    y.copy_(torch.tensor(7, dtype=torch.int64))  # host scalar of another dtype
    assert torch.equal(y.cpu(), torch.full((3, 4), 7.0))
    flags = torch.rand(9) > 0.5
    with native("_copy_from"):
        as_float = flags.to("npu").float()  # bool -> float on the device
    assert torch.equal(as_float.cpu(), flags.float())
    ints = torch.arange(5).to("npu")
    with native("_copy_from"):
        as_float = ints.float()  # CAST on the device
    assert torch.equal(as_float.cpu(), torch.arange(5.0))
    torch.npu.reset_stats()
    shorts = torch.arange(5, dtype=torch.int16).to("npu").float()  # no ISA type: via the host
    assert torch.equal(shorts.cpu(), torch.arange(5.0))
    assert torch.npu.fallback_stats() == {"dtype conversion Short->Float": 1}


def test_views_share_storage_and_log(capfd):
    x = torch.arange(24.0, device="npu")
    v = x.view(2, 3, 4)
    r = v.transpose(1, 2).reshape(2, 12)  # a copy: transposed dims do not merge
    assert v.data_ptr() == x.data_ptr()
    assert r.data_ptr() != x.data_ptr()
    v[0, 0, 0] = 100.0
    assert x[0].item() == 100.0
    torch.npu.set_debug_level(3)
    try:
        x.view(4, 6).narrow(0, 1, 2).unsqueeze(0)
    finally:
        torch.npu.set_debug_level(0)
    assert "[VIEW]" in capfd.readouterr().err


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8], ids=str)
@pytest.mark.parametrize("shape,index,through_box", [
    ((4, 3, 6, 16), (Ellipsis, slice(0, 8)), True),  # the halves of rotate_half's gradient
    ((4, 3, 6, 16), (Ellipsis, slice(8, 16)), True),
    ((6, 10), (slice(None), slice(2, 7)), True),  # a middle slice of the last dim
    ((3, 8, 5), (slice(None), slice(1, 6)), True),  # of a middle dim
    ((2, 3, 4, 5), (slice(None), slice(None), slice(3, 4)), True),
    ((5, 12), (slice(None), slice(0, 12, 2)), False),  # every other element: a packet per piece
    ((3, 4, 6), (slice(None), slice(1, 3), slice(0, 4)), False),  # sliced along two dims
], ids=str)
def test_stores_into_slices(dtype, shape, index, through_box):
    base, src = sample(shape, dtype), sample(torch.empty(shape)[index].shape, dtype)
    on_npu, src_npu = base.to("npu"), src.to("npu")
    with native("_copy_from"):
        on_npu[index].copy_(src_npu)
    base[index].copy_(src)
    assert torch.equal(on_npu.cpu(), base)
    # Through the box: three gathers (box, source, back), not one per piece.
    assert (op_packets("_copy_from") <= 4) == through_box


def test_a_store_whose_box_would_leave_the_storage_copies_per_piece():
    # Rows of 5 at a pitch of 8 in a storage that ends right after the last
    # row: the 4 x 8 box around them would pass the storage's end.
    full = torch.arange(30, dtype=torch.float32)
    src = -torch.arange(20, dtype=torch.float32).view(4, 5)
    on_npu, src_npu = full.to("npu"), src.to("npu")
    with native("_copy_from"):
        on_npu.as_strided((4, 5), (8, 1), 1).copy_(src_npu)
    full.as_strided((4, 5), (8, 1), 1).copy_(src)
    assert torch.equal(on_npu.cpu(), full)
    assert op_packets("_copy_from") == 4  # one per row
