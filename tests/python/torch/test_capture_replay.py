"""torch.npu.capture and replays of its traces on npu-sim.

A replay executes the captured packets again and compares every range the
host read back during the capture with the bytes it read then. These are
replay tests: they show that a trace is self-contained and its execution
reproducible (the ISS against its own recording), not that the NPU computes
what the CPU does (test_ops.py and test_models.py compare with the CPU)."""

from __future__ import annotations

import sys

import npu_bridge
import pytest
import torch

from npu_testing import REPO, assert_replay_passes, replay

sys.path.insert(0, str(REPO / "examples" / "torch"))
import qwen2_forward  # noqa: E402


def test_replay_of_a_captured_small_program_passes_its_checks(tmp_path):
    x = torch.randn(8, 16).to("npu")
    w = torch.randn(16, 4).to("npu")
    trace = tmp_path / "small.npubin"
    with torch.npu.capture(trace):
        y = (x @ w).relu()
        y.cpu()
    assert trace.stat().st_size > 0
    assert assert_replay_passes(replay(trace)) == 1  # the one read-back of y


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_replay_of_a_captured_qwen2_forward_passes_its_checks(tmp_path, attn):
    model = qwen2_forward.build_model(attn).to("npu")
    input_ids = qwen2_forward.sample_input_ids(batch=1, length=8)
    trace = tmp_path / "fwd.npubin"
    with torch.npu.capture(trace):
        logits = qwen2_forward.forward_logits(model, input_ids, "npu").cpu()
    assert torch.isfinite(logits).all()
    assert_replay_passes(replay(trace))


def test_a_replay_that_reads_other_values_fails(tmp_path):
    # The replay's verdict is the check regions: a trace whose recorded
    # read-back no longer matches what the packets compute must fail.
    x = torch.ones(64).to("npu")
    trace = tmp_path / "small.npubin"
    with torch.npu.capture(trace):
        (x * 3.0).cpu()
    data = bytearray(trace.read_bytes())
    pattern = bytes.fromhex("00004040") * 64  # 64 little-endian float32 3.0
    at = data.rfind(pattern)
    assert at >= 0, "the captured read-back of x * 3 is in the trace"
    data[at : at + 4] = bytes.fromhex("00008040")  # 4.0
    tampered = tmp_path / "tampered.npubin"
    tampered.write_bytes(bytes(data))
    result = replay(tampered)
    assert result.returncode != 0
    assert "checks: 0 passed, 1 failed" in result.stdout
    assert "mismatch" in result.stderr
    with pytest.raises(AssertionError):
        assert_replay_passes(result)


def test_a_capture_cannot_nest(tmp_path):
    with torch.npu.capture(tmp_path / "outer.npubin"):
        with pytest.raises(RuntimeError, match="already running"):
            with torch.npu.capture(tmp_path / "inner.npubin"):
                pass


def test_a_capture_into_a_missing_directory_fails_before_the_work(tmp_path):
    trace = tmp_path / "missing" / "fwd.npubin"
    x = torch.ones(4).to("npu")
    torch.npu.reset_stats()
    with pytest.raises(RuntimeError, match=f"cannot write the trace '{trace}': directory '{trace.parent}' "
                                           "does not exist"):
        with torch.npu.capture(trace):
            (x * 2).cpu()
    assert torch.npu.op_stats().get("mul", {}).get("calls", 0) == 0  # the body never ran
    assert not npu_bridge._C._capturing()
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    with pytest.raises(RuntimeError, match="is not a directory"):
        with torch.npu.capture(not_a_directory / "fwd.npubin"):
            pass
    with pytest.raises(RuntimeError, match="is a directory"):
        with torch.npu.capture(tmp_path):
            pass
    with torch.npu.capture(tmp_path / "after.npubin"):  # and captures still work
        (x * 2).cpu()
    assert (tmp_path / "after.npubin").stat().st_size > 0
