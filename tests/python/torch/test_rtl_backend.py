"""The PyTorch bridge on the RTL: NPU_BACKEND=rtl (torch.npu.set_backend)
runs the examples' MLP, forward and backward, with results bit-identical to
the ISS backend's; the cosim backend runs it with the ISS and the RTL in
lockstep; a tiny Qwen2 forward captured from PyTorch replays on
`npu-sim --backend rtl` and `--backend cosim` with every check passing.
Skipped only when the toolchain was built without the RTL (no Verilator)."""

from __future__ import annotations

import gc
import re
import sys

import pytest
import torch

from npu_testing import REPO, assert_replay_passes, replay, rtl_built

sys.path.insert(0, str(REPO / "examples" / "torch"))
import mlp_forward  # noqa: E402
import qwen2_forward  # noqa: E402


pytestmark = pytest.mark.skipif(not rtl_built(), reason="the toolchain was built without the RTL (NPU_BUILD_RTL)")


@pytest.fixture(autouse=True)
def _restores_the_backend():
    before = torch.npu.get_backend()
    yield
    torch.npu.set_backend(before)


def mlp_step(backend: str) -> list[torch.Tensor]:
    """The MLP's output and every parameter's gradient of sum(output), on `backend`."""
    gc.collect()  # earlier tests' unreachable npu tensors would block the switch
    torch.npu.set_backend(backend)
    assert torch.npu.get_backend() == backend
    model = mlp_forward.build_mlp().to("npu")
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(1)).to("npu")
    out = model(x)
    out.sum().backward()
    results = [out.detach().cpu()] + [p.grad.cpu() for p in model.parameters()]
    stats = torch.npu.device_stats()
    assert stats["cycles"] > 0 and stats["packets"] > 0, stats
    return results


def test_the_mlp_on_the_rtl_is_bit_identical_to_the_iss():
    iss, rtl = mlp_step("iss"), mlp_step("rtl")
    assert len(iss) == len(rtl) == 8
    for a, b in zip(iss, rtl):
        assert torch.equal(a, b)
    with torch.no_grad():
        expected = mlp_forward.build_mlp()(torch.randn(8, 32, generator=torch.Generator().manual_seed(1)))
    torch.testing.assert_close(rtl[0], expected, rtol=1e-5, atol=1e-5)


def test_the_mlp_under_cosim_runs_both_models_in_lockstep():
    # A divergence of any packet would raise a device fault here.
    iss, cosim = mlp_step("iss"), mlp_step("cosim")
    for a, b in zip(iss, cosim):
        assert torch.equal(a, b)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_replay_of_a_captured_qwen2_forward_on_the_rtl_and_in_cosim(tmp_path, attn):
    # The trace comes from the ISS backend: the RTL's replay passing its
    # checks means it computed what the ISS computed, bit for bit.
    torch.npu.set_backend("iss")
    model = qwen2_forward.build_model(attn).to("npu")
    trace = tmp_path / "qwen2.npubin"
    with torch.npu.capture(trace):
        logits = qwen2_forward.forward_logits(model, qwen2_forward.sample_input_ids(batch=1, length=8), "npu").cpu()
    assert torch.isfinite(logits).all()

    rtl = replay(trace, "--backend", "rtl")
    assert_replay_passes(rtl)
    summary = re.search(r"(\d+) packets on rtl, stopped at halt, (\d+) cycles", rtl.stdout)
    assert summary and int(summary[1]) > 100 and int(summary[2]) > 0, rtl.stdout

    # Packet by packet, the RTL writes what the ISS writes.
    cosim = replay(trace, "--backend", "cosim")
    assert_replay_passes(cosim)
    assert re.search(r"cosim cycles: iss \d+, rtl \d+", cosim.stdout), cosim.stdout
    assert "divergence" not in cosim.stdout + cosim.stderr
