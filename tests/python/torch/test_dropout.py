"""Dropout on the npu: the keep mask drawn on the host with the npu
generator as the CPU draws it (so a seed gives the CPU's mask), the scaling
and the backward on the device, with no fallback."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from npu_testing import native


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_with_a_seed_equals_the_cpu_bit_for_bit(p):
    x = torch.randn(37, 53)
    torch.manual_seed(11)
    expected = F.dropout(x, p, training=True)
    torch.manual_seed(11)
    with native("mul"):
        got = F.dropout(x.npu(), p, training=True)
    assert got.is_npu and torch.equal(got.cpu(), expected)


def test_the_backward_uses_the_forward_mask_and_scale():
    x = torch.randn(64, 48, requires_grad=True)
    torch.manual_seed(5)
    F.dropout(x, 0.25, training=True).square().sum().backward()
    x_npu = x.detach().npu().requires_grad_()
    torch.manual_seed(5)
    with native():
        out = F.dropout(x_npu, 0.25, training=True)
        out.square().sum().backward()
    assert torch.equal(x_npu.grad.cpu(), x.grad)


def test_the_mask_keeps_one_minus_p_and_advances_the_generator():
    torch.npu.manual_seed(3)
    ones = torch.ones(200_000, device="npu")
    first = F.dropout(ones, 0.3, training=True).cpu()
    kept = (first != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01
    assert torch.all((first == 0) | torch.isclose(first, torch.tensor(1 / 0.7)))
    second = F.dropout(ones, 0.3, training=True).cpu()
    assert not torch.equal(first, second)  # the generator moved on


def test_native_dropout_in_eval_mode_and_at_the_ends():
    x = torch.randn(10, 10, device="npu")
    out, mask = torch.native_dropout(x, 0.5, False)
    assert torch.equal(out.cpu(), x.cpu()) and mask.dtype == torch.bool and bool(mask.cpu().all())
    dropped, mask = torch.native_dropout(x, 1.0, True)
    assert torch.equal(dropped.cpu(), torch.zeros(10, 10)) and not bool(mask.cpu().any())
    kept, mask = torch.native_dropout(x, 0.0, True)
    assert torch.equal(kept.cpu(), x.cpu()) and bool(mask.cpu().all())


def test_a_module_with_dropout_trains_as_on_the_cpu():
    def step(device: str) -> torch.Tensor:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Dropout(0.2), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 1)).to(device)
        x = torch.randn(8, 16).to(device)
        torch.manual_seed(1)  # the generator dropout draws from (the npu's on the npu)
        loss = model(x).square().mean()
        loss.backward()
        return torch.cat([loss.detach().reshape(1)] + [p.grad.flatten() for p in model.parameters()]).cpu()

    torch.testing.assert_close(step("npu"), step("cpu"), rtol=1e-5, atol=1e-6)
