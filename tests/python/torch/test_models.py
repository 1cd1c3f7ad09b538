"""Whole models on the NPU: the examples' MLP and a tiny Qwen2 causal LM
(eager and SDPA attention) against PyTorch CPU."""

from __future__ import annotations

import sys

import pytest
import torch

from npu_testing import REPO

sys.path.insert(0, str(REPO / "examples" / "torch"))
import mlp_forward  # noqa: E402
import qwen2_forward  # noqa: E402

# Ops the forward pass must run natively whatever else falls back.
CORE_OPS = ("mm", "bmm", "mul", "add", "silu", "embedding")


def test_mlp_forward_matches_cpu():
    model = mlp_forward.build_mlp()
    x = torch.randn(16, 32)
    with torch.no_grad():
        expected = model(x)
        model.to("npu")
        torch.npu.reset_stats()
        result = model(x.to("npu")).cpu()
    assert torch.npu.fallback_stats() == {}
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def input_ids() -> torch.Tensor:
    return qwen2_forward.sample_input_ids(batch=2, length=12)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_qwen2_forward_matches_cpu_logits(attn, input_ids):
    model = qwen2_forward.build_model(attn)
    expected = qwen2_forward.forward_logits(model, input_ids, "cpu")
    model.to("npu")
    torch.npu.reset_stats()
    logits = qwen2_forward.forward_logits(model, input_ids, "npu").cpu()
    assert qwen2_forward.relative_difference(logits, expected) < 1e-4
    stats = torch.npu.op_stats()
    for op in CORE_OPS + ("_softmax" if attn == "eager" else "_safe_softmax",):
        assert stats.get(op, {}).get("packets", 0) > 0, op
    # What falls back is the model's integer bookkeeping (position ids, the
    # causal mask): no float op of the forward pass.
    float_ops = {"aten::mm", "aten::bmm", "aten::addmm", "aten::_softmax", "aten::silu",
                 "aten::mul.Tensor", "aten::pow.Tensor_Scalar", "aten::rsqrt", "aten::mean.dim"}
    assert not float_ops & torch.npu.fallback_stats().keys()


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_qwen2_forward_runs_strictly_native_with_prepared_inputs(attn, input_ids):
    model = qwen2_forward.build_model(attn)
    expected = qwen2_forward.forward_logits(model, input_ids, "cpu", prepared=True)
    reference = qwen2_forward.forward_logits(model, input_ids, "cpu")
    torch.testing.assert_close(expected, reference, rtol=1e-5, atol=1e-5)
    model.to("npu")
    torch.npu.reset_stats()
    torch.npu.set_strict(True)
    try:
        logits = qwen2_forward.forward_logits(model, input_ids, "npu", prepared=True).cpu()
    finally:
        torch.npu.set_strict(False)
    assert torch.npu.fallback_stats() == {}
    assert qwen2_forward.relative_difference(logits, expected) < 1e-4
