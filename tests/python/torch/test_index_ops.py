"""gather, index_select and indexing by one integer tensor on the npu: one
GATHER packet each, picking elements or rows by an index tensor on the
device, compared with PyTorch CPU exactly, for every ISA dtype."""

from __future__ import annotations

import pytest
import torch
from npu_testing import native, op_packets

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("itype", [torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather_matches_the_cpu(dtype, itype, dim):
    g = torch.Generator().manual_seed(5)
    self = torch.randint(-1000, 1000, (4, 6, 7), generator=g).to(dtype)
    shape = [3, 5, 6]
    shape[dim] = 9  # more picks than the dim has: repeats
    index = torch.randint(0, self.size(dim), shape, generator=g, dtype=itype)
    with native("gather"):
        result = torch.gather(self.to("npu"), dim, index.to("npu"))
    assert torch.equal(result.cpu(), torch.gather(self, dim, index))


def test_gather_from_an_expanded_buffer_as_bert_builds_token_types():
    buffered = torch.arange(20).view(1, 20)
    positions = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    with native("gather"):
        result = torch.gather(buffered.to("npu").expand(2, 20), 1, positions.to("npu").expand(2, 8))
        out = torch.empty(0, dtype=torch.int64, device="npu")
        torch.gather(buffered.to("npu").expand(2, 20), 1, positions.to("npu").expand(2, 8), out=out)
    expected = torch.gather(buffered.expand(2, 20), 1, positions.expand(2, 8))
    assert torch.equal(result.cpu(), expected) and torch.equal(out.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select_matches_the_cpu(dtype, dim):
    g = torch.Generator().manual_seed(6)
    self = torch.randint(-1000, 1000, (5, 4, 6), generator=g).to(dtype)
    index = torch.tensor([3, 0, 0, self.size(dim) - 1, 1])
    other = self.transpose(0, 2)
    other_index = torch.tensor([other.size(dim) - 1, 0, 2])
    with native("index_select"):
        result = self.to("npu").index_select(dim, index.to("npu"))
        transposed = self.to("npu").transpose(0, 2).index_select(dim, other_index.to("npu"))
    assert torch.equal(result.cpu(), self.index_select(dim, index))
    assert torch.equal(transposed.cpu(), other.index_select(dim, other_index))


def test_an_index_outside_the_dim_is_an_error_naming_it():
    self = torch.randn(3, 5).to("npu")
    index = torch.tensor([[0, 7]]).to("npu")
    with pytest.raises(RuntimeError, match=r"index 7 at position 1 is outside \[0, 5\)"):
        torch.gather(self, 1, index).cpu()
    assert torch.equal(torch.gather(self, 1, torch.tensor([[4, 0]]).to("npu")).cpu(),
                       torch.gather(self.cpu(), 1, torch.tensor([[4, 0]])))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.bool], ids=str)
def test_elements_inside_a_word_from_views_at_odd_offsets(dtype):
    """1- and 2-byte elements: a source view starting mid-word, odd rows."""
    base = torch.randint(-50, 50, (7, 9)).to(dtype)
    self = base[1:, 1:]  # starts one element into the storage's second row
    index = torch.tensor([[7, 0, 3], [1, 1, 5], [0, 7, 7], [2, 4, 6], [3, 3, 3], [6, 5, 4]])
    with native("gather", "index_select"):
        gathered = torch.gather(base.to("npu")[1:, 1:], 1, index.to("npu"))
        selected = base.to("npu")[1:, 1:].index_select(1, torch.tensor([7, 0, 5]).to("npu"))
    assert torch.equal(gathered.cpu(), torch.gather(self, 1, index))
    assert torch.equal(selected.cpu(), self.index_select(1, torch.tensor([7, 0, 5])))


def test_each_op_is_one_packet_on_contiguous_operands():
    self = torch.randn(3, 8, 5).to("npu")
    index = torch.randint(0, 8, (3, 11, 5)).to("npu")
    torch.npu.reset_stats()
    torch.gather(self, 1, index)
    self.index_select(1, torch.tensor([1, 7]).to("npu"))
    self[:, torch.tensor([-1, 2]).to("npu")]
    torch.npu.synchronize()
    assert (op_packets("gather"), op_packets("index_select"), op_packets("index")) == (1, 1, 1)


def test_a_negative_index_is_an_error_for_gather_and_counts_from_the_end_for_indexing():
    self = torch.randn(3, 5).to("npu")
    with pytest.raises(RuntimeError, match=r"index -1 at position 0 is outside \[0, 5\)"):
        torch.gather(self, 1, torch.tensor([[-1]]).to("npu")).cpu()
    with pytest.raises(RuntimeError, match=r"index -6 at position 1 is outside \[-5, 5\)"):
        self[:, torch.tensor([0, -6]).to("npu")].cpu()
    assert torch.equal(self[:, torch.tensor([-5, 4]).to("npu")].cpu(), self.cpu()[:, torch.tensor([-5, 4])])


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_indexing_by_one_integer_tensor_counts_negative_indices_from_the_end(dim):
    self = torch.randn(4, 5, 6)
    index = torch.tensor([[0, -1], [-self.size(dim), 2]])
    key = (slice(None),) * dim + (index,)
    with native("index"):
        result = self.to("npu")[tuple(k.to("npu") if isinstance(k, torch.Tensor) else k for k in key)]
    assert torch.equal(result.cpu(), self[key])


def test_indexing_with_several_tensors_or_a_mask_falls_back():
    self = torch.randn(4, 5)
    rows, cols = torch.tensor([0, 3]), torch.tensor([1, -1])
    torch.npu.reset_stats()
    assert torch.equal(self.to("npu")[rows.to("npu"), cols.to("npu")].cpu(), self[rows, cols])
    assert "aten::index.Tensor" in torch.npu.fallback_stats()
