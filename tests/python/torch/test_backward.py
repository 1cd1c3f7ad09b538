"""The backward ops against PyTorch CPU autograd: softmax and log-softmax,
the activation gradients, embedding, nll_loss / cross_entropy, the matmul
and reduction gradients. Random shapes with non-contiguous, size-1 and
empty dims; each case asserts that the op built packets and that nothing
fell back to the CPU (or, where documented, exactly what did)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from npu_testing import EXACT, SUMS, ULPS, native, op_packets


def npu(t: torch.Tensor) -> torch.Tensor:
    return t.to("npu")


def strided(t: torch.Tensor) -> torch.Tensor:
    """t's values on the npu in a non-contiguous layout (first and last dims
    swapped in memory)."""
    return npu(t.transpose(0, -1).contiguous()).transpose(0, -1)


def check(result: torch.Tensor, expected: torch.Tensor, tolerance: dict[str, float]) -> None:
    assert result.device.type == "npu"
    torch.testing.assert_close(result.cpu(), expected, equal_nan=True, **tolerance)


def gradients(fn: Callable[..., torch.Tensor], inputs: list[torch.Tensor], grad_output: torch.Tensor,
              device: str) -> list[torch.Tensor]:
    """d(fn(*inputs) . grad_output)/d(inputs), computed on `device`."""
    leaves = [x.detach().to(device).requires_grad_() for x in inputs]
    out = fn(*leaves)
    out.backward(grad_output.to(device))
    return [leaf.grad for leaf in leaves]


def check_gradients(fn, inputs, grad_output, tolerance, *ops: str) -> None:
    expected = gradients(fn, inputs, grad_output, "cpu")
    with native(*ops):
        result = gradients(fn, inputs, grad_output, "npu")
    for r, e in zip(result, expected, strict=True):
        check(r, e, tolerance)


def random_shape(rng: torch.Generator, min_rank: int = 1) -> list[int]:
    rank = int(torch.randint(min_rank, 5, (1,), generator=rng))
    return [int(torch.randint(1, 6, (1,), generator=rng)) for _ in range(rank)]


# --- Softmax and log-softmax -----------------------------------------------------------

SOFTMAX_CASES = [((4, 7), -1), ((4, 7), 0), ((2, 3, 5), 1), ((1, 6), -1), ((5, 1), -1), ((3,), 0),
                 ((2, 0, 4), -1), ((2, 3, 0), 1), ((), 0)]


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES, ids=str)
def test_softmax_backward_through_autograd(log, shape, dim):
    fn = (lambda x: F.log_softmax(x, dim)) if log else (lambda x: F.softmax(x, dim))
    x, g = torch.randn(shape), torch.randn(shape)
    op = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    check_gradients(fn, [x], g, SUMS, *([op] if x.numel() else []))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("seed", range(6))
def test_softmax_backward_on_strided_operands(log, seed):
    rng = torch.Generator().manual_seed(seed)
    shape = random_shape(rng, min_rank=2)
    dim = int(torch.randint(0, len(shape), (1,), generator=rng))
    y = torch.randn(shape)
    y = y.log_softmax(dim) if log else y.softmax(dim)
    g = torch.randn(shape)
    op = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
    name = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    with native(name):
        result = op(strided(g), strided(y), dim, torch.float32)
    check(result, op(g, y, dim, torch.float32), SUMS)


def test_softmax_backward_out_form():
    y, g = torch.randn(3, 8).softmax(-1), torch.randn(3, 8)
    out = torch.empty(8, 3, device="npu").t()  # a transposed destination
    with native("_softmax_backward_data.out"):
        torch.ops.aten._softmax_backward_data.out(npu(g), npu(y), 1, torch.float32, grad_input=out)
    check(out, torch.ops.aten._softmax_backward_data(g, y, 1, torch.float32), SUMS)


def test_softmax_backward_shape_mismatch_is_an_error():
    with pytest.raises(RuntimeError, match="same shape"):
        torch.ops.aten._softmax_backward_data(torch.randn(3, 4, device="npu"),
                                              torch.randn(3, 5, device="npu"), 1, torch.float32)


# --- Activations -------------------------------------------------------------------------

ACTIVATIONS: dict[str, tuple[Callable, str, dict]] = {
    "silu": (F.silu, "silu_backward", ULPS),
    "gelu": (F.gelu, "gelu_backward", ULPS),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), "gelu_backward", ULPS),
    "sigmoid": (torch.sigmoid, "sigmoid_backward", ULPS),
    "tanh": (torch.tanh, "tanh_backward", ULPS),
    "relu": (torch.relu, "threshold_backward", EXACT),
    # The edges below hold both bounds exactly.
    "clamp": (lambda x: torch.clamp(x, -0.7518, 0.25), "clamp_backward", EXACT),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(5, 7), (1, 9), (3, 1, 4), (0, 4), ()], ids=str)
def test_activation_backward_through_autograd(name, shape):
    fn, op, tolerance = ACTIVATIONS[name]
    x, g = torch.randn(shape) * 3, torch.randn(shape)
    check_gradients(fn, [x], g, tolerance, *([op] if x.numel() else []))


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_backward_at_the_edges(name):
    fn, op, tolerance = ACTIVATIONS[name]
    # Zeros, exactly the threshold, large magnitudes, the zero of silu's and
    # gelu's derivatives.
    x = torch.tensor([0.0, -0.0, 0.25, 0.2500001, -1.2785, -0.7518, 30.0, -30.0, 1e-3, -1e-3])
    check_gradients(fn, [x], torch.randn(x.shape), tolerance, op)


@pytest.mark.parametrize("lo,hi", [(-0.5, 0.5), (None, 0.3), (-0.2, None), (0.5, -0.5), (1, 2)])
def test_clamp_backward_is_native(lo, hi):
    """CLAMP_BWD: dy where lo <= x <= hi (a missing bound is open), 0 for a
    NaN x and everywhere when lo > hi, as autograd's formula; on a strided x
    and gradient."""
    x = torch.randn(6, 9)
    x[0, :5] = torch.tensor([lo or 0.0, hi or 0.0, float("nan"), float("inf"), -float("inf")])
    grad = torch.randn(9, 6)
    check_gradients(lambda t: torch.clamp(t.t(), lo, hi), [x], grad, EXACT, "clamp", "clamp_backward")


def test_clamp_records_its_native_backward_only_under_grad():
    x = npu(torch.randn(5)).requires_grad_()
    with native("clamp"):
        out = torch.clamp(x, -0.1, 0.1)
        with torch.no_grad():
            untracked = torch.clamp(x, -0.1, 0.1)
    assert "ClampFunction" in out.grad_fn.name()
    assert untracked.grad_fn is None and not untracked.requires_grad


def test_threshold_backward_at_the_threshold():
    # x <= threshold passes no gradient, anything above passes it unchanged.
    x = torch.tensor([0.25, 0.2500001, 0.2499999, -0.0, 0.0, 1e30, -1e30, 3.0, float("inf"), float("-inf")])
    g = torch.randn(x.shape)
    for threshold in (0.25, 0.0, -1.5):
        with native("threshold_backward"):
            result = torch.ops.aten.threshold_backward(npu(g), npu(x), threshold)
        check(result, torch.ops.aten.threshold_backward(g, x, threshold), EXACT)


@pytest.mark.parametrize("seed", range(4))
def test_activation_backward_ops_broadcast_and_take_strided_operands(seed):
    rng = torch.Generator().manual_seed(seed)
    shape = random_shape(rng, min_rank=2)
    x = torch.randn(shape)
    g = torch.randn(shape[-1])  # broadcast over the leading dims
    ops = {
        "silu_backward": (torch.ops.aten.silu_backward, ()),
        "gelu_backward": (torch.ops.aten.gelu_backward, ()),
        "gelu_backward_tanh": (torch.ops.aten.gelu_backward, ()),
        "sigmoid_backward": (torch.ops.aten.sigmoid_backward, ()),
        "tanh_backward": (torch.ops.aten.tanh_backward, ()),
        "threshold_backward": (torch.ops.aten.threshold_backward, (0.1,)),
    }
    for name, (op, extra) in ops.items():
        kwargs = {"approximate": "tanh"} if name == "gelu_backward_tanh" else {}
        with native(name.removesuffix("_tanh")):
            result = op(npu(g), strided(x), *extra, **kwargs)
        tolerance = EXACT if name == "threshold_backward" else ULPS
        # The CPU's exact gelu_backward (oneDNN) refuses a broadcast gradient.
        check(result, op(g.expand_as(x).contiguous(), x, *extra, **kwargs), tolerance)


@pytest.mark.parametrize("name", ["silu_backward", "sigmoid_backward", "tanh_backward", "threshold_backward"])
def test_activation_backward_out_forms(name):
    x, g = torch.randn(4, 6), torch.randn(4, 6)
    op = getattr(torch.ops.aten, name)
    extra = (0.0,) if name == "threshold_backward" else ()
    out = torch.empty(6, 4, device="npu").t()
    with native(name + ".grad_input"):
        op.grad_input(npu(g), npu(x), *extra, grad_input=out)
    check(out, op(g, x, *extra), EXACT if name == "threshold_backward" else ULPS)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_out_form(approximate):
    x, g = torch.randn(4, 6) * 3, torch.randn(4, 6)
    out = torch.empty(6, 4, device="npu").t()
    with native("gelu_backward.grad_input"):
        torch.ops.aten.gelu_backward.grad_input(npu(g), npu(x), approximate=approximate, grad_input=out)
    check(out, torch.ops.aten.gelu_backward(g, x, approximate=approximate), ULPS)


# --- Embedding --------------------------------------------------------------------------

@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_backward_accumulates_repeated_indices(index_dtype, padding_idx):
    weight = torch.randn(10, 6)
    indices = torch.tensor([[1, 3, 1, 9], [0, 1, 3, 5]], dtype=index_dtype)
    g = torch.randn(2, 4, 6)
    fn = lambda w: F.embedding(indices.to(w.device), w, padding_idx=padding_idx)  # noqa: E731
    # One rounding per addition in index order, as the CPU kernel adds.
    check_gradients(fn, [weight], g, EXACT, "embedding_dense_backward")


def test_embedding_backward_strided_gradient_empty_indices_and_out_form():
    g = torch.randn(5, 6)
    indices = torch.tensor([4, 0, 4, 2, 1])
    expected = torch.ops.aten.embedding_dense_backward(g, indices, 7, -1, False)
    gn = strided(g)
    with native("embedding_dense_backward"):
        result = torch.ops.aten.embedding_dense_backward(gn, npu(indices), 7, -1, False)
    check(result, expected, EXACT)
    out = torch.empty(6, 7, device="npu").t()
    with native("embedding_dense_backward.out"):
        torch.ops.aten.embedding_dense_backward.out(gn, npu(indices), 7, -1, False, out=out)
    check(out, expected, EXACT)
    empty = torch.ops.aten.embedding_dense_backward(torch.randn(0, 3, device="npu"),
                                                    torch.zeros(0, dtype=torch.long, device="npu"), 4, -1, False)
    check(empty, torch.zeros(4, 3), EXACT)


def test_embedding_backward_scale_grad_by_freq_falls_back():
    weight = torch.randn(5, 3)
    indices = torch.tensor([1, 1, 2])
    fn = lambda w: F.embedding(indices.to(w.device), w, scale_grad_by_freq=True)  # noqa: E731
    g = torch.randn(3, 3)
    torch.npu.reset_stats()
    result = gradients(fn, [weight], g, "npu")
    check(result[0], gradients(fn, [weight], g, "cpu")[0], EXACT)
    assert "aten::embedding_dense_backward" in torch.npu.fallback_stats()
    assert op_packets("embedding_dense_backward") == 0


def test_embedding_backward_bad_padding_idx_is_an_error():
    with pytest.raises(RuntimeError, match="padding_idx 9 is outside"):
        torch.ops.aten.embedding_dense_backward(torch.randn(2, 3, device="npu"),
                                                torch.tensor([0, 1], device="npu"), 4, 9, False)


# --- nll_loss and cross_entropy ---------------------------------------------------------

def nll_inputs(rows: int, classes: int, ignore: list[int] = ()):
    logits = torch.randn(rows, classes)
    target = torch.randint(0, classes, (rows,))
    target[list(ignore)] = -100
    return logits, target


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_cross_entropy_forward_and_backward(reduction, weighted):
    logits, target = nll_inputs(7, 11, ignore=[2, 5])
    weight = torch.rand(11) + 0.1 if weighted else None
    g = torch.randn(7) if reduction == "none" else torch.randn(())

    def loss(x):
        return F.cross_entropy(x, target.to(x.device), weight=None if weight is None else weight.to(x.device),
                               reduction=reduction)

    with torch.no_grad():
        expected_loss = loss(logits)
    with native("nll_loss_forward", "_log_softmax"):
        result_loss = loss(npu(logits))
    check(result_loss, expected_loss, SUMS)
    check_gradients(loss, [logits], g, SUMS, "nll_loss_backward", "_log_softmax_backward_data")


@pytest.mark.parametrize("seed", range(4))
def test_cross_entropy_random_shapes_on_strided_logits(seed):
    rng = torch.Generator().manual_seed(seed)
    rows, classes = (int(torch.randint(1, 9, (1,), generator=rng)) for _ in range(2))
    logits = torch.randn(rows, classes, generator=rng)
    target = torch.randint(0, classes, (rows,), generator=rng)
    target[torch.rand(rows, generator=rng) < 0.3] = -100
    expected = F.cross_entropy(logits, target)
    with native("nll_loss_forward"):
        result = F.cross_entropy(strided(logits), npu(target))
    check(result, expected, SUMS)
    fn = lambda x: F.cross_entropy(x, target.to(x.device), reduction="sum")  # noqa: E731
    check_gradients(fn, [logits], torch.randn(()), SUMS, "nll_loss_backward")


def test_nll_loss_without_a_batch_dim():
    x = torch.randn(6).log_softmax(0)
    for reduction in ("mean", "sum", "none"):
        expected = F.nll_loss(x, torch.tensor(4), reduction=reduction)
        with native("nll_loss_forward"):
            result = F.nll_loss(npu(x), npu(torch.tensor(4)), reduction=reduction)
        check(result, expected, SUMS)


def test_nll_loss_byte_targets_run_on_the_cpu():
    # The ISA has no uint8 type to compare and index with: counted, right.
    x = torch.randn(5, 6).log_softmax(1)
    target = torch.tensor([0, 5, 2, 2, 1], dtype=torch.uint8)
    torch.npu.reset_stats()
    result = torch.ops.aten.nll_loss_forward(npu(x), npu(target), None, 2, -100)[0]
    assert torch.npu.fallback_stats() == {"aten::nll_loss_forward": 1}
    check(result, torch.ops.aten.nll_loss_forward(x, target, None, 2, -100)[0], EXACT)


def test_nll_loss_with_every_target_ignored():
    x, target = nll_inputs(4, 5, ignore=[0, 1, 2, 3])
    for reduction, red in (("mean", 1), ("sum", 2), ("none", 0)):
        expected = torch.ops.aten.nll_loss_forward(x, target, None, red, -100)
        with native("nll_loss_forward"):
            result = torch.ops.aten.nll_loss_forward(npu(x), npu(target), None, red, -100)
        check(result[0], expected[0], EXACT)  # NaN for the mean, as on the CPU
        check(result[1], expected[1], EXACT)
    g = torch.ops.aten.nll_loss_backward(npu(torch.tensor(1.0)), npu(x), npu(target), None, 1, -100,
                                         npu(torch.tensor(0.0)))
    check(g, torch.zeros(4, 5), EXACT)


def test_nll_loss_backward_is_exact_and_has_an_out_form():
    x, target = nll_inputs(6, 9, ignore=[1])
    weight = torch.rand(9)
    total = torch.tensor(2.5)
    for red, g in ((0, torch.randn(6)), (1, torch.randn(())), (2, torch.randn(()))):
        expected = torch.ops.aten.nll_loss_backward(g, x, target, weight, red, -100, total)
        out = torch.empty(9, 6, device="npu").t()
        with native("nll_loss_backward.grad_input"):
            torch.ops.aten.nll_loss_backward.grad_input(npu(g), npu(x), npu(target), npu(weight), red, -100,
                                                        npu(total), grad_input=out)
        # Placed by a scatter of -w[t] * g (divided by the total weight for
        # the mean) in the CPU kernel's order: bit for bit.
        check(out, expected, EXACT)


def test_nll_loss_keeps_the_targets_on_the_device(capfd):
    x = npu(torch.randn(5, 7)).requires_grad_()
    target = npu(torch.tensor([1, -100, 6, 0, 2]))
    torch.npu.set_debug_level(2)
    try:
        capfd.readouterr()
        loss = F.cross_entropy(x, target)
        loss.backward()
        torch.npu.synchronize()
        log = capfd.readouterr().err
    finally:
        torch.npu.set_debug_level(0)
    # No wait for the device and no copy to the host: a compiled training
    # step has no break at the loss.
    assert "D->H" not in log, log
    expected = torch.randn(5, 7, requires_grad=True)
    with torch.no_grad():
        expected.copy_(x.detach().cpu())
    F.cross_entropy(expected, target.cpu()).backward()
    check(x.grad, expected.grad, SUMS)


def test_nll_loss_target_out_of_bounds_is_a_device_fault():
    # As CUDA's device-side assert: the GATHER that reads the target faults,
    # reported at the next synchronisation with the target and its position.
    x = npu(torch.randn(3, 4))
    for bad, position in ((4, 1), (-3, 1), (7, 2)):
        target = torch.tensor([0, 1, 2])
        target[position] = bad
        loss = F.nll_loss(x, npu(target))
        with pytest.raises(RuntimeError, match=rf"index {bad} at position {position} is outside \[0, 4\)"):
            loss.item()
    with pytest.raises(RuntimeError, match="size mismatch"):
        torch.ops.aten.nll_loss_forward(x, npu(torch.tensor([0, 1])), None, 1, -100)
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        torch.ops.aten.nll_loss_forward(x, npu(torch.tensor([0, 1, 2])), npu(torch.ones(3)), 1, -100)
    with pytest.raises(RuntimeError, match="not a valid value for reduction"):
        torch.ops.aten.nll_loss_forward(x, npu(torch.tensor([0, 1, 2])), None, 5, -100)
    # The device stays usable.
    x = npu(torch.randn(3, 4))
    check(F.nll_loss(x, npu(torch.tensor([0, 1, 2]))), F.nll_loss(x.cpu(), torch.tensor([0, 1, 2])), SUMS)


def test_nll_loss_of_an_empty_batch():
    x = torch.randn(0, 4)
    target = torch.zeros(0, dtype=torch.long)
    for reduction in ("mean", "sum", "none"):
        with native():
            result = F.nll_loss(npu(x), npu(target), reduction=reduction)
        check(result, F.nll_loss(x, target, reduction=reduction), EXACT)


# --- Matmul and reduction gradients ------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_linear_backward_is_native(bias):
    layer = torch.nn.Linear(6, 5, bias=bias)
    x, g = torch.randn(2, 4, 6), torch.randn(2, 4, 5)
    params = [x, layer.weight] + ([layer.bias] if bias else [])

    def fn(x, w, b=None):
        return F.linear(x, w, b)

    check_gradients(fn, params, g, SUMS, "mm")


@pytest.mark.parametrize("transposed", [False, True])
def test_bmm_and_matmul_backward_are_native(transposed):
    a, b = torch.randn(3, 4, 5), torch.randn(3, 5, 2)
    if transposed:
        a = a.transpose(1, 2).contiguous().transpose(1, 2)
    check_gradients(torch.bmm, [a, b], torch.randn(3, 4, 2), SUMS, "bmm")
    check_gradients(torch.matmul, [torch.randn(2, 3, 4, 5), torch.randn(5, 6)], torch.randn(2, 3, 4, 6), SUMS, "mm")


@pytest.mark.parametrize("seed", range(5))
def test_sum_and_mean_backward_are_native(seed):
    rng = torch.Generator().manual_seed(seed)
    shape = random_shape(rng)
    dims = sorted({int(torch.randint(0, len(shape), (1,), generator=rng)) for _ in range(2)})
    x = torch.randn(shape)
    reduced = x.sum(dims, keepdim=bool(seed % 2))
    check_gradients(lambda t: t.sum(dims, keepdim=bool(seed % 2)), [x], torch.randn(reduced.shape), EXACT)
    check_gradients(lambda t: t.mean(dims), [x], torch.randn(x.mean(dims).shape), ULPS, "div")
    check_gradients(lambda t: t.sum() * 2, [x], torch.randn(()), EXACT)
