#!/usr/bin/env python3
"""Accuracy gate: runs npu-ulp on every row of docs/arith.md §7 and fails when a
measured error exceeds the documented bound.

Bit-exact tests compare the ISS with the RTL and both with the reference
provider, all generated from the same .td micro-programs, so a change that
makes a program less accurate passes them all; this test is what notices.
One-input functions are swept over every STRIDE-th bit pattern (a subset of
the documented sweep, so its maximum can only be lower), programs of two or
more inputs over random operands. Each documented row maps to the npu-ulp runs that cover it;
a row without a mapping (or a mapping without a row) is an error, and so is a
micro-program of more than one step that no run measures, so the table, the
programs and this gate change together.

usage: accuracy_bounds.py NPU_ULP DOCS_ARITH_MD [--stride N] [--random N]
                          [--tighten FUNCTION=BOUND]... [--forget FUNCTION]...
(--tighten replaces the documented bound of every row of FUNCTION, --forget
drops the runs of FUNCTION: CTest uses them to show that the gate fails on an
exceeded bound and on a micro-program that no row measures.)
"""
import argparse
import re
import subprocess
import sys

INF = "inf"

# (function column, inputs-tested column) -> list of (npu-ulp function, extra args).
# Rows measured over a range map to the same ranges here.
RUNS = {
    ("exp", "all 2^32"): [("exp", [])],
    ("log", "all 2^32"): [("log", [])],
    ("recip", "all 2^32"): [("recip", [])],
    ("div", "10^8 random pairs"): [("div", ["RANDOM"])],
    ("rsqrt", "all 2^32"): [("rsqrt", [])],
    ("sqrt", "all 2^32"): [("sqrt", [])],
    ("neg, abs, relu", "all 2^32"): [("neg", []), ("abs", []), ("relu", [])],
    ("sigmoid", "all 2^32"): [("sigmoid", [])],
    ("silu", "all 2^32"): [("silu", [])],
    ("tanh", "all 2^32"): [("tanh", [])],
    ("gelu (tanh form)", "all 2^32"): [("gelu", [])],
    ("sin", "all with |x| ≤ 2^16"): [("sin", ["--range", "-65536:65536"])],
    ("cos", "all with |x| ≤ 2^16"): [("cos", ["--range", "-65536:65536"])],
    ("sin", "all with 2^16 ≤ |x| ≤ 2^22"): [
        ("sin", ["--range", "65536:4194304"]),
        ("sin", ["--range", "-4194304:-65536"]),
    ],
    ("cos", "all with 2^16 ≤ x ≤ 2^22 (cos is even)"): [("cos", ["--range", "65536:4194304"])],
    # Documented as unbounded in ulp: nothing to gate.
    ("sin, cos", "|x| > 2^22"): [],
    ("pow", "10^8 random pairs"): [("pow", ["RANDOM"])],
    (
        "clamp",
        "10^8 random triples (x, lo, hi: all bit patterns, or within [0.5, 2) with x equal to "
        "a bound or to a bound's negation)",
    ): [("clamp", ["RANDOM"])],
    ("silu_bwd (dy = 1)", "all x ≤ −2 or ≥ −0.5 (every 31st)"): [
        ("silu_bwd", ["--range", f"-{INF}:-2"]),
        ("silu_bwd", ["--range", f"-0.5:{INF}"]),
    ],
    ("silu_bwd", "all x outside (−1.33, −1.23)"): [
        ("silu_bwd", ["--range", f"-{INF}:-1.33"]),
        ("silu_bwd", ["--range", f"-1.23:{INF}"]),
    ],
    ("silu_bwd", "all x in [−1.33, −1.23] (zero at −1.2785)"): [
        ("silu_bwd", ["--range", "-1.33:-1.23"])
    ],
    ("gelu_bwd (dy = 1)", "all x ≥ −0.25 (every 31st)"): [("gelu_bwd", ["--range", f"-0.25:{INF}"])],
    ("gelu_bwd", "all x ≤ −1.5 (every 31st)"): [("gelu_bwd", ["--range", f"-{INF}:-1.5"])],
    ("gelu_bwd", "all x outside (−0.8, −0.7)"): [
        ("gelu_bwd", ["--range", f"-{INF}:-0.8"]),
        ("gelu_bwd", ["--range", f"-0.7:{INF}"]),
    ],
    ("gelu_bwd", "all x in [−0.8, −0.7] (zero at −0.7518)"): [("gelu_bwd", ["--range", "-0.8:-0.7"])],
}


def documented_rows(doc_text):
    """{(function, inputs): (kind, bound)} from the §7 table; kind is 'ulp',
    'abs' or 'none'."""
    section = doc_text.split("## 7. Accuracy", 1)
    if len(section) != 2:
        sys.exit("accuracy_bounds: docs/arith.md has no '## 7. Accuracy' section")
    rows = {}
    for line in section[1].splitlines():
        if not line.startswith("| ") or line.startswith("| function") or line.startswith("|---"):
            if rows and not line.startswith("|"):
                break
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        function = cells[0].replace("\\|", "|")
        inputs = re.sub(r"\s*\(x over all binades.*\)$", "", cells[1].replace("\\|", "|"))
        inputs = re.sub(r", plus every dividend.*$", "", inputs)
        error = cells[2]
        if m := re.search(r"absolute error ≤ ([0-9.]+)e−([0-9]+)", error):
            rows[(function, inputs)] = ("abs", float(f"{m[1]}e-{m[2]}"))
        elif error.startswith("unbounded"):
            rows[(function, inputs)] = ("none", None)
        elif m := re.match(r"(?:\*\*)?([0-9.]+)", error):
            rows[(function, inputs)] = ("ulp", float(m[1]))
        else:
            sys.exit(f"accuracy_bounds: cannot read the bound of row {cells[:3]}")
    return rows


def measure(npu_ulp, function, args, stride, random_pairs):
    if args == ["RANDOM"]:
        args = ["--random", str(random_pairs)]
    else:
        args = ["--stride", str(stride)] + args
    command = [npu_ulp, "-f", function] + args
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    line = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    m = re.search(r"max ([0-9.]+) ulp.*max absolute error ([0-9.e+-]+|nan|inf)", line)
    if result.returncode != 0 or not m:
        sys.exit(f"accuracy_bounds: {' '.join(command)} failed (exit {result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return float(m[1]), float(m[2]), " ".join(command[1:]), line


def unmeasured_programs(npu_ulp):
    """Micro-programs that no run measures, except those of one step: a single
    primitive is correctly rounded by definition (docs/arith.md §2)."""
    result = subprocess.run([npu_ulp, "--list"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"accuracy_bounds: {npu_ulp} --list failed:\n{result.stderr}")
    measured = {function for runs in RUNS.values() for function, _args in runs}
    programs = [line.split() for line in result.stdout.splitlines()]
    return sorted(name for name, _inputs, steps in programs if int(steps) > 1 and name not in measured)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("npu_ulp")
    parser.add_argument("doc")
    parser.add_argument("--stride", type=int, default=251)
    parser.add_argument("--random", type=int, default=4_000_000)
    parser.add_argument("--tighten", action="append", default=[], metavar="FUNCTION=BOUND")
    parser.add_argument("--forget", action="append", default=[], metavar="FUNCTION")
    opts = parser.parse_args()
    with open(opts.doc, encoding="utf-8") as f:
        rows = documented_rows(f.read())
    for override in opts.tighten:
        function, bound = override.split("=")
        matched = [key for key in rows if key[0] == function]
        if not matched:
            sys.exit(f"accuracy_bounds: --tighten {override}: no row for {function}")
        for key in matched:
            rows[key] = (rows[key][0], float(bound))
    for function in opts.forget:
        for key in RUNS:
            RUNS[key] = [run for run in RUNS[key] if run[0] != function]
    unmeasured = unmeasured_programs(opts.npu_ulp)
    if unmeasured:
        sys.exit("accuracy_bounds: micro-programs of more than one step that no row of "
                 f"docs/arith.md §7 measures: {unmeasured} (add a row and its runs)")
    unmapped = sorted(set(rows) - set(RUNS))
    stale = sorted(set(RUNS) - set(rows))
    if unmapped or stale:
        sys.exit(f"accuracy_bounds: docs/arith.md §7 and this gate disagree:\n"
                 f"  rows without runs: {unmapped}\n  runs without rows: {stale}")
    failures = 0
    for key, (kind, bound) in rows.items():
        for function, args in RUNS[key]:
            ulp, absolute, what, line = measure(opts.npu_ulp, function, args, opts.stride, opts.random)
            measured = ulp if kind == "ulp" else absolute
            ok = kind == "none" or measured <= bound
            failures += not ok
            shown = "no bound" if kind == "none" else f"documented {bound:g} {kind}"
            print(f"{'ok  ' if ok else 'FAIL'} {what:55} measured {measured:.4g} {kind}; {shown}")
            if not ok:
                print(f"     {line}")
    if failures:
        sys.exit(f"accuracy_bounds: {failures} run(s) exceed the bounds documented in docs/arith.md §7")
    print("accuracy_bounds: every measured error is within docs/arith.md §7")


if __name__ == "__main__":
    main()
