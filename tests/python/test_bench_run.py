"""bench/run: the report it writes from benchmark JSON (the benchmarks
themselves are timed by hand, never in a test), and its errors."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
RUN = REPO / "bench" / "run"
BUILD = pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build"))


def bench_run(*args):
    return subprocess.run([sys.executable, str(RUN), *map(str, args)], capture_output=True, text=True)


def iss_json(ratio):
    row = {"iss": {"gflops": 90.0 * ratio}, "numpy": {"gflops": 90.0}, "ratio": ratio}
    exp = {"iss": {"gelements_per_s": 0.5}, "numpy": {"gelements_per_s": 1.0}, "ratio": 0.5}
    return {"machine": {}, "load_average_before": [1.0, 1.0, 1.0], "runs": [
        {"threads": 1, "iss_host": {"gemm_kernel": "avx512", "vector_implementation": "avx512"},
         "blas": [{"internal_api": "openblas", "version": "0.3", "architecture": "SkylakeX",
                   "num_threads": 1}],
         "rows": {"matmul_512": row, "exp_2^24": exp}}]}


def torch_json():
    rows = {"host_overhead_us": {"cpu": 0.9, "npu": 1.1, "unit": "us", "ratio": 1.22},
            "mm_64": {"cpu": 4.5, "npu": 9.0, "unit": "us", "ratio": 2.0}}
    return {"threads": 1, "rows": rows, "targets": {"host_overhead_us": 2.0, "mm_64": 1.5}}


@pytest.fixture
def raw(tmp_path):
    d = tmp_path / "raw"
    d.mkdir()
    (d / "iss.json").write_text(json.dumps(iss_json(1.05)))
    (d / "torch1.json").write_text(json.dumps(torch_json()))
    (d / "rtl.json").write_text(json.dumps([
        {"workload": "gemm", "threads": 1, "packets": 4, "device_cycles": 166076,
         "seconds": 0.1, "cycles_per_second": 1_200_000.0}]))
    return d


def test_report_names_every_target_and_its_verdict(raw, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = bench_run("--from-json", raw, "--out", out)
    assert result.returncode == 0, result.stderr
    text = (out / "benchmarks.md").read_text()
    assert "## Machine" in text and "ISA extensions" in text
    assert "| matmul_512 | 94.50 GFLOP/s | 90.00 GFLOP/s | 1.05× | ≥ 0.9×: met |" in text
    assert "| exp_2^24 | 0.50 Gelem/s | 1.00 Gelem/s | 0.50× | ≥ 1.0×: **not met** |" in text
    assert "| host_overhead_us | 1 | 0.90 µs | 1.10 µs | 1.22× | npu ≤ 2.0 µs: met |" in text
    assert "| mm_64 | 1 | 4.50 µs | 9.00 µs | 2.00× | ≤ 1.5×: **not met** |" in text
    assert "| gemm ×4 | 1 | 166,076 | 1,200,000 | met |" in text
    for png in ("iss.png", "torch.png", "rtl.png"):
        assert (out / "benchmarks" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not (BUILD / "bin" / "npu-as").exists(), reason="needs a built npu-as")
def test_report_of_a_real_assembler_run(raw, tmp_path):
    bench = subprocess.run([sys.executable, str(REPO / "bench" / "asm_throughput.py"), "--build", BUILD,
                            "--lines", "2000", "--runs", "1", "--json", raw / "asm.json"],
                           capture_output=True, text=True)
    assert bench.returncode == 0, bench.stderr
    out = tmp_path / "out"
    out.mkdir()
    assert bench_run("--from-json", raw, "--out", out).returncode == 0
    assert "npu-as / GNU as: **" in (out / "benchmarks.md").read_text()


def test_errors_are_clear_and_leave_no_report(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = bench_run("--from-json", empty, "--out", tmp_path)
    assert result.returncode == 1 and "no benchmark results in" in result.stderr
    assert not (tmp_path / "benchmarks.md").exists()
    result = bench_run("--from-json", empty, "--out", tmp_path / "missing")
    assert result.returncode == 2 and "not a directory" in result.stderr
    result = bench_run("--build", tmp_path, "--out", tmp_path)
    assert result.returncode == 2 and "holds no built toolchain" in result.stderr
