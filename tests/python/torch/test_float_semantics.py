"""The NPU's float rules where they differ from the CPU's (docs/arith.md §1,
docs/pytorch.md "Subnormals and NaNs"): compute instructions read subnormal
inputs as zeros and flush subnormal results to zero, and every NaN they
produce is the canonical 0x7fc00000; data movement keeps the bits."""

from __future__ import annotations

import pytest
import torch

from npu_testing import native

CANONICAL_NAN = 0x7FC00000
SMALLEST_NORMAL = 2.0**-126


def floats(*bits: int) -> torch.Tensor:
    return torch.tensor(bits, dtype=torch.int64).to(torch.int32).view(torch.float32)


def bits(t: torch.Tensor) -> list[int]:
    return [b & 0xFFFFFFFF for b in t.cpu().view(torch.int32).tolist()]


def subnormals() -> torch.Tensor:
    # The smallest and largest positive subnormals, and a negative one.
    return floats(0x00000001, 0x007FFFFF, 0x80400000)


# Each op on (+tiny, +huge, -small) subnormals, and the signs of the zeros the
# NPU gives (those of the op applied to +0, +0, -0).
@pytest.mark.parametrize("apply,op,signs", [
    (lambda x: x + 0.0, "add", [0, 0, 0]),  # -0 + +0 = +0
    (lambda x: x * 1.0, "mul", [0, 0, 1]),
    (lambda x: torch.maximum(x, torch.full_like(x, -1.0)), "maximum", [0, 0, 1]),
    (torch.abs, "abs", [0, 0, 0]),
    (torch.neg, "neg", [1, 1, 0]),
    (torch.relu, "relu", [0, 0, 0]),  # fmax(-0, +0) = +0
], ids=["add", "mul", "maximum", "abs", "neg", "relu"])
def test_subnormal_inputs_are_read_as_zeros(apply, op, signs):
    x = subnormals()
    with native(op):
        result = apply(x.to("npu")).cpu()
    assert (apply(x)[:2] != 0).all()  # the CPU keeps them
    assert (result == 0).all(), result
    assert torch.signbit(result).int().tolist() == signs


def test_subnormal_results_flush_to_zero():
    x = torch.tensor([SMALLEST_NORMAL, -SMALLEST_NORMAL, 3 * SMALLEST_NORMAL])
    with native("mul", "sub"):
        halved = (x.to("npu") * 0.5).cpu()
        difference = (x.to("npu") - torch.tensor([0.0, 0.0, 2.5 * SMALLEST_NORMAL]).to("npu")).cpu()
    assert bits(halved) == [0x00000000, 0x80000000, 0x00C00000]  # 1.5·2^-126 is normal
    assert bits(x * 0.5)[:2] == [0x00400000, 0x80400000]  # the CPU's subnormals
    assert bits(difference)[2] == 0x00000000  # exact 0.5·2^-126, flushed


def test_nan_results_are_canonical():
    x = floats(0x7FC00123, 0xFFC00001, 0x7F800001, 0xFFFFFFFF)  # payloads, signs, a signalling NaN
    with native("mul", "neg", "exp"):
        products, negated, exponentials = ((x.to("npu") * 1.0).cpu(), torch.neg(x.to("npu")).cpu(),
                                           torch.exp(x.to("npu")).cpu())
    for result in (products, negated, exponentials):
        assert bits(result) == [CANONICAL_NAN] * 4
    assert len(set(bits(x * 1.0))) == 4  # the CPU keeps each payload and sign


def test_data_movement_keeps_subnormals_and_nan_payloads():
    x = torch.cat([subnormals(), floats(0x7FC00123, 0xFFC00001, 0x7F800001)])
    with native("_copy_from", "cat"):
        moved = x.to("npu")
        copies = [moved.cpu(), moved.clone().cpu(), torch.cat([moved[:3], moved[3:]]).cpu()]
        gathered = moved[::2].contiguous().cpu()  # COPY_STRIDED
    for copy in copies:
        assert bits(copy) == bits(x)
    assert bits(gathered) == bits(x[::2])
