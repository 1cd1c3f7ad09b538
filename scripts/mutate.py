#!/usr/bin/env python3
"""Mutation score of the co-verification: seeded, mechanically generated
single-point mutants of the RTL (SystemVerilog) or of the ISS (C++), each
built in a scratch copy of the tree and run through the constrained-random
regression; a mutant is killed when the regression fails (a divergence, a
worker error or an outcome the generator did not intend).

Mutation operators (one edit per mutant, at a seeded random site):
  operator   + <-> -, & <-> |, ^ -> &, == <-> !=, < <-> <=, > <-> >=, && <-> ||
  constant   an integer literal n -> n+1 or n-1 (sized SystemVerilog literals keep their width)
  condition  if (c) -> if (!(c))
  state      state <= S_A -> state <= S_B (another state of the same machine; RTL only)

A mutant that the regression does not kill then meets the cycle-model
gates (an ISS mutant in a second scratch build without sanitizers that
builds the RTL once; an RTL mutant in its own build, where it changes the
RTL the ISS's cycle model is compared with): first the exact gate
(bench/cycle_accuracy.py --exact: the examples, --cycle-random generated
streams and the directed streams of bench/cycle_directed/ at zero wait
states, every packet of the classes the model times to the cycle within
its class's tolerance, every packet's bytes equal), then the accuracy gate
(--check: the examples and the generated streams under three memory
configurations, each op class within 5 % of the RTL, each stream within
2 %). Both run in co-simulation against the RTL (values compared bit for
bit). The ISS's performance model (cycles, bytes, cycle budgets) has no
other check, and an RTL mutant that changes only when the RTL does what it
does (a packed read, a skipped prefetch) changes nothing else.

Targets: rtl (the SystemVerilog, in co-simulation against the ISS), iss
(the code computing the ISS's values and faults, against the reference
model) and iss-timing (its cycle model, which only the cycle gates check).
The two ISS targets share their scratch builds: run them one after the
other in one work directory.

Usage:
  scripts/mutate.py --target iss --count 20 --seed 1 --work /tmp/npu-mutants [--seeds 40]
Writes WORK/mutants-<target>.json (one entry per mutant: file, line, edit,
status killed/survived/stillborn, the killing seed) and prints the score.
Never touches the source tree it is run from: every edit is made in
WORK/src, a copy, and reverted after the mutant ran.
"""
import argparse
import json
import os
import random
import re
import shutil
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TARGETS = {
    # The code the ISS runs (the reference soft-float of simulator/arith and
    # the reference model back the checks, not the ISS's execution). Its
    # mutants run against the reference model of the ISA, in a build with
    # AddressSanitizer and UBSan (no RTL needed there): a mutant that reads
    # or writes past an array dies at once instead of hiding in the stack
    # layout.
    "iss": {"globs": ["simulator/lib/ops/*.cpp", "simulator/lib/vector_ops.cpp", "simulator/lib/context.cpp",
                      "simulator/lib/iss.cpp", "simulator/kernels/gemm.cpp",
                      "simulator/arith/lib/host_kernels.cpp"],
            "comment": "//", "backend": "reference",
            "configure": ["-DNPU_SANITIZE=ON"], "compilers": {"CC": "clang-16", "CXX": "clang++-16"},
            "cycle_build": "separate", "build": "iss"},
    # The ISS's cycle model: what it predicts only the cycle gates check (the regression compares values and
    # faults), so its score is measured apart from the values'.
    "iss-timing": {"globs": ["simulator/lib/timing.cpp"],
                   "comment": "//", "backend": "reference",
                   "configure": ["-DNPU_SANITIZE=ON"], "compilers": {"CC": "clang-16", "CXX": "clang++-16"},
                   "cycle_build": "separate", "build": "iss"},
    # The RTL's mutants run in co-simulation against the ISS; the cycle gates run in the same build.
    "rtl": {"globs": ["rtl/*.sv", "rtl/fpu/*.sv"], "comment": "//", "backend": "cosim",
            "configure": [], "compilers": {}, "cycle_build": "same", "build": "rtl"},
}

BINARY_SWAPS = [(" + ", " - "), (" - ", " + "), (" & ", " | "), (" | ", " & "), (" ^ ", " & "),
                (" == ", " != "), (" != ", " == "), (" < ", " <= "), (" <= ", " < "), (" > ", " >= "),
                (" >= ", " > "), (" && ", " || "), (" || ", " && ")]


def code_part(line, comment):
    at = line.find(comment)
    return line if at < 0 else line[:at]


def in_string(code, at):
    """True when position `at` of the line is inside a string literal (an edit there only changes a message)."""
    return code[:at].count('"') % 2 == 1


def sites(path, text, target):
    """Every (line index, description, new line) single edit of the file."""
    out = []
    lines = text.split("\n")
    states = sorted(set(re.findall(r"\bS_[A-Z0-9_]+\b", text))) if target == "rtl" else []
    for i, line in enumerate(lines):
        code = code_part(line, TARGETS[target]["comment"])
        stripped = code.strip()
        if not stripped or stripped.startswith(("#", "import", "include", "`", "localparam", "parameter",
                                                "typedef", "input", "output", "module", "logic [", "wire [")):
            continue
        for old, new in BINARY_SWAPS:
            start = 0
            while (at := code.find(old, start)) >= 0:
                # In SystemVerilog "<=" after a name at statement start is a nonblocking assignment.
                if target == "rtl" and old.strip() in ("<=", "<") and re.match(r"^\s*[\w\[\]\.:]+\s*$", code[:at]):
                    start = at + 1
                    continue
                if not in_string(code, at):
                    out.append((i, f"'{old.strip()}' -> '{new.strip()}'", line[:at] + new + line[at + len(old):]))
                start = at + 1
        for m in re.finditer(r"(?<![\w'.])(\d+)(?![\w.'])", code):
            n = int(m.group(1))
            if n > 4096 or in_string(code, m.start()):
                continue
            for d in (1, -1):
                if n + d >= 0:
                    out.append((i, f"constant {n} -> {n + d}", line[:m.start()] + str(n + d) + line[m.end():]))
        for m in re.finditer(r"(\d+)'([dhb])([0-9a-fA-F_]+)", code):
            base = {"d": 10, "h": 16, "b": 2}[m.group(2)]
            n = int(m.group(3).replace("_", ""), base)
            width = int(m.group(1))
            new = (n + 1) % (1 << width)
            digits = {10: str(new), 16: format(new, "x"), 2: format(new, "b")}[base]
            out.append((i, f"constant {m.group(0)} -> {m.group(1)}'{m.group(2)}{digits}",
                        line[:m.start()] + f"{m.group(1)}'{m.group(2)}{digits}" + line[m.end():]))
        m = re.search(r"\bif \((.*)\)", code)
        if m and code.count("(") == code.count(")"):
            out.append((i, "condition negated", line[:m.start(1)] + "!(" + m.group(1) + ")" + line[m.end(1):]))
        m = re.search(r"\bstate <= (S_[A-Z0-9_]+)", code)
        if m and len(states) > 1:
            for other in states:
                if other != m.group(1):
                    out.append((i, f"transition {m.group(1)} -> {other}",
                                line[:m.start(1)] + other + line[m.end(1):]))
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def sync_tree(work, target):
    """WORK/src as a copy of the tree. Files whose contents changed get a new
    modification time (so the scratch build recompiles them); the mutation
    targets always do, since an interrupted run may have left a mutant's
    object file behind."""
    src = work / "src"
    ignore = {".git", "build", "__pycache__"}
    for path in REPO.rglob("*"):
        rel = path.relative_to(REPO)
        if any(part in ignore or part.startswith("build-") for part in rel.parts) or not path.is_file():
            continue
        dst = src / rel
        data = path.read_bytes()
        if not dst.exists() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
            shutil.copymode(path, dst)
    for glob in TARGETS[target]["globs"]:
        for path in src.glob(glob):
            path.touch()
    return src


def regression(worker, seeds, args, timeout, env=None):
    """Runs the seeds in one worker until the first failure: (killing seed, why), or (None, "")
    when every seed passes. A worker that crashes (-1) or outlives `timeout` (-1) is detected."""
    cmd = [str(worker), "--seeds", f"0:{seeds}", "--no-minimise", "--packets", "30", *args]
    lines = queue.Queue()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)],
                                  daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                proc.kill()  # npu-regress's task timeout would report this as an error
                return -1, f"timeout after {seen} seeds"
            if line is None:
                break
            r = json.loads(line)
            seen += 1
            if r["status"] != "pass" or r.get("unexpected"):
                proc.kill()
                return r["seed"], r.get("divergence", {}).get("signature") or r.get("error") or r["unexpected"][0]
        proc.wait()
        if proc.returncode != 0 or seen < seeds:
            return -1, f"worker exited {proc.returncode}: {proc.stderr.read()[-300:]}"
    return None, ""


CYCLE_TARGETS = ["npu-sim", "npu-randgen", "npu-isa"]


def gate_run(cmd, timeout, env):
    """(exit code or None on a timeout, output) of one bench/cycle_accuracy.py run."""
    # Its own process group: a livelocked mutant's npu-sim processes go with the gate on a timeout.
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          start_new_session=True) as proc:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return None, ""
    return proc.returncode, output


def cycle_gate(build, random_streams, timeout, env, measured):
    """(failed, why) of the cycle-model gates on the build's npu-sim, in co-simulation against the
    RTL: the exact gate (bench/cycle_accuracy.py --exact: examples, random and directed streams at
    zero wait states), then the accuracy gate (--check: examples and random streams under three
    memory configurations). `measured` gets what the runs that complete measured: the largest
    |error| in cycles of a class the exact gate holds, and the worst per-class and per-stream errors
    (%), so that a mutant the gates let through shows how far it moved the model."""
    bench = [sys.executable, str(REPO / "bench" / "cycle_accuracy.py"), "--build-dir", str(build),
             "--random", str(random_streams)]
    gates = [("exact gate", ["--directed", "--config", "20:32:0", "--config", "37:8:0", "--exact"]),
             ("cycle gate", ["--check"])]
    deadline = time.monotonic() + timeout
    for name, options in gates:
        report = build / "cycle-gate.json"
        report.unlink(missing_ok=True)
        code, output = gate_run([*bench, *options, "--json", str(report)],
                                max(deadline - time.monotonic(), 1), env)
        if code is None:
            return True, f"{name}: timeout after {timeout:.0f} s"
        if report.is_file():
            result = json.loads(report.read_text())
            if "--exact" in options:
                measured["worst_exact_error_cycles"] = max(
                    (row["max_error"] for rows in result["exactness"].values() for row in rows.values()
                     if row["tolerance"] is not None), default=0)
            else:
                measured["worst_class_error"] = round(100 * max(
                    c["mean_error"] for op, c in result["classes"].items() if "data-dependent" not in op), 2)
                measured["worst_stream_error"] = round(100 * max(st["error"] for st in result["streams"]), 2)
        if code != 0:
            lines = [line for line in output.splitlines() if line.startswith("cycle_accuracy:")]
            return True, f"{name}: " + (lines[0][len("cycle_accuracy:"):].strip() if lines
                                        else f"exit {code}: {output[-200:]}")
    return False, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=sorted(TARGETS), required=True)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=40, help="regression seeds per mutant")
    parser.add_argument("--fault-percent", type=int, default=10)
    parser.add_argument("--faults", default="", help="fault classes to inject (default: every class)")
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (created)")
    parser.add_argument("--timeout", type=float,
                        help="seconds of regression per mutant (default: 10 times the unmutated "
                             "tree's, at least 60: a livelocked mutant is killed by it)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the mutants already in WORK's report and continue after them")
    parser.add_argument("--cycle-random", type=int, default=20,
                        help="generated streams of the cycle-model gates (default 20; 0 skips the gates)")
    parser.add_argument("--rerun", type=Path,
                        help="a mutants-*.json of an earlier run: run its survivors again (e.g. with more --seeds)")
    args = parser.parse_args()
    if args.work.resolve() == REPO or REPO in args.work.resolve().parents:
        parser.error("--work must be outside the source tree")
    args.work.mkdir(parents=True, exist_ok=True)
    # A signal ends the run through the finally clauses that revert a mutant.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"stopped by SIGTERM"))
    src = sync_tree(args.work, args.target)
    target = TARGETS[args.target]
    build = args.work / f"build-{target['build']}"  # a mutant rebuilds only what it touches
    env = dict(os.environ, CCACHE_BASEDIR=str(src), ASAN_OPTIONS="detect_leaks=0")
    if not (build / "build.ninja").exists():
        r = run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                 "-DNPU_BUILD_TESTS=OFF", *target["configure"]], env=dict(env, **target["compilers"]))
        if r.returncode:
            sys.exit(f"configure failed: {r.stderr[-2000:]}")
    worker = build / "bin" / "npu-regress-worker"
    # The cycle gates' build. An ISS mutant's: a second build without sanitizers (co-simulation of the
    # Verilated RTL under ASan would take minutes per mutant), where the RTL is built once and a mutant
    # recompiles one ISS file and relinks npu-sim. An RTL mutant's: the regression's build, whose
    # Verilated model it has just rebuilt.
    cycle_build = None if not args.cycle_random else \
        build if target["cycle_build"] == "same" else args.work / f"build-{target['build']}-cycle"
    if cycle_build and not (cycle_build / "build.ninja").exists():
        r = run(["cmake", "-S", src, "-B", cycle_build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                 "-DNPU_BUILD_TESTS=OFF", "-DNPU_BUILD_RTL=ON"], env=env)
        if r.returncode:
            sys.exit(f"configure of the cycle gate's build failed: {r.stderr[-2000:]}")

    rng = random.Random(args.seed)
    files = sorted({p for g in TARGETS[args.target]["globs"] for p in src.glob(g)})
    candidates = []
    for path in files:
        text = path.read_text()
        for i, what, new in sites(path, text, args.target):
            candidates.append((path, i, what, new))
    rng.shuffle(candidates)
    if args.rerun:
        wanted = {(r["file"], r["line"], r["after"]) for r in json.loads(args.rerun.read_text())
                  if r["status"] == "survived"}
        candidates = [c for c in candidates
                      if (str(c[0].relative_to(src)), c[1] + 1, c[3].strip()) in wanted]
    regress_args = (["--backend", target["backend"], "--fault-percent", str(args.fault_percent)]
                    + (["--faults", args.faults] if args.faults else []))

    r = run(["ninja", "-C", build, "npu-regress-worker"], env=env)
    if r.returncode:
        sys.exit(f"the unmutated build fails: {r.stdout[-2000:]}")
    baseline_start = time.monotonic()
    killer, why = regression(worker, args.seeds, regress_args, args.timeout or 3600, env)
    if killer is not None:
        sys.exit(f"the unmutated tree fails the regression (seed {killer}: {why}); fix that first")
    if args.timeout is None:
        args.timeout = max(60.0, 10 * (time.monotonic() - baseline_start))
    print(f"regression budget per mutant: {args.timeout:.0f} s", flush=True)
    if cycle_build:
        r = run(["ninja", "-C", cycle_build, *CYCLE_TARGETS], env=env)
        if r.returncode:
            sys.exit(f"the unmutated cycle-gate build fails: {r.stdout[-2000:]}")
        gate_start = time.monotonic()
        unmutated = {}
        failed, why = cycle_gate(cycle_build, args.cycle_random, 3600, env, unmutated)
        if failed:
            sys.exit(f"the unmutated tree fails the cycle gate ({why}); fix that first")
        print(f"cycle gates, unmutated: exact classes within {unmutated['worst_exact_error_cycles']} cycles, "
              f"worst class {unmutated['worst_class_error']} %, worst stream {unmutated['worst_stream_error']} %",
              flush=True)
        cycle_timeout = max(120.0, 5 * (time.monotonic() - gate_start))
        print(f"cycle gate budget per mutant: {cycle_timeout:.0f} s", flush=True)

    report = args.work / f"mutants-{args.target}{'-rerun' if args.rerun else ''}.json"
    results = json.loads(report.read_text()) if args.resume and report.exists() else []
    done = {(r["file"], r["line"], r["after"]) for r in results}
    candidates = [c for c in candidates if (str(c[0].relative_to(src)), c[1] + 1, c[3].strip()) not in done]
    for path, i, what, new in candidates:
        if sum(r["status"] != "stillborn" for r in results) >= args.count:
            break
        text = path.read_text()
        lines = text.split("\n")
        entry = {"file": str(path.relative_to(src)), "line": i + 1, "edit": what,
                 "before": lines[i].strip(), "after": new.strip()}
        lines[i] = new
        path.write_text("\n".join(lines))
        try:
            start = time.monotonic()
            b = run(["ninja", "-C", build, "npu-regress-worker"], env=env)
            if b.returncode:
                entry["status"] = "stillborn"
            else:
                killer, why = regression(worker, args.seeds, regress_args, args.timeout, env)
                entry["status"] = "killed" if killer is not None else "survived"
                entry["seed"], entry["why"] = killer, why
                entry["killed_by"] = "regression" if killer is not None else None
                if killer is None and cycle_build:
                    c = run(["ninja", "-C", cycle_build, *CYCLE_TARGETS], env=env)
                    measured = {}
                    failed, why = (True, f"cycle gate: the build fails: {c.stdout[-300:]}") if c.returncode \
                        else cycle_gate(cycle_build, args.cycle_random, cycle_timeout, env, measured)
                    entry["cycle_gate"] = measured
                    if failed:
                        entry.update(status="killed", why=why, killed_by=why.split(":")[0])
            entry["seconds"] = round(time.monotonic() - start, 1)
        finally:
            path.write_text(text)
        results.append(entry)
        print(f"[{len(results)}] {entry['status']:9} {entry['file']}:{entry['line']} {what}"
              + (f" ({entry['killed_by']}, seed {entry.get('seed')}: {entry.get('why', '')[:80]})"
                 if entry["status"] == "killed" else "")
              + (f" (cycle model: exact classes within {entry['cycle_gate']['worst_exact_error_cycles']} cycles, "
                 f"worst class {entry['cycle_gate']['worst_class_error']} %, worst stream "
                 f"{entry['cycle_gate']['worst_stream_error']} %)"
                 if entry["status"] == "survived" and entry.get("cycle_gate") else ""),
              flush=True)
        report.write_text(json.dumps(results, indent=2) + "\n")
    # Leave the scratch builds matching the unmutated source.
    run(["ninja", "-C", build, "npu-regress-worker"], env=env)
    if cycle_build:
        run(["ninja", "-C", cycle_build, *CYCLE_TARGETS], env=env)
    live = [r for r in results if r["status"] != "stillborn"]
    killed = sum(r["status"] == "killed" for r in live)
    by_gate = sum(r.get("killed_by") in ("exact gate", "cycle gate") for r in live)
    print(f"{args.target}: {killed} of {len(live)} mutants killed ({100.0 * killed / max(len(live), 1):.1f} %"
          + (f"; {by_gate} of them by the cycle gates" if cycle_build else "")
          + f"), {len(results) - len(live)} stillborn; details in {report}")


if __name__ == "__main__":
    main()
