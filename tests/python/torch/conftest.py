"""Fixtures of the PyTorch bridge tests. npu_bridge must be installed
(scripts/build-torch); helpers live in npu_testing.py."""

import pytest
import torch

try:
    import npu_bridge  # noqa: F401
except ImportError as error:  # pragma: no cover - a setup problem, not a test result
    raise pytest.UsageError(f"npu_bridge is not installed ({error}): run scripts/build-torch") from error


@pytest.fixture(autouse=True)
def _seeded() -> None:
    torch.manual_seed(1234)
