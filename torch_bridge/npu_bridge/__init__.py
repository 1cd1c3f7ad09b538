"""The NPU as a PyTorch device: ``import npu_bridge`` and use ``torch.device("npu")``.

Importing this package renames PyTorch's PrivateUse1 backend to ``npu``,
registers ``torch.npu`` (see :mod:`npu_bridge.device`) and adds
``Tensor.npu()``, ``Tensor.is_npu`` and ``Module.npu()``. Native ops are
lowered to NPU command packets and run on the runtime's backend (the ISS by
default); every other op falls back to the CPU. See docs/pytorch.md.
"""

import atexit

import torch

from . import _C  # noqa: F401  (registers the device with PyTorch)
from . import _printing, device

torch.utils.rename_privateuse1_backend("npu")
torch._register_device_module("npu", device)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=False, for_storage=True
)
_printing.install()
atexit.register(_C._shutdown)

__all__ = ["device"]
