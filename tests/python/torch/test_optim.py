"""torch.optim on npu parameters against the same optimizer on the CPU:
AdamW and Adam with fused=True (ADAMW packets) and with the default foreach
implementation (elementwise packets, lerp / addcmul / addcdiv included),
several parameter shapes, weight decay, maximize, a tensor learning rate;
amsgrad falls back with its reason. Also lerp, addcmul and addcdiv alone."""

from __future__ import annotations

import copy

import pytest
import torch

from npu_testing import ULPS, native, op_packets

SHAPES = [(7,), (3, 5), (2, 3, 4), (), (1, 1), (0, 3)]


def optim_tolerance(lr: float, steps: int) -> dict[str, float]:
    """Each step's update agrees to ~1e-5 of its size (ADAMW derives 1 - beta
    in float32 from the float32 betas, where the CPU kernel rounds 1 - beta
    from double: 1.3e-5 apart for beta2 = 0.999; it also rounds without the
    CPU kernel's fused multiply-adds; docs/pytorch.md), so parameters differ
    by at most about 2e-5 * lr per step."""
    return {"rtol": 1e-6, "atol": 2e-5 * lr * steps}


def parameters(seed: int = 0) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(shape, generator=generator)) for shape in SHAPES]


def run(optimizer_class, params, steps: int, device: str, **options) -> list[torch.Tensor]:
    """`steps` optimizer steps on copies of params moved to device, with
    gradients that vary per step; returns the final parameters."""
    moved = [torch.nn.Parameter(p.detach().clone().to(device)) for p in params]
    optimizer = optimizer_class(moved, **options)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        for p in moved:
            p.grad = torch.randn(p.shape, generator=generator).to(device)
        optimizer.step()
    return [p.detach() for p in moved]


def compare(optimizer_class, steps: int, op: str, lr: float, **options) -> None:
    params = parameters()
    expected = run(optimizer_class, params, steps, "cpu", lr=lr, **options)
    with native(op):
        result = run(optimizer_class, params, steps, "npu", lr=lr, **options)
    for r, e, p in zip(result, expected, params, strict=True):
        assert r.device.type == "npu"
        torch.testing.assert_close(r.cpu(), e, **optim_tolerance(float(lr), steps))
        if p.numel():
            assert not torch.equal(e, p.detach()), "the parameters did not move"


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("maximize", [False, True])
def test_fused_adamw_matches_cpu(weight_decay, maximize):
    compare(torch.optim.AdamW, 5, "_fused_adamw_", lr=1e-2, betas=(0.9, 0.99), eps=1e-8,
            weight_decay=weight_decay, maximize=maximize, fused=True)


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_fused_adam_with_l2_decay_matches_cpu(weight_decay):
    compare(torch.optim.Adam, 4, "_fused_adam_", lr=3e-3, weight_decay=weight_decay, fused=True)


def test_fused_adamw_with_a_tensor_learning_rate():
    compare(torch.optim.AdamW, 3, "_fused_adamw_.tensor_lr", lr=torch.tensor(2e-2), fused=True)


def test_fused_adamw_packets_one_adamw_per_nonempty_parameter():
    params = [torch.nn.Parameter(torch.randn(s, device="npu")) for s in [(4, 4), (3,), (0,)]]
    optimizer = torch.optim.AdamW(params, lr=1e-3, fused=True)
    for p in params:
        p.grad = torch.ones_like(p)
    optimizer.step()  # the first step creates the state
    torch.npu.reset_stats()
    optimizer.step()
    torch.npu.synchronize()
    # The steps collected for one read (a COPY each), one upload of the
    # hyper-parameter blocks, then one ADAMW per non-empty parameter.
    assert op_packets("_fused_adamw_") == 3 + 2
    assert torch.npu.fallback_stats() == {}


@pytest.mark.parametrize("optimizer_class", [torch.optim.AdamW, torch.optim.Adam])
def test_foreach_optimizers_run_natively(optimizer_class):
    compare(optimizer_class, 4, "lerp_", lr=1e-2, weight_decay=0.02, foreach=True)
    assert op_packets("addcmul_") > 0 and op_packets("addcdiv_") > 0


def test_amsgrad_falls_back_with_its_reason():
    params = parameters()
    expected = run(torch.optim.AdamW, params, 2, "cpu", lr=1e-2, amsgrad=True, fused=True)
    torch.npu.reset_stats()
    with pytest.warns(UserWarning, match="amsgrad=True"):
        result = run(torch.optim.AdamW, params, 2, "npu", lr=1e-2, amsgrad=True, fused=True)
    for r, e in zip(result, expected, strict=True):
        torch.testing.assert_close(r.cpu(), e, **optim_tolerance(1e-2, 2))
    assert torch.npu.fallback_stats() == {"aten::_fused_adamw_": 2}
    torch.npu.set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="NPU_STRICT=1: aten::_fused_adamw_ would run on the CPU: amsgrad"):
            run(torch.optim.AdamW, params, 1, "npu", lr=1e-2, amsgrad=True, fused=True)
    finally:
        torch.npu.set_strict(False)


def test_fused_adamw_bad_lists_are_an_error():
    p = torch.zeros(3, device="npu")
    step = torch.zeros((), device="npu")
    with pytest.raises(RuntimeError, match="same length"):
        torch._fused_adamw_([p], [p.clone()], [p.clone()], [p.clone()], [], [step, step], lr=1e-3, beta1=0.9,
                            beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError, match="has shape"):
        torch._fused_adamw_([p], [torch.zeros(4, device="npu")], [p.clone()], [p.clone()], [], [step], lr=1e-3,
                            beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


def test_fused_adamw_takes_a_gradient_that_aliases_its_parameter():
    # p.grad = p: ADAMW gets a private copy of the gradient.
    values = torch.randn(6)
    expected = torch.nn.Parameter(values.clone())
    expected.grad = expected.detach()
    torch.optim.AdamW([expected], lr=1e-2, fused=True).step()
    param = torch.nn.Parameter(values.clone().to("npu"))
    param.grad = param.detach()
    with native("_fused_adamw_"):
        torch.optim.AdamW([param], lr=1e-2, fused=True).step()
    torch.testing.assert_close(param.detach().cpu(), expected.detach(), **optim_tolerance(1e-2, 1))


def test_optimizer_state_dict_round_trips_through_the_npu():
    params = parameters()
    model_cpu = run(torch.optim.AdamW, params, 2, "cpu", lr=1e-2, fused=True)
    moved = [torch.nn.Parameter(p.detach().clone().to("npu")) for p in params]
    optimizer = torch.optim.AdamW(moved, lr=1e-2, fused=True)
    generator = torch.Generator().manual_seed(1)
    for p in moved:
        p.grad = torch.randn(p.shape, generator=generator).to("npu")
    optimizer.step()
    # Saved, reloaded into a fresh optimizer, one more step: as two steps.
    state = copy.deepcopy(optimizer.state_dict())
    optimizer = torch.optim.AdamW(moved, lr=1e-2, fused=True)
    optimizer.load_state_dict(state)
    for p in moved:
        p.grad = torch.randn(p.shape, generator=generator).to("npu")
    optimizer.step()
    for r, e in zip(moved, model_cpu, strict=True):
        torch.testing.assert_close(r.detach().cpu(), e, **optim_tolerance(1e-2, 2))


# --- lerp, addcmul, addcdiv ------------------------------------------------------------

def npu(t: torch.Tensor) -> torch.Tensor:
    return t.to("npu")


@pytest.mark.parametrize("weight", [0.1, 0.5, 0.9, -0.3])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((1, 4), (3, 1)), ((0, 2), (2,))], ids=str)
def test_lerp(weight, shapes):
    a, b = torch.randn(shapes[0]), torch.randn(shapes[1])
    with native("lerp") if a.numel() else native():
        result = torch.lerp(npu(a), npu(b), weight)
    torch.testing.assert_close(result.cpu(), torch.lerp(a, b, weight), **ULPS)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1.0, -0.5])
def test_addcmul_addcdiv_forms(name, value):
    fn = getattr(torch, name)
    s, t1, t2 = torch.randn(4, 5), torch.randn(5), torch.rand(4, 1) + 0.5
    with native(name):
        result = fn(npu(s), npu(t1), npu(t2), value=value)
    torch.testing.assert_close(result.cpu(), fn(s, t1, t2, value=value), **ULPS)
    inplace = npu(s)
    with native(name + "_"):
        getattr(inplace, name + "_")(npu(t1), npu(t2), value=value)
    torch.testing.assert_close(inplace.cpu(), fn(s, t1, t2, value=value), **ULPS)
    out = torch.empty(5, 4, device="npu").t()
    with native(name + ".out"):
        fn(npu(s), npu(t1), npu(t2), value=value, out=out)
    torch.testing.assert_close(out.cpu(), fn(s, t1, t2, value=value), **ULPS)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(npu(t1), name + "_")(npu(s), npu(t2))


def test_lerp_inplace_and_out_forms():
    a, b = torch.randn(3, 6), torch.randn(3, 6)
    x = npu(a)
    with native("lerp_"):
        x.lerp_(npu(b), 0.25)
    torch.testing.assert_close(x.cpu(), torch.lerp(a, b, 0.25), **ULPS)
    out = torch.empty(6, 3, device="npu").t()
    with native("lerp.Scalar_out"):
        torch.lerp(npu(a), npu(b), 0.75, out=out)
    torch.testing.assert_close(out.cpu(), torch.lerp(a, b, 0.75), **ULPS)
