"""torch.npu as torch.cuda: the device context manager, device indices as
torch.serialization asks for them, saving and loading npu tensors, and
automatic mixed precision (modelled on PyTorch's OpenReg tests)."""

from __future__ import annotations

import io

import pytest
import torch


def test_device_context_manager_selects_the_one_npu():
    with torch.npu.device(0):
        assert torch.npu.current_device() == 0
        x = torch.ones(2, device="npu")
    with torch.npu.device("npu:0"), torch.npu.device(torch.device("npu")):
        assert x.device == torch.device("npu", 0)
    # None and negative indices are no-ops, as on CUDA.
    with torch.npu.device(None), torch.npu.device(-1):
        pass


@pytest.mark.parametrize("bad, error, match", [
    (1, ValueError, "npu:1 does not exist"),
    ("npu:3", ValueError, "npu:3 does not exist"),
    ("cpu", ValueError, "expected an npu device, got cpu"),
    (1.5, TypeError, "expected an npu device"),
])
def test_device_context_manager_refuses_other_devices(bad, error, match):
    with pytest.raises(error, match=match):
        torch.npu.device(bad)


def test_device_index_as_serialization_asks_for_it():
    assert torch.npu._utils._get_device_index("npu", True) == 0
    assert torch.npu._utils._get_device_index(torch.device("npu:0")) == 0
    assert torch.npu._utils._get_device_index(None, optional=True) == 0
    with pytest.raises(ValueError, match="npu:2 does not exist"):
        torch.npu._utils._get_device_index("npu:2")


def _round_trip(obj, **load):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load)


def test_an_npu_tensor_saves_and_loads_onto_the_npu():
    x = torch.randn(3, 5)
    loaded = _round_trip(x.npu())
    assert loaded.is_npu and torch.equal(loaded.cpu(), x)
    on_host = _round_trip(x.npu(), map_location="cpu")
    assert on_host.device.type == "cpu" and torch.equal(on_host, x)


def test_map_location_moves_a_host_checkpoint_onto_the_npu():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    state = _round_trip(model.state_dict(), map_location="npu")
    assert all(t.is_npu for t in state.values())
    on_npu = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)).npu()
    on_npu.load_state_dict(state)
    x = torch.randn(6, 4)
    torch.testing.assert_close(on_npu(x.npu()).cpu(), model(x), rtol=1e-6, atol=1e-6)
    for location in (torch.device("npu:0"), {"cpu": "npu:0"}):
        assert _round_trip(torch.ones(2), map_location=location).is_npu


def test_views_sharing_storage_load_sharing_storage():
    base = torch.arange(12.0).npu()
    first, second = _round_trip([base[:6], base.view(3, 4)])
    assert first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()
    first.fill_(-1.0)
    assert torch.equal(second.cpu()[:1], torch.full((1, 4), -1.0))
    assert torch.equal(second.cpu()[1], torch.tensor([-1.0, -1.0, 6.0, 7.0]))


def test_loading_onto_a_missing_npu_names_the_device():
    with pytest.raises((RuntimeError, ValueError), match="npu:1 does not exist"):
        _round_trip(torch.ones(2), map_location="npu:1")


def test_autocast_to_a_type_the_device_does_not_list_warns_and_stays_off():
    # float32 is not a reduced type: PyTorch warns and disables autocast,
    # so the ops run exactly as without it (test_autocast.py: bf16, f16).
    assert torch.float32 not in torch.npu.get_amp_supported_dtype()
    a, b = torch.randn(4, 8).npu(), torch.randn(8, 3).npu()
    with pytest.warns(UserWarning, match="npu"):
        with torch.autocast("npu", dtype=torch.float32):
            c = a @ b
    assert c.dtype == torch.float32
    assert torch.equal(c.cpu(), (a @ b).cpu())
