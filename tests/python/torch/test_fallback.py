"""The CPU fallback: correctness, one warning per op, counters, NPU_STRICT
and the NPU_DEBUG log."""

from __future__ import annotations

import warnings

import pytest
import torch

from npu_testing import run_python


def test_fallback_runs_on_the_cpu_and_counts():
    x = torch.randn(4, 5)
    torch.npu.reset_stats()
    # atan, like every structured op, reaches the backend as its out= form.
    with pytest.warns(UserWarning, match=r"aten::atan.out has no NPU kernel.* runs on the CPU"):
        result = torch.atan(x.to("npu"))
    assert result.device.type == "npu"
    torch.testing.assert_close(result.cpu(), torch.atan(x), rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per op only
        torch.atan(x.to("npu"))
    assert torch.npu.fallback_stats() == {"aten::atan.out": 2}


def test_fallback_of_in_place_and_out_ops_writes_back():
    x = torch.randn(6)
    y = x.to("npu")
    y.floor_()  # in place
    torch.testing.assert_close(y.cpu(), x.floor(), rtol=0, atol=0)
    out = torch.empty(0, device="npu")
    torch.cumprod(x.to("npu"), 0, out=out)
    torch.testing.assert_close(out.cpu(), torch.cumprod(x, 0), rtol=0, atol=0)
    assert {"aten::floor.out", "aten::cumprod.out"} <= torch.npu.fallback_stats().keys()


def test_unsupported_dtypes_of_native_ops_fall_back():
    host = torch.arange(6, dtype=torch.int16)  # no ISA type
    a = host.to("npu")
    torch.npu.reset_stats()
    assert torch.equal((a + a).cpu(), host * 2)
    assert torch.equal(torch.mm(a.view(2, 3), a.view(3, 2)).cpu(), host.view(2, 3) @ host.view(3, 2))
    assert {"aten::add.Tensor", "aten::mm"} <= torch.npu.fallback_stats().keys()


def test_fallback_results_stay_on_the_npu_when_a_cpu_scalar_comes_first():
    # `1 - t` is sub(wrapped 1, t): PyTorch's cpu_fallback would put the
    # result on the device of its first argument, the host.
    t = torch.arange(4).to("npu")
    result = 1 - t
    assert result.device.type == "npu"
    assert torch.equal(result.cpu(), 1 - torch.arange(4))
    assert torch.equal((torch.tensor(5).to("npu") * (1 - t)).cpu(), 5 * (1 - torch.arange(4)))


def test_strict_mode_refuses_fallbacks_by_name():
    x = torch.randn(3).to("npu")
    torch.npu.set_strict(True)
    try:
        with pytest.raises(RuntimeError, match=r"NPU_STRICT=1: aten::atan.out has no NPU kernel"):
            torch.atan(x)
        with pytest.raises(RuntimeError, match=r"NPU_STRICT: 'dtype conversion Short->Float'"):
            torch.arange(3, dtype=torch.int16).to("npu").float()
        assert torch.equal((x * 2).cpu(), x.cpu() * 2)  # native ops still run
    finally:
        torch.npu.set_strict(False)


def test_strict_environment_variable():
    result = run_python("import torch, npu_bridge; torch.atan(torch.ones(2).to('npu'))",
                        NPU_STRICT="1")
    assert result.returncode != 0
    assert "NPU_STRICT=1: aten::atan" in result.stderr


def test_debug_log_levels():
    code = """
import torch, npu_bridge
x = torch.randn(8, 8).to('npu')
y = (x @ x.t()).relu()
z = torch.atan(y)
w = z.view(64)
print(w.sum().item())
"""
    quiet = run_python(code, NPU_DEBUG="0")
    assert quiet.returncode == 0 and "[NPU]" not in quiet.stderr
    ops = run_python(code, NPU_DEBUG="1")
    assert "[NPU] mm [8x8] @ [8x8]* (1 packet)" in ops.stderr
    assert "[NPU] relu [8x8]" in ops.stderr
    assert "[CPU] aten::atan.out [8x8], [8x8]" in ops.stderr
    assert "[COPY]" not in ops.stderr
    copies = run_python(code, NPU_DEBUG="2")
    assert "[COPY] H->D 256 bytes" in copies.stderr and "[COPY] D->H" in copies.stderr
    assert "[VIEW]" not in copies.stderr
    views = run_python(code, NPU_DEBUG="3")
    assert "[VIEW] view -> [64]" in views.stderr


# Calls of ops without an NPU kernel on views that share memory: the fallback
# hands the CPU kernel views of one host copy of each storage, so it raises
# where it raises for CPU tensors and computes what it computes for them.
ALIASED_FALLBACKS = {
    "partly overlapping in-place input": lambda t: t[1:].atan2_(t[:-1]),
    "partly overlapping out=": lambda t: torch.hypot(t[:-1], t[:-1], out=t[1:]),
    "expanded in-place": lambda t: t[:1].expand(4, 4).atan_(),
    "expanded out=": lambda t: torch.atan2(t[:4], t[1:], out=t[4:].expand(4, 4)),
    "transposed in-place input": lambda t: t[:4].atan2_(t[:4].t()),
    "the same tensor twice": lambda t: t.atan2_(t),
    "disjoint views": lambda t: t[:2].atan2_(t[3:]),
    "a view read by a non-pointwise op": lambda t: torch.cumsum(t[:-1], 0, out=t[1:]),
}


@pytest.mark.parametrize("call", ALIASED_FALLBACKS.values(), ids=ALIASED_FALLBACKS.keys())
def test_fallbacks_see_the_aliasing_of_their_tensors(call):
    cpu = torch.randn(5, 4)
    npu = cpu.to("npu")
    errors = []
    for t in (cpu, npu):
        try:
            call(t)
            errors.append(None)
        except RuntimeError as e:
            errors.append(str(e).splitlines()[0])
    assert errors[1] == errors[0]
    torch.testing.assert_close(npu.cpu(), cpu, rtol=1e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("make", [
    lambda: torch.nn.Conv1d(3, 4, 3, padding=1, bias=True),
    lambda: torch.nn.Conv2d(2, 6, 3, stride=2, padding=1, groups=2),
    lambda: torch.nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1, bias=False),
])
def test_convolutions_fall_back_forward_and_backward(make):
    # ATen sends a device without a convolution kernel to
    # convolution_overrideable, whose default kernel refuses every device:
    # the bridge runs ATen's CPU convolution there, counted as a fallback.
    torch.manual_seed(3)
    conv = make()
    shape = {1: (2, 3, 10), 2: (2, conv.in_channels, 9, 9)}[conv.weight.dim() - 2]
    x = torch.randn(*shape, requires_grad=True)
    expected = conv(x)
    expected.square().sum().backward()
    on_npu = make().npu()
    on_npu.load_state_dict(conv.state_dict())
    x_npu = x.detach().npu().requires_grad_()
    torch.npu.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = on_npu(x_npu)
        out.square().sum().backward()
    assert out.is_npu and x_npu.grad.is_npu
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x_npu.grad.cpu(), x.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(on_npu.weight.grad.cpu(), conv.weight.grad, rtol=1e-5, atol=1e-5)
    if conv.bias is not None:
        torch.testing.assert_close(on_npu.bias.grad.cpu(), conv.bias.grad, rtol=1e-5, atol=1e-5)
    stats = torch.npu.fallback_stats()
    assert stats["aten::convolution_overrideable"] == 1
    assert stats["aten::convolution_backward_overrideable"] == 1


def test_strict_mode_refuses_a_convolution():
    x, w = torch.randn(1, 2, 5, 5).npu(), torch.randn(3, 2, 3, 3).npu()
    torch.npu.set_strict(True)
    try:
        with pytest.raises(RuntimeError, match="NPU_STRICT=1: aten::convolution_overrideable"):
            torch.nn.functional.conv2d(x, w)
    finally:
        torch.npu.set_strict(False)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.nn.functional.conv2d(x, torch.randn(3, 2, 3, 3))
