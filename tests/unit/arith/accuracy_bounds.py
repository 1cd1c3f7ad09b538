#!/usr/bin/env python3
"""Accuracy gate: runs npu-ulp on every row of docs/arith.md §7 and fails when a
measured error exceeds the documented bound.

Bit-exact tests compare the ISS with the RTL and both with the reference
provider, all generated from the same .td micro-programs, so a change that
makes a program less accurate passes them all; this test is what notices.
One-input functions are swept over every STRIDE-th bit pattern (a subset of
the documented sweep, so its maximum can only be lower), programs of two or three
inputs over random operands. The runs of each row come from its inputs column, read by a
strict grammar (INPUT_FORMS: "all 2^32", "all x in [a, b]", "all x outside
(a, b)", ...; a row it cannot read is an error naming the row), so a new
micro-program needs only its row; a micro-program of more than one step that
no row measures is an error too, so the table, the programs and this gate
change together.

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
NUMBER = r"-?(?:\d+\^\d+|\d+(?:\.\d+)?)"
PREFIX = r"(?:all|every \d+(?:st|nd|rd|th))"

# The inputs column of a §7 row, read by a small strict grammar: each form
# maps to the npu-ulp sweeps it describes, as a function of its numbers
# (None: every bit pattern; RANDOM: random pairs, triples or quadruples). A trailing note in
# parentheses that does not start with a number, "(every 31st)", "(zero at
# −0.75)", is a comment. "every Nth" is how the row was measured; the gate
# sweeps every --stride-th input of the same ranges.
INPUT_FORMS = [
    (r"all 2\^32", lambda: [None]),
    (r"\d+\^\d+ random (?:pairs|triples|quadruples)(?:, .*)?", lambda: ["RANDOM"]),
    (rf"all with \|x\| ≤ ({NUMBER})", lambda n: [(f"-{n}", n)]),
    (rf"all with ({NUMBER}) ≤ \|x\| ≤ ({NUMBER})", lambda a, b: [(a, b), (f"-{b}", f"-{a}")]),
    (rf"all with ({NUMBER}) ≤ x ≤ ({NUMBER})", lambda a, b: [(a, b)]),
    (rf"\|x\| > ({NUMBER})", lambda n: [(f"-{INF}", f"-{n}"), (n, INF)]),
    (rf"{PREFIX} x in \[({NUMBER}), ({NUMBER})\]", lambda a, b: [(a, b)]),
    (rf"{PREFIX} x outside \(({NUMBER}), ({NUMBER})\)", lambda a, b: [(f"-{INF}", a), (b, INF)]),
    (rf"{PREFIX} x ≤ ({NUMBER}) or ≥ ({NUMBER})", lambda a, b: [(f"-{INF}", a), (b, INF)]),
    (rf"{PREFIX} x ≥ ({NUMBER})", lambda a: [(a, INF)]),
    (rf"{PREFIX} x ≤ ({NUMBER})", lambda a: [(f"-{INF}", a)]),
]
NOTE = re.compile(r"\s*\((?![-\d])[^()]*(?:\([^()]*\)[^()]*)*\)$")


def number(text):
    """A number of the grammar as npu-ulp's --range reads it (2^16 -> 65536)."""
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    if "^" in text:
        base, exponent = text.split("^")
        text = str(int(base) ** int(exponent))
    return sign + text


def runs_of_row(function_cell, inputs_cell):
    """The npu-ulp runs, [(function, extra args)], that measure a §7 row."""
    functions = [re.sub(r"\s*\(.*\)$", "", name.strip()) for name in function_cell.split(",")]
    inputs = NOTE.sub("", inputs_cell.replace("−", "-"))
    for pattern, sweeps in INPUT_FORMS:
        if m := re.fullmatch(pattern, inputs):
            ranges = sweeps(*m.groups())
            break
    else:
        sys.exit(f"accuracy_bounds: docs/arith.md §7 row '{function_cell} | {inputs_cell}': cannot read "
                 f"its inputs column '{inputs}' (forms: 'all 2^32', 'N^k random pairs', 'triples' or 'quadruples', "
                 "'all with |x| ≤ N', 'all with A ≤ |x| ≤ B', 'all with A ≤ x ≤ B', '|x| > N', "
                 "'all x in [A, B]', 'all x outside (A, B)', 'all x ≤ A or ≥ B', 'all x ≥ A', "
                 "'all x ≤ A'; 'every Nth' for 'all'; a trailing note in parentheses)")
    runs = []
    for function in functions:
        for sweep in ranges:
            if sweep is None:
                runs.append((function, []))
            elif sweep == "RANDOM":
                runs.append((function, ["RANDOM"]))
            else:
                low, high = (number(end) if end.lstrip("-") != INF else end for end in sweep)
                runs.append((function, ["--range", f"{low}:{high}"]))
    return runs


def documented_rows(doc_text):
    """[(function, inputs, kind, bound, runs)] from the §7 table; kind is
    'ulp', 'abs' or 'none' (documented as unbounded: nothing to gate)."""
    section = doc_text.split("## 7. Accuracy", 1)
    if len(section) != 2:
        sys.exit("accuracy_bounds: docs/arith.md has no '## 7. Accuracy' section")
    rows = []
    for line in section[1].splitlines():
        if not line.startswith("| ") or line.startswith("| function") or line.startswith("|---"):
            if rows and not line.startswith("|"):
                break
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        function, inputs, error = cells[0], cells[1], cells[2]
        if m := re.search(r"absolute error ≤ ([0-9.]+)e−([0-9]+)", error):
            kind, bound = "abs", float(f"{m[1]}e-{m[2]}")
        elif error.startswith("unbounded"):
            kind, bound = "none", None
        elif m := re.match(r"(?:\*\*)?([0-9.]+)", error):
            kind, bound = "ulp", float(m[1])
        else:
            sys.exit(f"accuracy_bounds: cannot read the bound of row {cells[:3]}")
        runs = runs_of_row(function, inputs)
        rows.append((function, inputs, kind, bound, [] if kind == "none" else runs))
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


def unmeasured_programs(npu_ulp, rows):
    """Micro-programs that no run measures, except those of one step: a single
    primitive is correctly rounded by definition (docs/arith.md §2)."""
    result = subprocess.run([npu_ulp, "--list"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"accuracy_bounds: {npu_ulp} --list failed:\n{result.stderr}")
    measured = {function for *_row, runs in rows for function, _args in runs}
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
        matched = [i for i, row in enumerate(rows) if row[0] == function]
        if not matched:
            sys.exit(f"accuracy_bounds: --tighten {override}: no row for {function}")
        for i in matched:
            rows[i] = rows[i][:3] + (float(bound), rows[i][4])
    rows = [row[:4] + ([run for run in row[4] if run[0] not in opts.forget],) for row in rows]
    unmeasured = unmeasured_programs(opts.npu_ulp, rows)
    if unmeasured:
        sys.exit("accuracy_bounds: micro-programs of more than one step that no row of "
                 f"docs/arith.md §7 measures: {unmeasured} (add a row)")
    failures = 0
    for _function, _inputs, kind, bound, runs in rows:
        for function, args in runs:
            ulp, absolute, what, line = measure(opts.npu_ulp, function, args, opts.stride, opts.random)
            measured = ulp if kind == "ulp" else absolute
            ok = measured <= bound
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {what:55} measured {measured:.4g} {kind}; documented {bound:g} {kind}")
            if not ok:
                print(f"     {line}")
    if failures:
        sys.exit(f"accuracy_bounds: {failures} run(s) exceed the bounds documented in docs/arith.md §7")
    print("accuracy_bounds: every measured error is within docs/arith.md §7")


if __name__ == "__main__":
    main()
