"""npu-randgen and npu-regress as programs: reproducible streams that
re-assemble, clear errors for bad options, the regression's reports (JSON
summary, JUnit XML, coverage), its failure report with reproducer lines and
minimised sources, and a Dask cluster that loses a worker mid-run without
losing or double-counting a seed.

NPU_BUILD_DIR (default build) locates the build.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, run, tool

DIVERGENCES = REPO / "tests" / "verify" / "divergences"
# Every divergence npu-regress found, minimised (docs/verification.md,
# "Divergences and findings"): each must now run alike on the ISS and the RTL.


def randgen(*args):
    return run([tool("npu-randgen"), *args])


def regress(*args, **kwargs):
    return run([sys.executable, tool("npu-regress"), *args], **kwargs)


def test_same_seed_same_stream_and_the_source_reassembles(tmp_path):
    a, b, c = tmp_path / "a.npubin", tmp_path / "b.npubin", tmp_path / "c.npubin"
    source = tmp_path / "a.npuasm"
    for out, extra in ((a, ["--asm", source]), (b, [])):
        r = randgen("--seed", 11, "--packets", 30, "--fault-percent", 10, "-o", out, *extra)
        assert r.returncode == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    r = randgen("--seed", 12, "--packets", 30, "--fault-percent", 10, "-o", c)
    assert r.returncode == 0 and a.read_bytes() != c.read_bytes()
    text = source.read_text()
    assert '.meta "generator-arguments", "--seed 11 --packets 30 --fault-percent 10"' in text
    r = run([tool("npu-as"), source, "-o", tmp_path / "re.npubin"])
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "re.npubin").read_bytes() == a.read_bytes()


def test_count_writes_one_stream_per_seed(tmp_path):
    r = randgen("--seed", 5, "--count", 3, "--packets", 8, "--out-dir", tmp_path / "streams")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "streams").iterdir())
    assert names == [f"seed-{s}.{ext}" for s in (5, 6, 7) for ext in ("npuasm", "npubin")]


@pytest.mark.parametrize("args, exit_code, message", [
    (["--faults", "timeout"], 2, "--faults: unknown fault class 'timeout' (valid: unmapped, permission"),
    (["--opcodes", "matmul,frobnicate"], 2, "--opcodes: unknown mnemonic 'frobnicate'"),
    (["--fault-percent", "101"], 2, "--fault-percent = 101 is above 100"),
    (["--packets", "0"], 2, "--packets must be at least 1"),
    (["--count", "3"], 2, "--count 3 needs --out-dir DIR"),
    ([], 2, "give exactly one of -o FILE"),
])
def test_bad_options_are_usage_errors(tmp_path, args, exit_code, message):
    out = ["-o", tmp_path / "s.npubin"] if "-o" not in args and args != [] else []
    r = randgen(*args, *out)
    assert r.returncode == exit_code
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "s.npubin").exists()


def test_regress_rejects_bad_generator_options_before_running(tmp_path):
    r = regress("--seeds", 2, "--faults", "overlap,timeout", "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "npu-regress: error: --faults: unknown fault class 'timeout'" in r.stderr
    assert not (tmp_path / "o").exists()


def test_an_unwritable_output_is_an_error_naming_it(tmp_path):
    target = tmp_path / "missing-dir" / "s.npubin"
    r = randgen("--seed", 1, "-o", target)
    assert r.returncode == 1
    assert str(target) in r.stderr


def check_reports(out, seeds):
    summary = json.loads((out / "summary.json").read_text())
    junit = ET.parse(out / "junit.xml").getroot()
    names = [case.get("name") for case in junit.iter("testcase")]
    assert sorted(names) == sorted(f"seed-{s}" for s in seeds)
    assert summary["seeds"] == len(seeds)
    coverage = (out / "coverage.md").read_text()
    assert f"{summary['coverage']['hit']} of {summary['coverage']['bins']} bins hit" in coverage
    return summary, junit


def test_local_regression_writes_summary_junit_and_coverage(tmp_path):
    out = tmp_path / "out"
    r = regress("--seeds", 4, "--first-seed", 30, "--packets", 12, "--fault-percent", 10,
                "--faults", "misaligned,reserved-bits,unknown-opcode,invalid-operand",
                "--jobs", 2, "--chunk", 1, "--out", out, "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "npu-regress: 4 passed, 0 failed of 4 seeds" in r.stdout
    summary, junit = check_reports(out, range(30, 34))
    assert summary["passed"] == 4 and summary["failures"] == []
    assert summary["packets_executed"] == 48
    assert summary["packets_per_second"] > 0 and summary["streams_per_hour"] > 0
    assert summary["engine"] == "local x2" and summary["backend"] == "cosim"
    assert 0 < summary["coverage"]["percent"] < 100
    # Only the injected fault classes count; the others are excluded.
    assert summary["coverage"]["excluded_fault_bins"] > 0
    assert junit.get("failures") == "0" and junit.get("errors") == "0"


def test_the_iss_against_the_reference_model(tmp_path):
    """--backend reference: every packet on the ISS and on the slow reference model of the ISA,
    every written range compared; the ISS's fast paths (GEMM kernel, host micro-programs) agree."""
    out = tmp_path / "out"
    # 60 packets a seed: enough for more than 75 % of the bins of every
    # instruction (the compares', the bitwise family's and the typed
    # matmul's among them; 40 reached 74.9 % of 3,735 bins) to be hit.
    r = regress("--backend", "reference", "--seeds", 40, "--packets", 60, "--fault-percent", 10,
                "--fail-on-unexpected", "--out", out, "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    summary, _ = check_reports(out, range(40))
    assert summary["backend"] == "reference" and summary["passed"] == 40
    assert summary["packets_executed"] == 2400 and sum(summary["faults"].values()) > 50
    assert summary["coverage"]["percent"] > 75


FAKE_WORKER = textwrap.dedent('''\
    #!/usr/bin/env python3
    # Stands in for npu-regress-worker: seed 3 "diverges", the rest pass.
    import json, sys
    args = sys.argv[1:]
    if "--list-bins" in args:
        print(json.dumps({"digest": "1", "fault_classes": ["overlap"], "bins": [
            {"name": "mul/executed", "group": "mul", "fault": ""},
            {"name": "mul/fault/overlap", "group": "mul", "fault": "overlap"}]}))
        sys.exit(0)
    first, end = map(int, args[args.index("--seeds") + 1].split(":"))
    for seed in range(first, end):
        r = {"seed": seed, "status": "pass", "packets": 5, "executed": 5, "faults": {}, "cycles": 10,
             "bins": [0], "unexpected": [], "seconds": 0.01}
        if seed == 12:
            r["unexpected"] = ["packet 1 (mul): meant to complete, both models faulted overlap"]
        if seed == 3:
            r["status"] = "diverged"
            r["divergence"] = {"packet": 2, "signature": "mul: memory", "diagnostic": "memory differs at 0x10",
                               "reproducer": "npu-regress --seed 3 --packets 5 --fault-percent 0",
                               "minimised": {"packets": 1, "data_bytes": 8, "runs": 12,
                                             "npuasm": "# minimised\\n.text\\n    halt\\n"}}
        print(json.dumps(r))
''')


def fake_worker(tmp_path, body=FAKE_WORKER):
    path = tmp_path / "fake-worker"
    path.write_text(body)
    path.chmod(0o755)
    return path


def test_a_divergence_fails_with_a_reproducer_line_and_a_minimised_source(tmp_path):
    out = tmp_path / "out"
    r = regress("--seeds", 5, "--worker", fake_worker(tmp_path), "--out", out, "--quiet")
    assert r.returncode == 1
    assert "npu-regress: 4 passed, 1 failed of 5 seeds" in r.stdout
    assert "FAIL seed 3: mul: memory\n  reproduce: npu-regress --seed 3 --packets 5 --fault-percent 0" in r.stdout
    minimised = out / "seed-3.min.npuasm"
    assert f"minimised: {minimised} (1 packets, 8 data bytes): npu-regress --replay {minimised}" in r.stdout
    assert minimised.read_text() == "# minimised\n.text\n    halt\n"
    summary, junit = check_reports(out, range(5))
    assert summary["diverged"] == 1 and summary["failures"][0]["signature"] == "mul: memory"
    failures = [case for case in junit.iter("testcase") if case.find("failure") is not None]
    assert [case.get("name") for case in failures] == ["seed-3"]
    assert "reproduce: npu-regress --seed 3" in failures[0].find("failure").text


def test_a_crashing_worker_is_an_error_not_a_pass(tmp_path):
    crashing = FAKE_WORKER.replace("for seed in range(first, end):", "sys.exit(139)\nfor seed in []:")
    r = regress("--seeds", 2, "--worker", fake_worker(tmp_path, crashing), "--out", tmp_path / "o", "--quiet")
    assert r.returncode == 3
    assert "seeds 0..1: worker exited with 139, 0 of 2 results" in r.stderr


def test_seeds_that_finished_before_a_worker_failure_are_reported(tmp_path):
    """A long run is not lost to one chunk whose worker cannot run: the reports cover what ran."""
    failing = FAKE_WORKER.replace("for seed in range(first, end):",
                                  "if first >= 4:\n    sys.exit(127)\nfor seed in range(first, end):")
    out = tmp_path / "o"
    r = regress("--seeds", 8, "--chunk", 4, "--jobs", 1, "--worker", fake_worker(tmp_path, failing),
                "--out", out, "--quiet")
    assert r.returncode == 3
    assert "4 of 8 seeds did not run (the reports cover the 4 that did)" in r.stderr
    summary, _ = check_reports(out, range(4))
    assert summary["incomplete"]["seeds_missing"] == 4
    assert "worker exited with 127" in summary["incomplete"]["reason"]
    assert summary["diverged"] == 1  # seed 3 of the fake worker


def test_coverage_below_the_minimum_fails(tmp_path):
    r = regress("--seeds", 2, "--worker", fake_worker(tmp_path), "--first-seed", 10, "--min-coverage", 100,
                "--out", tmp_path / "o", "--quiet")
    assert r.returncode == 0
    assert "coverage 100.00 % (1/1 bins)" in r.stdout  # the fault bin is excluded: no faults injected
    r = regress("--seeds", 2, "--worker", fake_worker(tmp_path), "--first-seed", 10, "--fault-percent", 5,
                "--min-coverage", 100, "--out", tmp_path / "o", "--quiet")
    assert r.returncode == 1
    assert "coverage 50.00 % is below --min-coverage 100" in r.stdout


def test_outcomes_the_generator_did_not_intend_are_reported_and_can_fail(tmp_path):
    args = ["--seeds", 2, "--first-seed", 11, "--worker", fake_worker(tmp_path), "--out", tmp_path / "o", "--quiet"]
    r = regress(*args)
    assert r.returncode == 0
    assert "1 packets had an outcome the generator did not intend" in r.stdout
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["unexpected_outcomes"] == ["seed 12: packet 1 (mul): meant to complete, both models faulted overlap"]
    r = regress(*args, "--fail-on-unexpected")
    assert r.returncode == 1
    assert "UNEXPECTED seed 12: packet 1 (mul): meant to complete" in r.stdout


def test_cluster_run_survives_a_worker_killed_mid_run(tmp_path, monkeypatch):
    # Dask's lock files and worker spaces go under tmp_path, in this process
    # and in npu-regress's.
    monkeypatch.setenv("DASK_TEMPORARY_DIRECTORY", str(tmp_path / "dask"))
    distributed = pytest.importorskip("distributed")
    import dask
    monkeypatch.setattr(dask.config, "config", dask.config.config.copy())
    dask.config.set({"temporary-directory": str(tmp_path / "dask")})
    seeds, first = 12, 50
    args = ["--seeds", seeds, "--first-seed", first, "--packets", 30, "--chunk", 1, "--quiet"]
    local = regress(*args, "--jobs", 2, "--out", tmp_path / "local")
    assert local.returncode == 0, local.stdout + local.stderr

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        proc = subprocess.Popen([sys.executable, str(tool("npu-regress")), *map(str, args),
                                 "--cluster", cluster.scheduler_address, "--out", str(tmp_path / "cluster")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Kill a worker while it runs a task.
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and proc.poll() is None:
            busy = {w: tasks for w, tasks in client.processing().items() if tasks}
            if busy:
                victim = sorted(busy)[0]
                lost_tasks = busy[victim]
                os.kill(pids[victim], signal.SIGKILL)
            time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=600)
    assert victim is not None, "no task was ever seen running"
    assert lost_tasks
    assert proc.returncode == 0, stdout + stderr
    cluster_summary, _ = check_reports(tmp_path / "cluster", range(first, first + seeds))
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text())
    # Nothing lost, nothing counted twice: the same totals as the local run.
    for key in ("seeds", "passed", "packets_executed", "device_cycles", "faults"):
        assert cluster_summary[key] == local_summary[key], key
    assert cluster_summary["coverage"]["hit"] == local_summary["coverage"]["hit"]
    assert cluster_summary["engine"].startswith("dask tcp://")


@pytest.mark.parametrize("name", sorted(p.name for p in DIVERGENCES.glob("*.npuasm")))
def test_found_divergences_replay_without_divergence(name):
    r = regress("--replay", DIVERGENCES / name)
    assert r.returncode == 0, r.stdout + r.stderr
