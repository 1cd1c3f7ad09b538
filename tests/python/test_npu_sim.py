"""npu-sim as a user meets it: exit codes, fault reports, check mismatches,
loads and dumps, statistics and timelines, address-map options."""
import json

import numpy as np
import pytest

from conftest import REPO, run, tool

GOOD = """
.data 0x10000000
X:  .float 1.0, 2.0, 3.0, 4.0
.data 0x10001000
Y:  .fill 4, 4, 0
.text
    exp Y, X, 4
    adds Y, Y, 1.0, 4
    halt
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_runs_an_npuasm_file_and_reports_cycles(tmp_path):
    stats, timeline = tmp_path / "s.json", tmp_path / "t.json"
    result = run([tool("npu-sim"), write(tmp_path, "k.npuasm", GOOD), "--mode", "both",
                  "--stats-json", stats, "--trace-json", timeline, "--trace"])
    assert result.returncode == 0, result.stderr
    assert "3 packets on iss, stopped at halt" in result.stdout
    assert "exp 0x10001000, 0x10000000, 4" in result.stdout  # the --trace log disassembles
    s = json.loads(stats.read_text())
    assert s["packets"] == 3 and s["cycles"] > 0
    assert s["ops"]["exp"]["packets"] == 1
    assert any(r["region"] == "activations" and r["bytes_written"] > 0 for r in s["memory"])
    events = json.loads(timeline.read_text())["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["exp", "adds", "halt"]


def test_device_fault_names_the_packet_and_exits_1(tmp_path):
    source = GOOD.replace("exp Y, X, 4", "exp Y, X, 4\n    copy Y, 0x7fff0000, 16")
    result = run([tool("npu-sim"), write(tmp_path, "f.npuasm", source)])
    assert result.returncode == 1
    assert "device fault at stream packet 1 (copy 0x10001000, 0x7fff0000, 16)" in result.stderr
    assert "unmapped" in result.stderr


def test_check_mismatch_reports_address_values_and_ulp(tmp_path):
    source = GOOD + ".check Y\n    .float 3.718282, 8.389056, 21.085537, 55.5\n"
    result = run([tool("npu-sim"), write(tmp_path, "c.npuasm", source)])
    assert result.returncode == 1
    assert "mismatch at 0x1000100" in result.stderr
    assert "checks: 0 passed, 1 failed" in result.stdout


def test_ulp_tolerant_check_passes(tmp_path):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    expected = ", ".join(repr(float(v)) for v in (np.exp(x.astype(np.float64)) + 1).astype(np.float32))
    source = GOOD + f".check Y, ulp=4\n    .float {expected}\n"
    result = run([tool("npu-sim"), write(tmp_path, "u.npuasm", source)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks: 1 passed, 0 failed" in result.stdout


def test_load_and_dump_npy(tmp_path):
    data = np.arange(4, dtype=np.float32)
    np.save(tmp_path / "x.npy", data)
    out = tmp_path / "y.npy"
    result = run([tool("npu-sim"), write(tmp_path, "k.npuasm", GOOD),
                  "--load", f"{tmp_path / 'x.npy'}@0x10000000", "--dump", f"0x10001000:16:{out}"])
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(out), np.exp(data) + 1, rtol=1e-6)


@pytest.mark.parametrize("args, code, message", [
    (["--backend", "quantum"], 2, "unknown backend 'quantum' (available: "),
    (["--mode", "fast"], 2, "unknown mode 'fast'"),
    (["--dump", "0x10:4"], 2, "--dump expects ADDR:LEN:FILE"),
    (["--region", "weights=zero:4K"], 3, "'zero' is not a number"),
    (["--load", "/nonexistent.bin@0x10"], 3, "/nonexistent.bin: cannot open"),
])
def test_bad_command_lines(tmp_path, args, code, message):
    result = run([tool("npu-sim"), write(tmp_path, "k.npuasm", GOOD), *args])
    assert result.returncode == code, result.stderr
    assert message in result.stderr


def test_assembly_errors_are_reported_with_location(tmp_path):
    result = run([tool("npu-sim"), write(tmp_path, "bad.npuasm", ".text\n    exq 1, 2, 3\n")])
    assert result.returncode == 3
    assert "bad.npuasm:2:5: error:" in result.stderr


def test_perf_mode_counts_cycles_without_computing(tmp_path):
    both = run([tool("npu-sim"), write(tmp_path, "k.npuasm", GOOD), "--mode", "both"])
    perf = run([tool("npu-sim"), tmp_path / "k.npuasm", "--mode", "perf"])
    cycles = lambda out: int(out.split(" cycles")[0].rsplit(" ", 1)[1])
    assert cycles(both.stdout) == cycles(perf.stdout) > 0


def test_memory_config_json(tmp_path):
    config = write(tmp_path, "map.json", json.dumps({"regions": [
        {"name": "activations", "base": "0x10000000", "size": "64K"},
        {"name": "ring", "base": "0x20000000", "size": "64K"},
        {"name": "staging", "base": "0x40000000", "size": "64K"}]}))
    ok = run([tool("npu-sim"), write(tmp_path, "k.npuasm", GOOD), "--memory-config", config])
    assert ok.returncode == 0, ok.stderr
    broken = write(tmp_path, "broken.json", '{"regions": [{"name": "x"}]}')
    bad = run([tool("npu-sim"), tmp_path / "k.npuasm", "--memory-config", broken])
    assert bad.returncode == 3 and "broken.json" in bad.stderr
