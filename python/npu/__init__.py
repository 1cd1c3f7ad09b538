"""The NPU toolchain from Python (docs/python.md): assemble `.npuasm`, run
programs on the ISS, the RTL or both in lockstep, and move numpy arrays in and
out of device memory.

    import npu
    program = npu.assemble("examples/gemm.npuasm")
    device = npu.Device(backend="iss")
    result = device.run(program)          # faults raise npu.DeviceFault
    c = device.read(program.symbols["C"], (16, 16), "float32")
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Iterable, Mapping, Sequence

import numpy as np

from . import _npu
from . import isa  # noqa: F401  (npu.isa: the instruction tables)

__all__ = ["AssemblyError", "CheckError", "CheckResult", "Device", "DeviceFault", "Diagnostic",
           "Program", "RunResult", "assemble", "isa", "load"]


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    file: str
    line: int  # 1-based; 0 when the diagnostic has no position
    column: int  # 1-based byte column
    message: str
    formatted: str  # "file:line:col: error: message" with the source line and caret

    def __str__(self) -> str:
        return self.formatted.rstrip("\n")


class AssemblyError(Exception):
    """The source has errors: `diagnostics` lists every one (warnings too);
    `file`, `line`, `column` and `message` are the first error's."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        first = next(d for d in self.diagnostics if d.severity == "error")
        self.file, self.line, self.column, self.message = first.file, first.line, first.column, first.message
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class DeviceFault(RuntimeError):
    """A packet faulted: `packet` is its index in the stream, `address` the
    faulting address, `description` the device's one-line explanation."""

    def __init__(self, packet: int, address: int, code: int, description: str, disassembly: str) -> None:
        self.packet, self.address, self.code = packet, address, code
        self.description, self.disassembly = description, disassembly
        super().__init__(description)


@dataclasses.dataclass(frozen=True)
class CheckResult:
    address: int
    size: int
    ok: bool
    mismatches: int
    worst_ulp: int
    description: str


class CheckError(AssertionError):
    """A program's check regions did not hold (Device.run with verify=True)."""

    def __init__(self, failed: Sequence[CheckResult]) -> None:
        self.failed = list(failed)
        super().__init__("\n".join(c.description for c in self.failed))


@dataclasses.dataclass(frozen=True)
class RunResult:
    packets: int
    cycles: int  # the backend's: the ISS's cycle model, the RTL's clock
    bytes_read: int
    bytes_written: int
    checks: list[CheckResult]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


class Program:
    """An assembled (or loaded) program: its `.npubin` container and what it
    declares. `symbols` maps labels to packet indices (text) or physical
    addresses (data and check sections)."""

    def __init__(self, described: Mapping) -> None:
        self.container: bytes = described["container"]
        self.packets: int = described["packets"]
        self.symbols: dict[str, int] = {name: value for name, _, value in described["symbols"]}
        self.symbol_kinds: dict[str, str] = {name: kind for name, kind, _ in described["symbols"]}
        self.metadata: dict[str, str] = dict(described["metadata"])
        self.data: list[tuple[int, int]] = list(described["data"])  # (address, bytes)
        self.checks: list[tuple[int, int, int | None]] = list(described["checks"])  # (address, bytes, ulp)
        self.warnings: list[Diagnostic] = []

    def save(self, path: str | os.PathLike[str]) -> None:
        pathlib.Path(path).write_bytes(self.container)

    def __repr__(self) -> str:
        return (f"<npu.Program: {self.packets} packets, {len(self.data)} data segments, "
                f"{len(self.checks)} check regions, {len(self.symbols)} symbols>")


def _program(described: Mapping) -> Program:
    diagnostics = [Diagnostic(**{k: d[k] for k in ("severity", "file", "line", "column", "message", "formatted")})
                   for d in described["diagnostics"]]
    if not described["ok"]:
        raise AssemblyError(diagnostics)
    program = Program(described)
    program.warnings = diagnostics
    return program


def assemble(source: str | os.PathLike[str], *, include_dirs: Iterable[str | os.PathLike[str]] = (),
             name: str = "<string>") -> Program:
    """Assembles a file (a path object, or a string naming an existing
    `.npuasm` file) or source text (any other string, reported as `name`).
    Errors raise AssemblyError with file, line and column."""
    dirs = [os.fspath(d) for d in include_dirs]
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and source.endswith(".npuasm")):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no assembly source at {path}")
        return _program(_npu.assemble_file(path, dirs))
    return _program(_npu.assemble_text(source, name, dirs))


def load(path: str | os.PathLike[str]) -> Program:
    """Reads an `.npubin` container (a malformed one raises ValueError with
    the byte offset)."""
    data = pathlib.Path(path).read_bytes()
    try:
        return Program(_npu.read_container(data))
    except RuntimeError as e:
        raise ValueError(f"{os.fspath(path)}: {e}") from None


def _regions(memory: Mapping[str, tuple] | Sequence[str] | None) -> list[str]:
    if memory is None:
        return []
    if isinstance(memory, Mapping):
        specs = []
        for name, region in memory.items():
            base, size, *access = region
            specs.append(f"{name}={base:#x}:{size:#x}" + (f":{access[0]}" if access else ""))
        return specs
    return [str(spec) for spec in memory]


class Device:
    """One NPU on a backend ("iss", "rtl" or "cosim"; None: $NPU_BACKEND,
    else "iss"). `memory` adds or replaces address-map regions: a mapping
    name -> (base, size[, "rw"|"r"|"w"]) or `npu-sim --region` strings."""

    def __init__(self, backend: str | None = "iss",
                 memory: Mapping[str, tuple] | Sequence[str] | None = None) -> None:
        try:
            self._device = _npu.Device(backend or "", _regions(memory))
        except RuntimeError as e:
            raise ValueError(str(e)) from None

    @property
    def backend(self) -> str:
        return self._device.backend

    def write(self, address: int, array: np.ndarray | bytes) -> None:
        """Writes an array's bytes (C order) or raw bytes at a physical address."""
        data = array if isinstance(array, bytes) else np.ascontiguousarray(array).tobytes()
        self._device.write(address, data)

    def read(self, address: int, shape: int | Sequence[int], dtype: np.dtype | str = np.float32) -> np.ndarray:
        """Reads an array of `shape` and `dtype` from a physical address."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        count = int(np.prod(shape, dtype=np.int64))
        data = self._device.read(address, count * dtype.itemsize)
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()

    def load(self, program: Program) -> None:
        """Writes the program's data segments, so that inputs written after
        them (over a `.fill`, say) survive `run(program, load=False)`."""
        self._device.load(program.container)

    def run(self, program: Program, *, load: bool = True, verify: bool = True) -> RunResult:
        """Loads the program's data segments (unless `load` is false: see
        `load()`), runs its packets (to the end or its HALT) and compares its
        check regions: a fault raises DeviceFault (the device is reset,
        memory kept); with `verify`, a failed check raises CheckError."""
        out = self._device.run(program.container, load)
        if out["fault"] is not None:
            raise DeviceFault(**out["fault"])
        checks = [CheckResult(**c) for c in out["checks"]]
        result = RunResult(out["packets"], out["cycles"], out["bytes_read"], out["bytes_written"], checks)
        if verify and not result.ok:
            raise CheckError([c for c in checks if not c.ok])
        return result

    def __repr__(self) -> str:
        return f"<npu.Device backend={self.backend!r}>"
