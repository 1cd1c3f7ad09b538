"""Runs an example kernel on the NPU (the Python package npu, docs/python.md)
with numpy inputs and compares its outputs with a float64 numpy reference.

A kernel declares its shapes and buffer addresses with `.equ NAME, value`
lines; the scripts read them from the kernel itself so that the two cannot
disagree."""
from __future__ import annotations

import os
import pathlib
import re
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))
if (BUILD / "python").is_dir():
    # The package of the build the scripts are run against, before any other.
    sys.path.insert(0, str(BUILD / "python"))
import npu  # noqa: E402


def constants(kernel: pathlib.Path) -> dict[str, int]:
    """The kernel's `.equ NAME, expr` values, each expression evaluated over the earlier ones."""
    values: dict[str, int] = {}
    for line in kernel.read_text().splitlines():
        m = re.match(r"\s*\.equ\s+(\w+)\s*,\s*([^#]+)", line)
        if m:
            values[m[1]] = int(eval(m[2], {"__builtins__": {}}, dict(values)))
    return values


def run(kernel: pathlib.Path, inputs: dict[str, np.ndarray], outputs: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Loads each input at the address named by its key, runs the kernel
    (on $NPU_BACKEND, else the ISS) and returns each output (address name ->
    (shape,)) as float32."""
    addresses = constants(kernel)
    program = npu.assemble(kernel)
    device = npu.Device(backend=None)
    device.load(program)
    for name, array in inputs.items():
        if array.dtype not in (np.float32, np.int32, np.int64):
            raise TypeError(f"input {name} is {array.dtype}; the device takes float32, int32 or int64")
        device.write(addresses[name], array)
    device.run(program, load=False)
    return {name: device.read(addresses[name], shape, np.float32) for name, (shape,) in outputs.items()}


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    """|got - want| <= atol + rtol * |want| elementwise; prints the worst case."""
    want = np.asarray(want, dtype=np.float64)
    error = np.abs(got.astype(np.float64) - want)
    bound = atol + rtol * np.abs(want)
    worst = int(np.argmax(error - bound))
    ok = bool(np.all(error <= bound))
    print(f"{name}: max abs error {error.max():.3g}, max rel error "
          f"{(error / np.maximum(np.abs(want), 1e-30)).max():.3g} "
          f"(tolerance {rtol:g} rel + {atol:g} abs) -> {'ok' if ok else 'FAILED at ' + str(np.unravel_index(worst, want.shape))}")
    return ok


def main(check) -> None:
    sys.exit(0 if check() else 1)
