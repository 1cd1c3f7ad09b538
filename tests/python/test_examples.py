"""Every example kernel runs on npu-sim and matches numpy within its stated tolerance."""
import pathlib
import subprocess
import sys

import pytest

from conftest import REPO, build_dir

SCRIPTS = sorted(p for p in (REPO / "examples" / "kernels").glob("*.py") if p.name != "npu_kernel.py")


def test_there_is_a_script_per_kernel():
    kernels = {p.stem for p in (REPO / "examples" / "kernels").glob("*.npuasm")}
    assert kernels == {p.stem for p in SCRIPTS}
    assert {"gemm_tiled", "bmm", "softmax_causal", "rmsnorm", "attention", "mlp", "adamw"} <= kernels


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_kernel_matches_numpy(script):
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env={"NPU_BUILD_DIR": str(build_dir()), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "-> ok" in result.stdout


@pytest.mark.parametrize("kernel", ["gemm.npuasm", "softmax.npuasm"])
def test_self_checking_examples_pass(kernel):
    result = subprocess.run([str(build_dir() / "bin" / "npu-sim"), str(REPO / "examples" / kernel)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks: 1 passed, 0 failed" in result.stdout
