"""Helpers of the PyTorch bridge tests."""

from __future__ import annotations

import contextlib
import os
import pathlib
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
