"""bf16 and f16 ops whose instructions take the type run as packets on the
typed operands (no binary32 copies, no CPU fallback) and compute what the
CPU's kernels do: binary32 arithmetic rounded once on store, so within one
unit of the reduced type of the CPU's result (sums and transcendentals
differ in their last binary32 places); a whole bf16/f16 model runs so, but
for the compositions docs/pytorch.md lists (issue 15)."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.nn.functional as F

from npu_testing import REPO

REDUCED = [torch.bfloat16, torch.float16]


def assert_ran_in_the_reduced_type(*ops: str) -> None:
    stats, widened = torch.npu.op_stats(), torch.npu.widened_stats()
    assert torch.npu.fallback_stats() == {}
    assert widened == {}, widened
    for op in ops:
        assert stats.get(op, {}).get("packets", 0) > 0, (op, stats)


def assert_within_an_ulp(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    ulp = torch.finfo(expected.dtype).eps
    scale = expected.float().nan_to_num(0.0).abs().max().item() if expected.numel() else 0.0
    torch.testing.assert_close(actual.float(), expected.float(), rtol=ulp, atol=ulp * scale,
                               equal_nan=True)


def grads(fn, *inputs: torch.Tensor, device: str) -> list[torch.Tensor]:
    """fn's output and the gradients of its floating inputs for a fixed
    output gradient, on `device`."""
    leaves = [t.to(device).detach().requires_grad_(t.is_floating_point()) for t in inputs]
    out = fn(*leaves)
    torch.manual_seed(7)
    out.backward(torch.randn(out.shape).to(out.dtype).to(device))
    return [out.detach().cpu()] + [t.grad.cpu() for t in leaves if t.is_floating_point()]


def offset_view(t: torch.Tensor) -> torch.Tensor:
    """t's values in a view starting one element into its storage: a
    2-byte element's view starts mid-word, which no operand may."""
    flat = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    flat[1:] = t.reshape(-1)
    return flat[1:].view(t.shape)


FORWARD = {  # name: (fn of x, the ops that must have built packets)
    "sum_last": (lambda x: x.sum(-1), ["sum"]),
    "sum_leading": (lambda x: x.sum(0), ["sum"]),
    "sum_all": (lambda x: x.sum(), ["sum"]),
    "sum_empty": (lambda x: x[:, :0].sum(1), []),
    "mean_dims": (lambda x: x.mean((0, 2)), ["mean"]),
    "mean_empty": (lambda x: x[:, :0].mean(1), []),
    "amax": (lambda x: x.amax(1), ["amax"]),
    "sum_out": (lambda x: torch.sum(x, 1, out=torch.empty(0, dtype=x.dtype, device=x.device)),
                ["sum.out"]),
}

BACKWARD = {  # name: (fn of x, ops)
    "softmax_last": (lambda x: torch.softmax(x, -1), ["_softmax", "_softmax_backward_data"]),
    "softmax_dim0": (lambda x: torch.softmax(x, 0), ["_softmax", "_softmax_backward_data"]),
    "log_softmax": (lambda x: F.log_softmax(x, 1),
                    ["_log_softmax", "_log_softmax_backward_data"]),
    "silu": (F.silu, ["silu_backward"]),
    "tanh": (torch.tanh, ["tanh_backward"]),
    "gelu": (F.gelu, ["gelu_backward"]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), ["gelu_backward"]),
    "clamp": (lambda x: x.clamp(-0.5, 0.7), ["clamp_backward"]),
}


@pytest.mark.parametrize("offset", [False, True], ids=["aligned", "offset"])
@pytest.mark.parametrize("dtype", REDUCED, ids=str)
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_reductions_run_in_the_reduced_type(name, dtype, offset):
    fn, ops = FORWARD[name]
    x = torch.randn(5, 9, 7).to(dtype)
    x[0, 0, 0] = 300.0  # a large element: a binary32 sum keeps the small ones
    expected = fn(x)
    torch.npu.reset_stats()
    source = x.to("npu")
    actual = fn(offset_view(source) if offset else source).cpu()
    assert_within_an_ulp(actual, expected)
    assert_ran_in_the_reduced_type(*ops)


@pytest.mark.parametrize("dtype", REDUCED, ids=str)
def test_a_sum_rounds_its_binary32_sum_once(dtype):
    # 1 + 256 * 2^-9 in bf16 steps: each 2^-9 is below half an ulp of 1 and
    # vanishes if the sum is rounded as it goes; the binary32 sum keeps it.
    x = torch.cat([torch.ones(1), torch.full((256,), 2.0 ** -9)]).to(dtype)
    total = x.to("npu").sum().cpu()
    assert total.item() == 1.5 and total.dtype == dtype


@pytest.mark.parametrize("dtype", REDUCED, ids=str)
@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_softmax_and_activation_gradients_run_in_the_reduced_type(name, dtype):
    fn, ops = BACKWARD[name]
    x = torch.randn(6, 33).to(dtype)
    expected = grads(fn, x, device="cpu")
    torch.npu.reset_stats()
    actual = grads(fn, x, device="npu")
    for a, e in zip(actual, expected, strict=True):
        assert_within_an_ulp(a, e)
    assert_ran_in_the_reduced_type(*ops)


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", REDUCED, ids=str)
def test_layer_norm_and_its_gradients_run_in_the_reduced_type(dtype, affine):
    x = torch.randn(3, 4, 37).to(dtype)
    params = [torch.randn(37).to(dtype), torch.randn(37).to(dtype)] if affine else []

    def norm(x, *wb):
        return F.layer_norm(x, [37], *wb, eps=1e-5)

    expected = grads(norm, x, *params, device="cpu")
    torch.npu.reset_stats()
    actual = grads(norm, x, *params, device="npu")
    for a, e in zip(actual, expected, strict=True):
        assert_within_an_ulp(a, e)
    assert_ran_in_the_reduced_type("native_layer_norm", "native_layer_norm_backward")
    # The statistics come back in the type, as the CPU's do.
    stats = torch.native_layer_norm(x.to("npu"), [37], None, None, 1e-5)[1:]
    cpu_stats = torch.native_layer_norm(x, [37], None, None, 1e-5)[1:]
    for a, e in zip(stats, cpu_stats, strict=True):
        assert_within_an_ulp(a.cpu(), e)
    if affine:
        # The bias gradient is the binary32 column sum rounded once.
        torch.manual_seed(7)
        dy = torch.randn(3, 4, 37).to(dtype)
        assert torch.equal(actual[3], dy.float().sum((0, 1)).to(dtype))


@pytest.mark.parametrize("dtype", REDUCED, ids=str)
def test_a_layer_norm_with_binary32_parameters_keeps_the_cpus_types(dtype):
    # The CPU's mixed-type kernel: the output in the input's type, the
    # statistics and the parameters' gradients binary32.
    x = torch.randn(4, 8).to(dtype)
    w, b = torch.randn(8), torch.randn(8)

    def norm(x, w, b):
        return F.layer_norm(x, [8], w, b)

    expected = grads(norm, x, w, b, device="cpu")
    torch.npu.reset_stats()
    actual = grads(norm, x, w, b, device="npu")
    assert [a.dtype for a in actual] == [e.dtype for e in expected]
    # The CPU's parameter gradients sum products of values of the input's
    # precision: they agree to its unit, not to binary32's.
    for a, e in zip(actual, expected, strict=True):
        assert_within_an_ulp(a.to(dtype), e.to(dtype))
    stats = torch.native_layer_norm(x.to("npu"), [8], w.to("npu"), b.to("npu"), 1e-5)[1:]
    assert [s.dtype for s in stats] == [torch.float32] * 2
    assert torch.npu.fallback_stats() == {}


@pytest.mark.parametrize("dtype", REDUCED + [torch.float32], ids=str)
def test_embedding_of_a_reduced_table_is_exact(dtype):
    table = torch.randn(10, 5).to(dtype)
    ids = torch.tensor([[3, 0, 9], [3, 3, 1]])
    torch.npu.reset_stats()
    out = F.embedding(ids.to("npu"), offset_view(table.to("npu")))
    assert torch.equal(out.cpu(), F.embedding(ids, table))
    assert_ran_in_the_reduced_type("embedding")
    with pytest.raises(RuntimeError, match="(?i)index|range"):
        F.embedding(torch.tensor([10]).to("npu"), table.to("npu")).cpu()


@pytest.mark.parametrize("dtype", REDUCED, ids=str)
def test_dropout_keeps_or_scales_each_element_in_the_reduced_type(dtype):
    x = torch.randn(64, 65).to(dtype)
    torch.npu.reset_stats()
    leaf = x.to("npu").requires_grad_()
    out = F.dropout(leaf, p=0.25, training=True)
    out.backward(torch.ones_like(out))
    y, g = out.detach().cpu(), leaf.grad.cpu()
    kept = y != 0
    assert y.dtype == dtype and 0.6 < kept.float().mean().item() < 0.9
    # Kept elements are x times the binary32 scale 1 / 0.75, rounded once;
    # the gradient of each is that scale in the type.
    scale = torch.tensor(1 / 0.75, dtype=torch.float32)
    assert torch.equal(y[kept], (x.float() * scale).to(dtype)[kept])
    assert torch.equal(g[kept], torch.full_like(g[kept], 1 / 0.75))
    assert torch.equal(g[~kept & (x != 0)], torch.zeros_like(g[~kept & (x != 0)]))
    assert_ran_in_the_reduced_type("mul")


# The compositions that would round at every step in the reduced type run
# on binary32 copies (Widening.cpp); everything else a bf16 model runs is
# native in the type (docs/pytorch.md, "bf16 and f16").
ON_BINARY32_COPIES = {"aten::addcdiv_", "aten::addcmul_", "aten::lerp_.Scalar",
                      "aten::embedding_dense_backward"}


@pytest.mark.parametrize("name", ["qwen2", "gpt2"])
def test_a_bf16_model_runs_in_the_reduced_type_but_for_the_optimizer(name):
    sys.path.insert(0, str(REPO / "examples" / "torch"))
    import hf_models

    model = hf_models.build(name).to(torch.bfloat16)
    ids = hf_models.sample_ids()
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    model.to("npu")
    torch.npu.reset_stats()
    with torch.no_grad():
        logits = model(input_ids=ids.to("npu")).logits.cpu()
        model.generate(ids.to("npu"), max_new_tokens=2, do_sample=False)
    assert torch.npu.fallback_stats() == {} and torch.npu.widened_stats() == {}
    # Two layers of bf16 activations, each rounded once where the CPU does.
    assert (logits.float() - expected.float()).abs().max() < 0.1 * expected.float().abs().max()
    model.train()
    loss = model(input_ids=ids.to("npu"), labels=ids.to("npu")).loss
    loss.backward()
    torch.optim.AdamW(model.parameters(), lr=1e-3).step()
    assert torch.npu.fallback_stats() == {}
    assert set(torch.npu.widened_stats()) <= ON_BINARY32_COPIES, torch.npu.widened_stats()
