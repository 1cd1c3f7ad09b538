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
    "device",
    "is_available",
    "is_initialized",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "mem_get_info",
    "memory_stats",
    "memory_summary",
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
    "widened_stats",
    "reset_stats",
    "device_stats",
    "submission_count",
    "compile_stats",
    "reset_compile_stats",
    "debug_level",
    "set_debug_level",
    "strict",
    "set_strict",
    "host_random",
    "set_host_random",
    "get_amp_supported_dtype",
    "is_bf16_supported",
    "Stream",
    "Event",
    "current_stream",
    "default_stream",
    "set_stream",
    "stream",
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


def _device_index(device: torch.device | str | int | None, optional: bool = False) -> int:
    """The index of ``device`` (an npu device, its index, or None for the
    current one when ``optional``); ValueError for another device type or an
    index that does not exist."""
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "npu":
            raise ValueError(f"expected an npu device, got {device}")
        device = device.index
    if device is None:
        if not optional:
            raise ValueError("expected an npu device or index, got None")
        return current_device()
    if not isinstance(device, int):
        raise TypeError(f"expected an npu device, got {type(device).__name__} {device!r}")
    if device != 0:
        raise ValueError(f"npu:{device} does not exist: there is one NPU (npu:0)")
    return device


def set_device(device: torch.device | str | int) -> None:
    _device_index(device, optional=True)


class device:
    """Context manager selecting an npu device (``with torch.npu.device(0):``),
    as ``torch.cuda.device``. There is one device, so it only validates its
    argument; None or a negative index is a no-op, as on CUDA."""

    def __init__(self, device: torch.device | str | int | None) -> None:
        if not (device is None or (isinstance(device, int) and device < 0)):
            _device_index(device, optional=True)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> bool:
        return False


class _utils:
    """What torch.serialization asks of a device module to map storages
    onto the device (``torch.load(..., map_location="npu")``)."""

    @staticmethod
    def _get_device_index(device: torch.device | str | int | None, optional: bool = False) -> int:
        return _device_index(device, optional)


def synchronize(device: torch.device | str | int | None = None) -> None:
    """Waits until the device has executed every packet submitted so far."""
    _C._synchronize()


# --- Streams and events ----------------------------------------------------------
# Every npu stream is a runtime command queue (torch_bridge/csrc/Guard.cpp):
# an event is the point after its stream's last packet, and a stream's
# query/synchronize wait for that stream only. The device runs all queues
# in submission order, so work on two streams is ordered as submitted,
# which satisfies every synchronisation a program asks for (stronger than
# CUDA's order, never weaker). A timed event keeps the device's cycle
# counter where it stands, and elapsed_time converts cycles to milliseconds
# at the clock of isa/hardware.td (ClockMegahertz, a nominal 1 GHz: device
# time, not host time).


class Stream(torch.Stream):
    """An npu stream: ``torch.Stream(device="npu")`` with the device implied."""

    def __new__(cls, device: torch.device | str | int | None = None, priority: int = 0) -> "Stream":
        return super().__new__(cls, device=torch.device("npu", _device_index(device, optional=True)),
                               priority=priority)


def Event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> torch.Event:
    """An npu event: ``torch.Event(device="npu")``. A torch.Event itself, not
    a subclass: PyTorch's Event methods accept only that exact type as the
    other event (``elapsed_time``, ``Stream.wait_event``)."""
    if interprocess:
        raise RuntimeError("npu events cannot be shared between processes (interprocess=True)")
    return torch.Event(device=torch.device("npu", 0), enable_timing=enable_timing, blocking=blocking)


def current_stream(device: torch.device | str | int | None = None) -> torch.Stream:
    return torch.accelerator.current_stream(torch.device("npu", _device_index(device, optional=True)))


def default_stream(device: torch.device | str | int | None = None) -> torch.Stream:
    """The stream with id 0, which every thread starts on."""
    return torch.Stream(stream_id=0, device_index=0, device_type=current_stream(device).device_type)


def set_stream(stream_: torch.Stream) -> None:
    torch.accelerator.set_stream(stream_)


@contextlib.contextmanager
def stream(stream_: torch.Stream | None) -> Iterator[None]:
    """Makes ``stream_`` the current npu stream in the block (None: no change)."""
    if stream_ is None:
        yield
        return
    previous = current_stream()
    set_stream(stream_)
    try:
        yield
    finally:
        set_stream(previous)


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


def max_memory_reserved(device: torch.device | str | int | None = None) -> int:
    return memory_stats()["reserved_bytes.all.peak"]


def mem_get_info(device: torch.device | str | int | None = None) -> tuple[int, int]:
    """(free, total) bytes of device memory, as ``torch.cuda.mem_get_info``:
    total is the runtime's heap; free what it has not handed out (memory the
    allocator caches counts as used, as on CUDA)."""
    return _C._mem_get_info()


def memory_summary(device: torch.device | str | int | None = None, abbreviated: bool = False) -> str:
    """A table of the allocator's and the device heap's statistics, in the
    spirit of ``torch.cuda.memory_summary``."""

    def size(n: int) -> str:
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(n) < 1024 or unit == "GiB":
                return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
            n /= 1024
        raise AssertionError("unreachable")

    stats = memory_stats()

    def sizes(current: str, peak: str = "") -> tuple[str, str]:
        return size(stats[current]), size(stats[peak]) if peak else ""

    rows = [
        ("Allocated memory", *sizes("allocated_bytes.all.current", "allocated_bytes.all.peak")),
        ("Reserved memory", *sizes("reserved_bytes.all.current", "reserved_bytes.all.peak")),
        ("Live tensors' blocks", str(stats["active.all.current"]), ""),
        ("Cached blocks", str(stats["cached_blocks"]), ""),
        ("Device heap in use", *sizes("device.allocated_bytes", "device.peak_allocated_bytes")),
        ("Device heap capacity", *sizes("device.capacity_bytes")),
        ("Largest free block", *sizes("device.largest_free_block")),
    ]
    if not abbreviated:
        rows += [
            ("Allocations", str(stats["num_alloc"]), ""),
            ("Cache hits", str(stats["num_cache_hits"]), ""),
            ("Frees", str(stats["num_free"]), ""),
            ("Out-of-memory errors", str(stats["num_ooms"]), ""),
        ]
    width = max(len(name) for name, _, _ in rows)
    line = "=" * (width + 34)
    out = [line, f" NPU memory summary, device npu:0 ({get_backend()})", line,
           f" {'Metric':<{width}} | {'Current':>13} | {'Peak':>13}", "-" * (width + 34)]
    out += [f" {name:<{width}} | {current:>13} | {peak:>13}" for name, current, peak in rows]
    out.append(line)
    return "\n".join(out) + "\n"


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


# --- Automatic mixed precision --------------------------------------------------------


def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes ``torch.autocast("npu", dtype=...)`` may cast to. bf16 and
    f16 tensors live on the device; an op on them computes in binary32 and
    rounds once to nearest even on store (docs/types.md §2), as PyTorch's
    CPU kernels of these types do."""
    return [torch.bfloat16, torch.float16]


def is_bf16_supported(including_emulation: bool = False) -> bool:
    return torch.bfloat16 in get_amp_supported_dtype()


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


def widened_stats() -> dict[str, int]:
    """Per op that had bf16/f16 operands its instruction does not take: how
    many times it ran on the device on binary32 copies, its results rounded
    back once (no CPU involved; docs/pytorch.md)."""
    return dict(_C._widened_stats())


def reset_stats() -> None:
    """Zeroes op_stats(), fallback_stats() and widened_stats() (not packet_count())."""
    _C._reset_stats()


def submission_count() -> int:
    """Runtime submissions (batches of packets) made through the bridge since start."""
    return _C._submission_count()


def compile_stats() -> dict[str, object]:
    """What torch.compile(backend="npu") did since the last reset_compile_stats():
    captured graphs, packets per graph, pool bytes, graph breaks and their
    reasons, replays, compile time (npu_bridge/compile.py)."""
    from . import compile as _compile

    return _compile.compile_stats()


def reset_compile_stats() -> None:
    from . import compile as _compile

    _compile.reset_compile_stats()


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


def host_random() -> bool:
    return _C._host_random()


def set_host_random(enabled: bool) -> None:
    """As NPU_RNG=host: rand/randn fills (uniform_, normal_) and dropout
    draw on the host with the CPU's Mersenne Twister, equal to the CPU's
    values for a seed; by default they draw on the device (RAND, RANDN:
    Philox4x32-10 keyed by the generator's next 64 bits, reproducible from
    the seed, not equal to the CPU's values)."""
    _C._set_host_random(bool(enabled))


# --- torch.compile ------------------------------------------------------------------
# Inductor, torch.compile's default backend, looks up a code generator for a
# renamed PrivateUse1 device in its device module (Scheduling and the wrapper
# code generators). The NPU has none yet, so these refuse with a message
# naming the backends that work, where Inductor would otherwise fail deep
# inside with KeyError: 'npu'.

_NO_INDUCTOR = (
    "torch.compile's default backend (Inductor) generates CPU and GPU kernels and has no code "
    "generator for the npu device. Use torch.compile(..., backend=\"npu\"), which records each "
    "graph's packets once and replays them, or backend=\"aot_eager\" or backend=\"eager\": they "
    "capture the graph (and its backward) and run its ops on the npu as eager mode does."
)


class _Refusing(type):
    # Inductor first reads a class attribute of the device's wrapper code
    # generator (supports_caching), then builds it through create(): any
    # attribute refuses.
    def __getattr__(cls, name: str) -> object:
        raise RuntimeError(_NO_INDUCTOR)


class _NoInductorCodegen(metaclass=_Refusing):
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError(_NO_INDUCTOR)


Scheduling = PythonWrapperCodegen = CppWrapperCodegen = WrapperFxCodegen = _NoInductorCodegen
