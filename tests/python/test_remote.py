"""The remote backend through npu-server on loopback: every example kernel
gives bit-identical outputs through `remote` wrapping iss and rtl, npu-sim
runs on it, and the server stops cleanly on SIGINT/SIGTERM."""
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO, build_dir, tool

KERNELS = sorted(p for p in (REPO / "examples" / "kernels").glob("*.py") if p.name != "npu_kernel.py")
TOKEN = "loopback-token"

pytestmark = pytest.mark.skipif(not (build_dir() / "bin" / "npu-server").exists(),
                                reason="built without gRPC: no npu-server, no remote backend")

# Runs a kernel script's check() and saves every output npu_kernel.run read
# back, so that two backends' results can be compared bit for bit.
HARNESS = """
import runpy, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
import npu_kernel
outputs = {}
original = npu_kernel.run
def recording_run(*args, **kwargs):
    result = original(*args, **kwargs)
    for name, array in result.items():
        outputs[f"{len(outputs)}_{name}"] = array
    return result
npu_kernel.run = recording_run
runpy.run_path(sys.argv[1])["check"]()
np.savez(sys.argv[3], **outputs)
"""


class NpuServer:
    def __init__(self, backend: str, token_file):
        self.process = subprocess.Popen(
            [str(tool("npu-server")), "--listen", "127.0.0.1:0", "--backend", backend,
             "--token-file", str(token_file)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on (127\.0\.0\.1:\d+)", line)
        if not match:
            self.process.kill()
            pytest.fail(f"npu-server did not start: {line}{self.process.stderr.read()}")
        self.address = match[1]

    def env(self) -> dict:
        return {"NPU_BUILD_DIR": str(build_dir()), "PATH": "/usr/bin:/bin", "NPU_BACKEND": "remote",
                "NPU_REMOTE": self.address, "NPU_REMOTE_TOKEN": TOKEN}

    def stop(self, sig=signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=30)


@pytest.fixture(scope="module", params=["iss", "rtl"])
def server(request, tmp_path_factory):
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(TOKEN + "\n")
    running = NpuServer(request.param, token_file)
    running.backend = request.param
    yield running
    assert running.stop() == 0


def kernel_outputs(script, env, path):
    result = subprocess.run([sys.executable, "-c", HARNESS, str(script), str(script.parent), str(path)],
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return np.load(path)


@pytest.mark.parametrize("script", KERNELS, ids=[p.stem for p in KERNELS])
def test_kernel_is_bit_identical_through_remote(server, script, tmp_path):
    local_env = dict(server.env(), NPU_BACKEND=server.backend)
    local = kernel_outputs(script, local_env, tmp_path / "local.npz")
    remote = kernel_outputs(script, server.env(), tmp_path / "remote.npz")
    assert sorted(local.files) == sorted(remote.files) and local.files
    for name in local.files:
        assert local[name].tobytes() == remote[name].tobytes(), f"{script.stem}: {name} differs"


@pytest.mark.parametrize("kernel", ["gemm.npuasm", "softmax.npuasm"])
def test_npu_sim_runs_on_remote(server, kernel):
    result = subprocess.run([str(tool("npu-sim")), "--backend", "remote", str(REPO / "examples" / kernel)],
                            capture_output=True, text=True, env=server.env(), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks: 1 passed, 0 failed" in result.stdout
    assert f"remote {server.address} ({server.backend})" in result.stdout


def test_python_device_on_remote(server, monkeypatch):
    import npu
    monkeypatch.setenv("NPU_REMOTE", server.address)
    monkeypatch.setenv("NPU_REMOTE_TOKEN", TOKEN)
    device = npu.Device(backend="remote")
    assert device.backend == f"remote {server.address} ({server.backend})"
    x = np.arange(-8, 8, dtype=np.float32)
    device.write(0x1000_0000, x)
    assert np.array_equal(device.read(0x1000_0000, 16), x)
    monkeypatch.setenv("NPU_REMOTE_TOKEN", "wrong")
    with pytest.raises(ValueError, match="missing or wrong token"):
        npu.Device(backend="remote")


def test_npu_sim_without_npu_remote_says_what_is_missing():
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run([str(tool("npu-sim")), "--backend", "remote", str(REPO / "examples" / "gemm.npuasm")],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode != 0
    assert "NPU_REMOTE=HOST:PORT" in result.stderr


def test_server_refuses_a_backend_it_cannot_serve():
    result = subprocess.run([str(tool("npu-server")), "--backend", "remote"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "cannot serve backend 'remote' (available: " in result.stderr and "iss" in result.stderr


def test_bad_token_file_is_an_input_error(tmp_path):
    result = subprocess.run([str(tool("npu-server")), "--token-file", str(tmp_path / "missing")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 3
    assert "--token-file: cannot read" in result.stderr


def test_server_stops_on_sigint(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    running = NpuServer("iss", token_file)
    assert running.stop(signal.SIGINT) == 0
    assert "SIGINT, shutting down" in running.process.stderr.read()
