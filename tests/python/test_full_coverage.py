"""The full-coverage plugin: a skip fails the run only when coverage is required."""
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def run_skipping_test(tmp_path, required: str) -> subprocess.CompletedProcess:
    test = tmp_path / "test_skips.py"
    test.write_text(
        "import pytest\n"
        "def test_runs():\n    pass\n"
        "def test_skips():\n    pytest.skip('host lacks AVX2')\n"
        "@pytest.mark.skipif(True, reason='no RTL')\ndef test_marked():\n    pass\n"
    )
    env = dict(os.environ, NPU_REQUIRE_FULL_COVERAGE=required, PYTHONPATH=str(HERE),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "full_coverage", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_skips_fail_when_coverage_is_required(tmp_path):
    result = run_skipping_test(tmp_path, "1")
    assert result.returncode == 1, result.stdout
    assert "1 failed, 1 passed, 1 error" in result.stdout  # a skipif mark fails in setup
    assert "NPU_REQUIRE_FULL_COVERAGE is set: Skipped: host lacks AVX2" in result.stdout
    assert "no RTL" in result.stdout


def test_skips_stay_skips_otherwise(tmp_path):
    result = run_skipping_test(tmp_path, "0")
    assert result.returncode == 0, result.stdout
    assert "1 passed, 2 skipped" in result.stdout
