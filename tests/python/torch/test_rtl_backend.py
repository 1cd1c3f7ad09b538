"""The PyTorch bridge on the RTL: NPU_BACKEND=rtl (torch.npu.set_backend)
runs the examples' MLP, forward and backward, with results bit-identical to
the ISS backend's; the cosim backend runs it with the ISS and the RTL in
lockstep; a tiny Qwen2 forward captured from PyTorch replays on
`npu-sim --backend rtl` and `--backend cosim` with every check passing.
Skipped only when the toolchain was built without the RTL (no Verilator)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch

from npu_testing import REPO, build_dir

sys.path.insert(0, str(REPO / "examples" / "torch"))
import mlp_forward  # noqa: E402
import qwen2_forward  # noqa: E402


def rtl_built() -> bool:
    cache = build_dir() / "CMakeCache.txt"
    return cache.exists() and "NPU_BUILD_RTL:BOOL=ON" in cache.read_text()


pytestmark = pytest.mark.skipif(not rtl_built(), reason="the toolchain was built without the RTL (NPU_BUILD_RTL)")


@pytest.fixture(autouse=True)
def _restores_the_backend():
    before = torch.npu.get_backend()
    yield
    torch.npu.set_backend(before)


def mlp_step(backend: str) -> list[torch.Tensor]:
    """The MLP's output and every parameter's gradient of sum(output), on `backend`."""
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


def npu_sim(*args: str) -> subprocess.CompletedProcess:
    path = build_dir() / "bin" / "npu-sim"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the toolchain (scripts/build) or set NPU_BUILD_DIR")
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_a_qwen2_forward_capture_replays_on_the_rtl(tmp_path, attn):
    torch.npu.set_backend("iss")
    model = qwen2_forward.build_model(attn).to("npu")
    trace = tmp_path / "qwen2.npubin"
    with torch.npu.capture(trace):
        logits = qwen2_forward.forward_logits(model, qwen2_forward.sample_input_ids(batch=1, length=8), "npu").cpu()
    assert torch.isfinite(logits).all()

    rtl = npu_sim("--backend", "rtl", str(trace))
    assert rtl.returncode == 0, rtl.stdout + rtl.stderr
    summary = re.search(r"(\d+) packets on rtl, stopped at halt, (\d+) cycles", rtl.stdout)
    assert summary and int(summary[1]) > 100 and int(summary[2]) > 0, rtl.stdout
    checks = re.search(r"checks: (\d+) passed, 0 failed", rtl.stdout)
    assert checks and int(checks[1]) > 0, rtl.stdout

    # Packet by packet, the RTL writes what the ISS writes.
    cosim = npu_sim("--backend", "cosim", str(trace))
    assert cosim.returncode == 0, cosim.stdout + cosim.stderr
    assert re.search(r"cosim cycles: iss \d+, rtl \d+", cosim.stdout), cosim.stdout
    assert "divergence" not in cosim.stdout + cosim.stderr
