"""``torch.npu``: device management, memory, statistics, backend and trace capture.

The NPU is one device (``npu:0``) with one in-order command stream. Ops are
queued asynchronously; only copies to the host, ``.item()`` and
:func:`synchronize` wait for the device.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

from . import _C

__all__ = [
    "is_available",
    "is_initialized",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "empty_cache",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_backend",
    "set_backend",
    "capture",
    "packet_count",
    "op_stats",
    "fallback_stats",
    "reset_stats",
    "device_stats",
    "debug_level",
    "set_debug_level",
    "strict",
    "set_strict",
]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def _lazy_init() -> None:
    """Nothing to do: the runtime starts with the first device call."""


def _is_in_bad_fork() -> bool:
    """torch.manual_seed asks: the runtime does not support fork anyway."""
    return False


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device: torch.device | str | int) -> None:
    index = torch.device(device).index if not isinstance(device, int) else device
    if index not in (None, 0):
        raise ValueError(f"npu:{index} does not exist: there is one NPU (npu:0)")


def synchronize(device: torch.device | str | int | None = None) -> None:
    """Waits until the device has executed every packet submitted so far."""
    _C._synchronize()


# --- Memory -------------------------------------------------------------------


def memory_stats(device: torch.device | str | int | None = None) -> dict[str, int]:
    """Allocator statistics (``*.all.*`` as on CUDA: bytes held by tensors,
    and reserved = held plus cached) and the runtime heap's (``device.*``)."""
    return dict(_C._memory_stats())


def memory_allocated(device: torch.device | str | int | None = None) -> int:
    return memory_stats()["allocated_bytes.all.current"]


def max_memory_allocated(device: torch.device | str | int | None = None) -> int:
    return memory_stats()["allocated_bytes.all.peak"]


def memory_reserved(device: torch.device | str | int | None = None) -> int:
    return memory_stats()["reserved_bytes.all.current"]


def reset_peak_memory_stats(device: torch.device | str | int | None = None) -> None:
    _C._reset_peak_memory_stats()


def empty_cache() -> None:
    """Returns cached (freed) blocks to the runtime's heap."""
    _C._empty_cache()


# --- Random numbers -------------------------------------------------------------
# Random fills (normal_, uniform_) are drawn on the host from this generator
# and copied to the device.


def _generator() -> torch.Generator:
    return _C._default_generator()


def manual_seed(seed: int) -> None:
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    _generator().seed()


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device: torch.device | str | int = "npu") -> torch.Tensor:
    return _generator().get_state()


def set_rng_state(new_state: torch.Tensor, device: torch.device | str | int = "npu") -> None:
    _generator().set_state(new_state)


# --- Backend and capture ----------------------------------------------------------


def get_backend() -> str:
    """The runtime backend executing packets: "iss", or "rtl" and "cosim" in a
    build with the RTL (NPU_BUILD_RTL)."""
    return _C._backend_name()


def set_backend(name: str) -> None:
    """Re-creates the runtime on backend ``name``.

    Device addresses belong to one runtime, so this raises RuntimeError
    while tensors are live on the device; an unknown name raises
    RuntimeError listing the available backends.
    """
    _C._set_backend(name)


@contextlib.contextmanager
def capture(path: str | os.PathLike[str]) -> Iterator[None]:
    """Records the packets and data of the enclosed code into a
    self-contained ``.npubin`` that ``npu-sim`` replays and checks."""
    _C._capture_begin(os.fspath(path))
    try:
        yield
    finally:
        _C._capture_end()


# --- Statistics and debugging -------------------------------------------------------


def packet_count() -> int:
    """Packets submitted to the device through the bridge since start."""
    return _C._packet_count()


def op_stats() -> dict[str, dict[str, int]]:
    """Per native op: calls and packets it built."""
    return {name: {"calls": calls, "packets": packets} for name, (calls, packets) in _C._op_stats().items()}


def fallback_stats() -> dict[str, int]:
    """Per op that ran on the CPU instead: how many times."""
    return dict(_C._fallback_stats())


def reset_stats() -> None:
    """Zeroes op_stats() and fallback_stats() (not packet_count())."""
    _C._reset_stats()


def device_stats() -> dict[str, int]:
    """Device cycles (since the device's last reset) and packets submitted."""
    return dict(_C._device_stats())


def debug_level() -> int:
    return _C._debug_level()


def set_debug_level(level: int) -> None:
    """As NPU_DEBUG: 0 off, 1 ops ([NPU] native, [CPU] fallback), 2 also
    copies ([COPY]), 3 also views ([VIEW]) and submissions."""
    _C._set_debug_level(int(level))


def strict() -> bool:
    return _C._strict()


def set_strict(enabled: bool) -> None:
    """As NPU_STRICT=1: any CPU fallback raises an error naming the op."""
    _C._set_strict(bool(enabled))
