"""npu-sim as a user meets it: exit codes, fault reports, check mismatches,
loads and dumps, statistics and timelines, address-map options."""
import json
import os
import pathlib
import pty
import re
import signal
import subprocess
import time

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


# ------------------------------------------------------------ hostile inputs

@pytest.fixture
def program(tmp_path):
    source = write(tmp_path, "k.npuasm", GOOD)
    container = tmp_path / "k.npubin"
    result = run([tool("npu-as"), source, "-o", container])
    assert result.returncode == 0, result.stderr
    return container


def test_programs_are_recognised_by_content(tmp_path, program):
    data = program.read_bytes()
    flipped = bytearray(data)
    flipped[3] ^= 0x20
    cases = {
        "empty.npubin": (b"", "empty.npubin: offset 0: empty file: not an .npubin file"),
        "flipped.bin": (bytes(flipped), "flipped.bin: offset 0: bad magic: not an .npubin file"),
        "flipped.npubin": (bytes(flipped), "offset 0: bad magic: not an .npubin file"),
        "text.npubin": (b"    halt\n", "text.npubin: offset 0: bad magic: not an .npubin file"),
        "short.npubin": (data[:8], "offset 0: file has 8 bytes, less than the 64-byte header"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        result = run([tool("npu-sim"), path])
        assert result.returncode == 3, (name, result.stderr)
        assert message in result.stderr, (name, result.stderr)
    # The content decides, not the name: a container named .npuasm runs.
    renamed = tmp_path / "renamed.npuasm"
    renamed.write_bytes(data)
    assert run([tool("npu-sim"), renamed]).returncode == 0


@pytest.mark.parametrize("make, message", [
    (lambda p: np.save(p, np.arange(4, dtype=np.float32)) or p.write_bytes(p.read_bytes()[:-3]),
     "the header's shape (4,) and dtype need 16 bytes of data, the file has 13 (truncated)"),
    (lambda p: np.save(p, np.arange(4, dtype=np.float32)) or p.write_bytes(p.read_bytes() + b"xy"),
     "need 16 bytes of data, the file has 18 (trailing bytes)"),
    (lambda p: np.save(p, np.array([1, "a", None], dtype=object), allow_pickle=True),
     "unsupported .npy dtype '|O' (numbers only"),
    (lambda p: np.save(p, np.array(["ab", "cd"])), "unsupported .npy dtype '<U2'"),
    (lambda p: p.mkdir(), "is a directory, not a file"),
])
def test_bad_npy_loads_are_precise_errors(tmp_path, program, make, message):
    path = tmp_path / "x.npy"
    make(path)
    result = run([tool("npu-sim"), program, "--load", f"{path}@0x10000000"])
    assert result.returncode == 3, result.stderr
    assert message in result.stderr


def test_loads_are_bounded_by_the_memory_they_go_to(tmp_path, program):
    small = ["--region", "activations=0x10000000:64K"]
    result = run([tool("npu-sim"), program, *small, "--load", "/dev/zero@0x10000000"])
    assert result.returncode == 3
    assert ("/dev/zero: exceeds the memory mapped from 0x10000000 (64 KiB); does this stream "
            "ever end?") in result.stderr
    big = write(tmp_path, "big.bin", "x" * (64 * 1024 + 1))
    result = run([tool("npu-sim"), program, *small, "--load", f"{big}@0x10000000"])
    assert result.returncode == 3
    assert "65537 bytes exceed the memory mapped from 0x10000000 (64 KiB)" in result.stderr
    result = run([tool("npu-sim"), program, "--load", f"{big}@0x50000000"])
    assert result.returncode == 3 and "0x50000000 is not in a memory region" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--max-packets", "-1"], "--max-packets: '-1' is not a number"),
    (["--max-packets", "99999999999999999999999"], "does not fit in 64 bits"),
    (["--max-cycles", "lots"], "--max-cycles: 'lots' is not a number"),
    (["--vcd-start", "-5"], "--vcd-start: '-5' is not a number"),
    (["--dump=-16:4:out.bin"], "address: '-16' is not a number"),
    (["--dump", "0x10000000:16:out.bin:i32"], "a DTYPE applies to .npy files only"),
    (["--dump", "0x10000000:6:out.npy:i32"], "6 bytes are not a whole number of i32 elements"),
    (["--dump", "0x10000000:16:out.npy:f16"], "unknown dump dtype 'f16'"),
    (["--load", "x.bin@-1"], "address: '-1' is not a number"),
])
def test_bad_numbers_and_dump_types_are_usage_errors(tmp_path, program, args, message):
    result = run([tool("npu-sim"), program, *args], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "out.bin").exists() and not (tmp_path / "out.npy").exists()


def test_dumps_outside_the_map_fail_before_the_run(tmp_path, program):
    result = run([tool("npu-sim"), program, "--dump", f"0x10000000:{1 << 40}:{tmp_path / 'o.bin'}"])
    assert result.returncode == 3
    assert "is mapped memory" in result.stderr and "packets on iss" not in result.stdout


def test_outputs_never_overwrite_inputs_or_devices(tmp_path, program):
    before = program.read_bytes()
    npy = tmp_path / "x.npy"
    np.save(npy, np.arange(4, dtype=np.float32))
    for args, message in [
        (["--dump", f"0x10000000:16:{program}"], "a --dump file is also the program"),
        (["--stats-json", program], "the --stats-json file is also the program"),
        (["--load", f"{npy}@0x10000000", "--dump", f"0x10000000:16:{npy}"],
         "a --dump file is also a --load file"),
        (["--stats-json", tmp_path / "s.json", "--trace-json", tmp_path / "s.json"],
         "the --trace-json file is also the --stats-json file"),
        (["--stats-json", tmp_path / "none" / "s.json"], "cannot be created: directory"),
        (["--stats-json", tmp_path], "the --stats-json file is a directory"),
    ]:
        result = run([tool("npu-sim"), program, *args])
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "packets on iss" not in result.stdout, args
    assert program.read_bytes() == before
    for option in ("--stats-json", "--trace-json"):
        result = run([tool("npu-sim"), program, option, "/dev/full"])
        assert result.returncode == 4, result.stderr
        assert "/dev/full: write error: No space left on device" in result.stderr
    result = run([tool("npu-sim"), program, "--dump", "0x10000000:16:/dev/full"])
    assert result.returncode == 4 and "/dev/full: write error" in result.stderr
    assert pathlib.Path("/dev/full").is_char_device()
    assert run([tool("npu-sim"), program, "--dump", "0x10000000:16:/dev/null"]).returncode == 0


def test_deeply_nested_memory_config_is_a_located_error(tmp_path, program):
    config = write(tmp_path, "deep.json", '{"regions": ' + "[" * 100000 + "]" * 100000 + "}")
    result = run([tool("npu-sim"), program, "--memory-config", config])
    assert result.returncode == 3, result.stderr
    assert "deep.json:1:76: invalid JSON: nested more than 64 levels deep" in result.stderr
    result = run([tool("npu-sim"), program, "--memory-config", "/dev/zero"])
    assert result.returncode == 3
    assert "exceeds the size limit of a memory configuration (1 MiB)" in result.stderr


# A packet of billions of cycles: 2^38 multiply-adds, seconds of host work
# (A in the weights, B in the staging region, C in the activations).
LONG = """
    nop
    matmul 0x10000000, 0x0, 0x100000000, 4096, 16384, 4096, 0, 0, 0
    halt
"""


def test_max_cycles_refuses_a_packet_before_it_starts(tmp_path):
    # The cycle model's charge per packet (nop, matmul, halt), from a perf run.
    source = write(tmp_path, "long.npuasm", LONG)
    model = tmp_path / "model.json"
    assert run([tool("npu-sim"), source, "--mode", "perf", "--stats-json", model]).returncode == 0
    nop, matmul, halt = (r["cycles"] for r in json.loads(model.read_text())["packet_records"])
    assert matmul > 1000
    stats = tmp_path / "s.json"
    result = run([tool("npu-sim"), source, "--max-cycles", "1000", "--mode", "both", "--stats-json", stats])
    assert result.returncode == 1, result.stderr
    assert (f"packet 1 (matmul 0x10000000, 0x0, 0x100000000, 4096, 16384, 4096, 0, 0, 0) would "
            f"take {matmul} cycles, beyond the --max-cycles budget of 1000 ({nop} used by the "
            "packets before it); it was not started") in result.stderr
    assert f"1 packets on iss, stopped at cycle budget, {nop} cycles" in result.stdout
    assert json.loads(stats.read_text())["packets"] == 1
    # The whole stream's budget, and one cycle less.
    total = nop + matmul + halt
    perf = run([tool("npu-sim"), source, "--mode", "perf", "--max-cycles", str(total)])
    assert perf.returncode == 0 and f"stopped at halt, {total} cycles" in perf.stdout
    over = run([tool("npu-sim"), source, "--mode", "perf", "--max-cycles", str(total - 1)])
    assert over.returncode == 1 and f"packet 2 (halt) would take {halt} cycles" in over.stderr


def test_an_interrupt_during_a_long_packet_names_it(tmp_path):
    # One GEMM thread: the packet (5.5e11 flops) outlasts the second the
    # tool waits after the signal even on a fast host.
    proc = subprocess.Popen([str(tool("npu-sim")), write(tmp_path, "long.npuasm", LONG),
                             "--stats-json", tmp_path / "s.json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NPU_ISS_THREADS": "1"})
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert ("npu-sim: interrupted by SIGINT during packet 1 of 3 (matmul 0x10000000, 0x0, "
            "0x100000000, 4096, 16384, 4096, 0, 0, 0); no output files written") in err
    assert not (tmp_path / "s.json").exists()


def test_an_interrupt_stops_between_packets_with_progress_on_a_terminal(tmp_path):
    # Thousands of short packets: the run stops between two of them.
    source = ".rept 50000\n    matmul 0x10000000, 0x14000000, 0x18000000, 256, 256, 256, 0, 0, 0\n" \
             ".endr\n    halt\n"
    main, secondary = pty.openpty()
    stats = tmp_path / "s.json"
    proc = subprocess.Popen([str(tool("npu-sim")), write(tmp_path, "many.npuasm", source),
                             "--stats-json", stats], stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    time.sleep(3.5)
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate(timeout=60)[0].decode()
    err = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(main)
    err = err.decode()
    assert proc.returncode == 143, err
    assert "\rnpu-sim: packet " in err and " of 50001, " in err and "cycles predicted" in err
    match = re.search(r"interrupted by SIGTERM after (\d+) of 50001 packets; no dumps written", err)
    assert match, err
    assert f"many.npuasm: {match[1]} packets on iss, stopped at SIGTERM" in out
    assert json.loads(stats.read_text())["packets"] == int(match[1])


# ------------------------------------------------------------ waveforms

def test_fst_vcd_and_gtkwave_save_file_of_an_example(tmp_path):
    example = REPO / "examples" / "softmax.npuasm"
    scratch = tmp_path / "tmp"  # the private FST directory goes here and must go away
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    fst, gtkw = tmp_path / "run.fst", tmp_path / "run.gtkw"
    result = run([tool("npu-sim"), "--backend", "rtl", "--fst", fst, "--gtkw", gtkw, example], env=env)
    assert result.returncode == 0, result.stderr
    data = fst.read_bytes()
    assert data[0] == 0 and len(data) > 1000  # an FST starts with its header block (type 0)
    save = gtkw.read_text()
    assert f'[dumpfile] "{fst}"\n' in save
    assert save.index("-Decoded\n") < save.index("-Command processor\n") < save.index("-Memory port\n")
    assert re.search(r"\n@820\nnpu_top\.npu_top\.u_cmd\.dbg_mnemonic\[\d+:0\]\n", save)

    vcd = tmp_path / "run.vcd"
    result = run([tool("npu-sim"), "--backend", "rtl", "--vcd", vcd, "--vcd-start", "10",
                  "--vcd-stop", "20", example], env=env)
    assert result.returncode == 0, result.stderr
    text = vcd.read_text()
    assert re.search(r"\$var \w+ \d+ \S+ dbg_mnemonic \[\d+:0\] \$end", text), text[:2000]
    times = [int(line[1:]) for line in text.splitlines() if line.startswith("#")]
    assert times[0] == 20 and times[-1] == 39
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["--vcd", "a.vcd", "--fst", "a.fst"], "--vcd and --fst: one waveform per run"),
    (["--gtkw", "a.gtkw"], "--gtkw needs --fst or --vcd"),
    (["--fst", "k.npubin"], "the --fst file is also the program"),
    (["--fst", "a.fst", "--gtkw", "a.fst"], "the --gtkw file is also the --fst file"),
])
def test_waveform_option_errors(tmp_path, program, args, message):
    result = run([tool("npu-sim"), "--backend", "rtl", program, *args], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "a.fst").exists() and not (tmp_path / "a.gtkw").exists()
