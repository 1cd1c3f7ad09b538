"""torch.device("npu"): registration, the torch.npu module, generated
methods, generators and the runtime backend."""

from __future__ import annotations

import gc
import os
import re
import sys

import pytest
import torch

from npu_testing import run_python


def test_the_device_is_registered_as_npu():
    assert torch._C._get_privateuse1_backend_name() == "npu"
    assert torch.npu.is_available()
    assert torch.npu.device_count() == 1
    assert torch.npu.current_device() == 0
    x = torch.ones(2, 3, device="npu")
    assert x.device == torch.device("npu", 0)
    assert x.is_npu and not torch.ones(1).is_npu
    assert torch.zeros(4, device=torch.device("npu:0")).device.type == "npu"


def test_only_npu_0_exists():
    torch.npu.set_device(0)
    torch.npu.set_device("npu:0")
    with pytest.raises(ValueError, match="one NPU"):
        torch.npu.set_device(1)
    with pytest.raises(RuntimeError, match="npu:1 does not exist"):
        torch.empty(2, device="npu:1")


def test_generated_tensor_and_module_methods():
    x = torch.arange(6.0).view(2, 3)
    y = x.npu()
    assert y.is_npu and torch.equal(y.cpu(), x)
    module = torch.nn.Linear(3, 2).npu()
    assert all(p.is_npu for p in module.parameters())
    storage = y.untyped_storage()
    assert storage.device.type == "npu" and storage.nbytes() == 24


def test_synchronize_and_device_stats():
    x = torch.randn(64, 64, device="npu")
    (x @ x).sum()
    torch.npu.synchronize()
    stats = torch.npu.device_stats()
    assert stats["cycles"] > 0 and stats["packets"] > 0


def test_manual_seed_makes_random_fills_reproducible():
    torch.npu.manual_seed(7)
    first = torch.randn(5, device="npu")
    uniform = torch.rand(3, device="npu")
    torch.npu.manual_seed(7)
    assert torch.equal(first.cpu(), torch.randn(5, device="npu").cpu())
    assert torch.equal(uniform.cpu(), torch.rand(3, device="npu").cpu())
    assert ((uniform >= 0) & (uniform < 1)).all().item()
    state = torch.npu.get_rng_state()
    a = torch.randn(4, device="npu").cpu()
    torch.npu.set_rng_state(state)
    assert torch.equal(a, torch.randn(4, device="npu").cpu())
    generator = torch.Generator(device="npu").manual_seed(3)
    b = torch.randn(4, device="npu", generator=generator)
    generator.manual_seed(3)
    assert torch.equal(b.cpu(), torch.randn(4, device="npu", generator=generator).cpu())
    assert torch.npu.initial_seed() == 7


def test_torch_manual_seed_seeds_the_npu_too():
    torch.manual_seed(11)
    a = torch.randn(3, device="npu").cpu()
    torch.manual_seed(11)
    assert torch.equal(a, torch.randn(3, device="npu").cpu())


def test_backend_switching():
    current = torch.npu.get_backend()
    assert current == (os.environ.get("NPU_BACKEND") or "iss")
    other = "rtl" if current == "iss" else "iss"
    live = torch.ones(3, device="npu")
    with pytest.raises(RuntimeError, match=rf"cannot switch the NPU backend to '{other}'.*still live"):
        torch.npu.set_backend(other)
    torch.npu.set_backend(current)  # the current backend: nothing to do while tensors live
    assert torch.equal(live.cpu(), torch.ones(3))
    del live
    gc.collect()
    if torch.npu.memory_allocated() == 0:
        with pytest.raises(RuntimeError, match=r"unknown backend 'quantum' \(available: .*iss"):
            torch.npu.set_backend("quantum")
        torch.npu.set_backend(current)  # a fresh device
        assert torch.npu.get_backend() == current
        assert torch.npu.memory_stats()["device.live_allocations"] == 0
    assert torch.equal(torch.full((2,), 3.0, device="npu").cpu(), torch.full((2,), 3.0))


def test_a_device_fault_is_reported_and_the_device_recovers():
    table = torch.randn(11, 6).to("npu")
    lookup = torch.nn.functional.embedding(torch.tensor([1, 99]).to("npu"), table)  # queued
    with pytest.raises(RuntimeError, match=r"device fault .*index 99 .*outside \[0, 11\).*was reset"):
        lookup.cpu()
    assert torch.equal((table * 2).cpu(), table.cpu() * 2)


def test_an_unknown_npu_backend_fails_at_first_use_with_the_available_ones():
    result = run_python(
        "import torch, npu_bridge\n"
        "try:\n"
        "    torch.ones(2, device='npu')\n"
        "except RuntimeError as e:\n"
        "    print('RuntimeError:', e)\n"
        "try:\n"
        "    torch.npu.get_backend()\n"
        "except RuntimeError as e:\n"
        "    print('RuntimeError:', e)\n",
        NPU_BACKEND="quantum")
    assert result.returncode == 0, result.stderr  # not an abort
    lines = [line for line in result.stdout.splitlines() if line.startswith("RuntimeError:")]
    assert len(lines) == 2, result.stdout + result.stderr
    for line in lines:
        assert re.search(r"cannot start the NPU runtime: unknown backend 'quantum' \(available: [a-z, ]*iss",
                         line), line
    # Nothing more at exit (the runtime that could not start is not retried).
    assert "terminate" not in result.stderr and "Exception" not in result.stderr, result.stderr


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3, 4),
    lambda: torch.randn(40, 50) * 1e6,  # summarised, scientific notation
    lambda: torch.arange(12).view(3, 4),  # int64
    lambda: torch.rand(5) > 0.5,
    lambda: torch.randn(6, 8)[::2, 1:7:2],  # a strided view
    lambda: torch.tensor(float("nan")),
    lambda: torch.empty(0, 3),
], ids=["float", "summarised", "int64", "bool", "view", "scalar", "empty"])
def test_printing_formats_one_host_copy_natively(make):
    host = make()
    x = host.to("npu")
    torch.npu.set_strict(True)  # any op on the npu other than the copy would raise
    try:
        torch.npu.reset_stats()
        text = repr(x)
    finally:
        torch.npu.set_strict(False)
    assert torch.npu.fallback_stats() == {}
    assert "device='npu:0'" in text
    assert re.sub(r",\s*device='npu:0'", "", text) == repr(host)


def test_printing_keeps_grad_fn_and_parameter_forms():
    w = torch.nn.Parameter(torch.ones(2, 2)).to("npu")
    y = w * 2
    assert repr(y) == "tensor([[2., 2.],\n        [2., 2.]], device='npu:0', grad_fn=<MulBackward0>)"
    parameter = torch.nn.Linear(2, 1).npu().bias
    assert repr(parameter).startswith("Parameter containing:\ntensor([") and "requires_grad=True" in repr(parameter)
    assert str(torch.ones(2, device="npu")) == "tensor([1., 1.], device='npu:0')"


def test_import_torch_loads_the_bridge_without_importing_it():
    result = run_python(
        "import sys, torch; assert 'npu_bridge' in sys.modules;"
        "x = torch.arange(4.0, device='npu'); print(torch.npu.is_available(), (x * 2).cpu().tolist())")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True [0.0, 2.0, 4.0, 6.0]"
    disabled = run_python("import sys, torch; print('npu_bridge' in sys.modules, hasattr(torch, 'npu'))",
                          TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert disabled.returncode == 0, disabled.stderr
    assert disabled.stdout.strip() == "False False"


def test_a_bridge_that_cannot_load_warns_at_import_torch_and_raises_at_import_npu_bridge(tmp_path):
    # A stand-in package of the same name whose native part is missing, as
    # when the toolchain build the bridge links was deleted; `import torch`
    # runs the installed entry point, which must survive it.
    fake = tmp_path / "npu_bridge"
    fake.mkdir()
    (fake / "__init__.py").write_text("from . import _C\n")
    result = run_python(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always'); import torch\n"
        "print(*[w.message for w in caught])\n"
        "import npu_bridge",
        TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    assert "npu_bridge is installed but cannot be loaded" in result.stdout, result.stderr
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in result.stdout
    assert result.returncode != 0 and "ImportError" in result.stderr
