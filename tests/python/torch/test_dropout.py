"""Dropout and random fills on the npu. By default the keep mask and
rand/randn are drawn on the device (RAND, RANDN: Philox4x32-10 keyed by the
npu generator, reproducible from a seed, statistics checked); with
torch.npu.set_host_random(True) (NPU_RNG=host) they are drawn on the host
with the npu generator as the CPU draws them, so a seed gives the CPU's
values. The scaling and the backward run on the device, with no fallback."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from npu_testing import native


@pytest.fixture
def host_random():
    torch.npu.set_host_random(True)
    yield
    torch.npu.set_host_random(False)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_host_dropout_with_a_seed_equals_the_cpu_bit_for_bit(p, host_random):
    x = torch.randn(37, 53)
    torch.manual_seed(11)
    expected = F.dropout(x, p, training=True)
    torch.manual_seed(11)
    with native("mul"):
        got = F.dropout(x.npu(), p, training=True)
    assert got.is_npu and torch.equal(got.cpu(), expected)


def test_the_backward_uses_the_forward_mask_and_scale(host_random):
    x = torch.randn(64, 48, requires_grad=True)
    torch.manual_seed(5)
    F.dropout(x, 0.25, training=True).square().sum().backward()
    x_npu = x.detach().npu().requires_grad_()
    torch.manual_seed(5)
    with native():
        out = F.dropout(x_npu, 0.25, training=True)
        out.square().sum().backward()
    assert torch.equal(x_npu.grad.cpu(), x.grad)


@pytest.mark.parametrize("host", [False, True], ids=["device", "host"])
def test_the_mask_keeps_one_minus_p_and_advances_the_generator(host):
    torch.npu.set_host_random(host)
    torch.npu.manual_seed(3)
    ones = torch.ones(200_000, device="npu")
    first = F.dropout(ones, 0.3, training=True).cpu()
    kept = (first != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01
    assert torch.all((first == 0) | torch.isclose(first, torch.tensor(1 / 0.7)))
    second = F.dropout(ones, 0.3, training=True).cpu()
    torch.npu.set_host_random(False)
    assert not torch.equal(first, second)  # the generator moved on


def test_native_dropout_in_eval_mode_and_at_the_ends():
    x = torch.randn(10, 10, device="npu")
    out, mask = torch.native_dropout(x, 0.5, False)
    assert torch.equal(out.cpu(), x.cpu()) and mask.dtype == torch.bool and bool(mask.cpu().all())
    dropped, mask = torch.native_dropout(x, 1.0, True)
    assert torch.equal(dropped.cpu(), torch.zeros(10, 10)) and not bool(mask.cpu().any())
    kept, mask = torch.native_dropout(x, 0.0, True)
    assert torch.equal(kept.cpu(), x.cpu()) and bool(mask.cpu().all())


def test_a_module_with_host_dropout_trains_as_on_the_cpu(host_random):
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


def test_device_dropout_is_rand_compare_and_scale_and_its_backward_uses_the_mask():
    x = torch.randn(64, 48)
    x_npu = x.npu().requires_grad_()
    torch.npu.manual_seed(5)
    with native("mul"):
        out = F.dropout(x_npu, 0.25, training=True)
        out.square().sum().backward()
    assert torch.npu.op_stats()["ge"]["packets"] > 0  # the keep mask: u >= p
    kept = out.detach().cpu() != 0
    torch.testing.assert_close(out.detach().cpu(), torch.where(kept, x / 0.75, 0.0), rtol=1e-6, atol=0)
    torch.testing.assert_close(x_npu.grad.cpu(), torch.where(kept, 2 * x / 0.75 / 0.75, 0.0),
                               rtol=1e-5, atol=0)
    torch.npu.manual_seed(5)
    again = F.dropout(x.npu(), 0.25, training=True)
    assert torch.equal(again.cpu(), out.detach().cpu())  # the seed reproduces the mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_device_rand_and_randn_statistics_and_reproducibility(dtype):
    n = 1 << 16
    torch.npu.manual_seed(21)
    with native("uniform_", "normal_"):
        u = torch.rand(n, device="npu", dtype=dtype)
        z = torch.randn(n, device="npu", dtype=dtype)
        shifted = torch.empty(n, device="npu").uniform_(-2.0, 6.0)
        scaled = torch.empty(n, device="npu").normal_(3.0, 0.5)
    u, z, shifted, scaled = (t.cpu().double() for t in (u, z, shifted, scaled))
    assert u.min() >= 0 and u.max() <= 1
    # Means within 5 standard errors; variances within 5 %.
    bound = 5 / math.sqrt(n)
    assert abs(u.mean() - 0.5) < bound * math.sqrt(1 / 12) and abs(u.var() - 1 / 12) < 0.05 / 12
    assert abs(z.mean()) < bound and abs(z.var() - 1) < 0.05
    assert shifted.min() >= -2 and shifted.max() <= 6 and abs(shifted.mean() - 2) < bound * 8
    assert abs(scaled.mean() - 3) < bound * 0.5 and abs(scaled.std() - 0.5) < 0.05 * 0.5
    histogram = torch.histc(u, bins=16, min=0, max=1)
    chi2 = ((histogram - n / 16) ** 2 / (n / 16)).sum().item()
    assert chi2 < 37.7  # the 0.999 quantile of chi-square with 15 degrees of freedom
    torch.npu.manual_seed(21)
    assert torch.equal(torch.rand(n, device="npu", dtype=dtype).cpu().double(), u)


def test_host_random_draws_the_cpus_values(host_random):
    torch.manual_seed(4)
    expected = torch.randn(100)
    torch.manual_seed(4)
    assert torch.equal(torch.randn(100, device="npu").cpu(), expected)
