"""Training on the NPU against the same training on the CPU: an MLP
classifier (ReLU, tanh-GELU, cross-entropy, fused AdamW) and the tiny Qwen2
with LoRA adapters (examples/torch/qwen2_lora.py). Forward, backward and
optimizer run natively; what still falls back is named exactly."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from npu_testing import REPO, assert_replay_passes, native, replay

sys.path.insert(0, str(REPO / "examples" / "torch"))
import qwen2_forward  # noqa: E402
import qwen2_lora  # noqa: E402


def mlp() -> torch.nn.Module:
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16),
                               torch.nn.GELU(approximate="tanh"), torch.nn.Linear(16, 5))


def mlp_losses(model: torch.nn.Module, device: str, steps: int) -> list[float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01, fused=True)
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(24, 12, generator=generator).to(device)
    y = torch.randint(0, 5, (24,), generator=generator).to(device)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


def test_mlp_training_matches_cpu_with_no_fallback():
    cpu_model = mlp()
    npu_model = copy.deepcopy(cpu_model).to("npu")
    expected = mlp_losses(cpu_model, "cpu", 8)
    with native("addmm", "mm", "threshold_backward", "gelu_backward", "_log_softmax_backward_data",
                "nll_loss_forward", "nll_loss_backward", "_fused_adamw_"):
        result = mlp_losses(npu_model, "npu", 8)
    assert expected[-1] < expected[0]  # it learns
    torch.testing.assert_close(torch.tensor(result), torch.tensor(expected), rtol=1e-5, atol=0)
    for p, q in zip(npu_model.parameters(), cpu_model.parameters(), strict=True):
        torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5)


def lora_curves(steps: int, optimizer: str, prepared: bool) -> tuple[list[float], list[float]]:
    cpu_model, cpu_opt, npu_model, npu_opt = qwen2_lora.lora_pair(rank=4, optimizer=optimizer, lr=3e-2)
    batches = qwen2_lora.dataset(steps, distinct=2, batch=2, length=12)
    cpu = qwen2_lora.train(cpu_model, cpu_opt, batches, "cpu", prepared)
    torch.npu.reset_stats()
    npu = qwen2_lora.train(npu_model, npu_opt, batches, "npu", prepared)
    return cpu.losses, npu.losses


@pytest.mark.parametrize("optimizer", ["fused", "foreach"])
def test_qwen2_lora_loss_tracks_cpu(optimizer):
    cpu, npu = lora_curves(6, optimizer, prepared=False)
    assert qwen2_lora.max_relative_difference(npu, cpu) < qwen2_lora.LOSS_RTOL
    assert cpu[-1] < cpu[0]
    stats = torch.npu.op_stats()
    for op in ("mm", "bmm", "_softmax_backward_data", "_log_softmax_backward_data", "silu_backward",
               "nll_loss_forward", "nll_loss_backward",
               "_fused_adamw_" if optimizer == "fused" else "addcdiv_"):
        assert stats.get(op, {}).get("packets", 0) > 0, op
    # Forward, backward, optimizer and the model's integer bookkeeping
    # (positions, causal mask) all run on the device.
    assert torch.npu.fallback_stats() == {}


def test_qwen2_lora_training_is_strictly_native_with_prepared_inputs():
    torch.npu.set_strict(True)
    try:
        cpu, npu = lora_curves(4, "fused", prepared=True)
    finally:
        torch.npu.set_strict(False)
    assert torch.npu.fallback_stats() == {}
    assert qwen2_lora.max_relative_difference(npu, cpu) < qwen2_lora.LOSS_RTOL


def test_replay_of_a_captured_lora_training_step_passes_its_checks(tmp_path):
    trace = tmp_path / "step.npubin"
    result = subprocess.run([sys.executable, str(REPO / "examples" / "torch" / "qwen2_lora.py"), "--steps", "2",
                             "--batch", "2", "--length", "8", "--capture", str(trace)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tracks the CPU run" in result.stdout
    assert_replay_passes(replay(trace))
