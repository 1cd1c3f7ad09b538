"""torch.npu.capture: a trace of the Qwen2 forward replays on npu-sim with
every check region (each range the host read back) matching."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from npu_testing import REPO, build_dir

sys.path.insert(0, str(REPO / "examples" / "torch"))
import qwen2_forward  # noqa: E402


def npu_sim() -> str:
    path = build_dir() / "bin" / "npu-sim"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the toolchain (scripts/build) or set NPU_BUILD_DIR")
    return str(path)


def replay(trace) -> subprocess.CompletedProcess:
    return subprocess.run([npu_sim(), str(trace)], capture_output=True, text=True, timeout=300)


def test_capture_of_a_small_program_replays(tmp_path):
    x = torch.randn(8, 16).to("npu")
    w = torch.randn(16, 4).to("npu")
    trace = tmp_path / "small.npubin"
    with torch.npu.capture(trace):
        y = (x @ w).relu()
        y.cpu()
    assert trace.stat().st_size > 0
    result = replay(trace)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_capture_of_the_qwen2_forward_replays_on_npu_sim(tmp_path, attn):
    model = qwen2_forward.build_model(attn).to("npu")
    input_ids = qwen2_forward.sample_input_ids(batch=1, length=8)
    trace = tmp_path / "fwd.npubin"
    with torch.npu.capture(trace):
        logits = qwen2_forward.forward_logits(model, input_ids, "npu").cpu()
    assert torch.isfinite(logits).all()
    result = replay(trace)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mismatch" not in result.stdout.lower()


def test_a_capture_cannot_nest(tmp_path):
    with torch.npu.capture(tmp_path / "outer.npubin"):
        with pytest.raises(RuntimeError, match="already running"):
            with torch.npu.capture(tmp_path / "inner.npubin"):
                pass
