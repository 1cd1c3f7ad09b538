import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# The Python package npu of the build under test, before any installed one.
sys.path.insert(0, str(pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build")) / "python"))

# Skips fail under NPU_REQUIRE_FULL_COVERAGE=1 (see full_coverage.py);
# npu.testing gives kernel tests the npu_device fixture.
pytest_plugins = ["full_coverage", "npu.testing"]


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))


def san_build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("NPU_SAN_BUILD_DIR", REPO / "build-san"))


def tool(name: str, build: pathlib.Path | None = None) -> pathlib.Path:
    path = (build or build_dir()) / "bin" / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/build)")
    return path


def run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kwargs)

