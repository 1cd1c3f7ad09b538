"""Helpers of the PyTorch bridge tests."""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator

import torch

REPO = pathlib.Path(__file__).resolve().parents[3]

# Tolerances against PyTorch CPU (docs/pytorch.md): exactly rounded ops agree
# to the last bit, micro-programmed transcendentals within a few ulp, and
# sums/products differ by accumulation order.
EXACT = {"rtol": 0.0, "atol": 0.0}
ULPS = {"rtol": 1e-5, "atol": 1e-6}
SUMS = {"rtol": 1e-5, "atol": 1e-5}


def build_dir() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    return path if path.is_absolute() else REPO / path


def npu_sim() -> pathlib.Path:
    path = build_dir() / "bin" / "npu-sim"
    if not path.exists():
        raise AssertionError(f"{path} is missing: build the toolchain (scripts/build) or set NPU_BUILD_DIR")
    return path


def rtl_built() -> bool:
    """Whether the toolchain build has the RTL (npu-sim's rtl and cosim backends)."""
    cache = build_dir() / "CMakeCache.txt"
    return cache.exists() and "NPU_BUILD_RTL:BOOL=ON" in cache.read_text()


def replay(trace: os.PathLike[str] | str, *options: str) -> subprocess.CompletedProcess:
    """npu-sim replaying a captured trace (on the ISS unless options say otherwise)."""
    return subprocess.run([str(npu_sim()), *options, str(trace)], capture_output=True, text=True, timeout=600)


def assert_replay_passes(result: subprocess.CompletedProcess) -> int:
    """Asserts that a replay ran to the end and that every check region (each
    range the host read during the capture) held the captured bytes: exit
    status 0 and npu-sim's summary "checks: N passed, 0 failed" with N > 0
    (mismatches and faults go to stderr). Returns N.

    A replay compares the device with the recording of itself: it shows that
    the trace is complete and the execution reproducible, not that the NPU
    computes what the CPU does."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    summary = re.search(r"^checks: (\d+) passed, (\d+) failed$", result.stdout, re.MULTILINE)
    assert summary, output
    passed, failed = int(summary[1]), int(summary[2])
    assert failed == 0 and passed > 0, output
    assert "mismatch" not in result.stderr, output
    return passed


@contextlib.contextmanager
def native(*ops: str) -> Iterator[None]:
    """Asserts that the enclosed code fell back to the CPU nowhere and that
    each named native op (as in torch.npu.op_stats()) built packets."""
    torch.npu.reset_stats()
    yield
    torch.npu.synchronize()
    assert torch.npu.fallback_stats() == {}, "unexpected CPU fallback"
    stats = torch.npu.op_stats()
    for op in ops:
        assert stats.get(op, {}).get("packets", 0) > 0, f"{op} built no packets: {stats}"


def op_packets(op: str) -> int:
    return torch.npu.op_stats().get(op, {}).get("packets", 0)


def run_python(code: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh Python with these environment variables
    added (for what a process does once: start the device, read NPU_*)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **env})
