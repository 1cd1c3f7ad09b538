"""A pytest plugin for kernel tests: `pytest_plugins = ["npu.testing"]` in a
conftest.py gives every test the fixture `npu_device`, a Device on the
backend of `--npu-backend` (default $NPU_BACKEND, else iss), so that a
kernel test is one function:

    def test_gemm(npu_device):
        program = npu.assemble("gemm.npuasm")
        npu_device.write(program.symbols["A"], a)
        npu_device.run(program)                      # its .check regions hold
        assert np.allclose(npu_device.read(program.symbols["C"], (16, 16)), a @ b)
"""
from __future__ import annotations

import os

import pytest

import npu


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--npu-backend", default=None, choices=("iss", "rtl", "cosim"),
                     help="backend of the npu_device fixture (default $NPU_BACKEND, else iss)")


@pytest.fixture
def npu_device(request: pytest.FixtureRequest) -> npu.Device:
    backend = request.config.getoption("--npu-backend") or os.environ.get("NPU_BACKEND") or "iss"
    return npu.Device(backend=backend)
