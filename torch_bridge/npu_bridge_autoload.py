"""The entry point PyTorch calls at the end of ``import torch`` (group
``torch.backends``): it imports the bridge, which registers the device.

A bridge whose native library cannot be loaded (its toolchain build was
moved or deleted) must not break ``import torch`` for every program on the
machine, so that failure is a warning here; ``import npu_bridge`` still
raises it."""

from __future__ import annotations

import warnings


def load() -> None:
    try:
        import npu_bridge  # noqa: F401
    except ImportError as error:
        warnings.warn(
            f"npu_bridge is installed but cannot be loaded ({error}); the npu device is "
            "unavailable. Reinstall it (scripts/build-torch), or set "
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0 to skip it.",
            RuntimeWarning,
            stacklevel=2,
        )
