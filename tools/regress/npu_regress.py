#!/usr/bin/env python3
"""npu-regress: constrained-random co-verification at scale.

Runs N seeds of npu-randgen streams through cosim (the ISS and the RTL in
lockstep) with npu-regress-worker, on a local pool using every core by
default or on an existing Dask distributed cluster with --cluster ADDRESS.
Writes a JSON summary, JUnit XML, a coverage report (markdown) and, for each
divergence, a minimised .npuasm reproducer; prints a one-line reproducer
command per failure. See docs/verification.md.

Exit codes: 0 every seed passed, 1 a seed diverged or errored (or coverage
is below --min-coverage), 2 bad command line, 3 the worker could not be run.
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INPUT = 0, 1, 2, 3

# Options passed through to the generator unchanged (npu-randgen's names).
GENERATOR_OPTIONS = [
    ("--packets", int, "packets per stream, a final HALT included (default: the generator's, 40)"),
    ("--fault-percent", int, "chance per packet that it is made to fault (default 0)"),
    ("--faults", str, "comma-separated fault classes to inject (default: all)"),
    ("--opcodes", str, "comma-separated mnemonics to restrict the instruction mix to"),
    ("--large-percent", int, "chance per packet of a large shape"),
    ("--pair-percent", int, "chance that a large packet has a second large size"),
    ("--chain-percent", int, "chance that an input is an earlier packet's output"),
    ("--alias-percent", int, "chance of in-place and coinciding operands where legal"),
    ("--special-percent", int, "share of special float values in the data"),
]


class WorkerError(Exception):
    """The worker binary failed to run a chunk (not a divergence: a crash or bad usage)."""


def generator_arguments(args):
    out = []
    for flag, _, _ in GENERATOR_OPTIONS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            out += [flag, str(value)]
    return out


def run_chunk(worker, arguments, first, end, timeout):
    """Runs seeds [first, end) in one worker process; returns their JSON results.

    A pure function of its inputs, so a chunk that a lost cluster worker was
    running can be run again anywhere with the same results."""
    command = [worker, "--seeds", f"{first}:{end}"] + arguments
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WorkerError(f"seeds {first}..{end - 1}: the worker did not finish within {timeout} s: "
                          + " ".join(shlex.quote(c) for c in command))
    except OSError as e:
        raise WorkerError(f"cannot run {worker}: {e}")
    results = []
    for line in proc.stdout.splitlines():
        if line.strip():
            results.append(json.loads(line))
    seen = {r["seed"] for r in results}
    if proc.returncode != 0 or seen != set(range(first, end)):
        raise WorkerError(f"seeds {first}..{end - 1}: worker exited with {proc.returncode}, "
                          f"{len(seen)} of {end - first} results; stderr: {proc.stderr.strip()[-2000:]}")
    return results


class Progress:
    """A one-line progress bar on stderr (only when it is a terminal, else a line every 10 %)."""

    def __init__(self, total, enabled):
        self.total, self.done, self.failed = total, 0, 0
        self.enabled = enabled
        self.start = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.next_report = 0.1

    def update(self, results):
        self.done += len(results)
        self.failed += sum(r["status"] != "pass" for r in results)
        if not self.enabled:
            return
        fraction = self.done / self.total if self.total else 1.0
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed * 3600 if elapsed > 0 else 0.0
        bar = "#" * int(30 * fraction)
        line = (f"[{bar:<30}] {self.done}/{self.total} seeds, {self.failed} failing, "
                f"{rate:,.0f} streams/h, {elapsed:,.0f} s")
        if self.tty:
            sys.stderr.write("\r" + line)
            sys.stderr.flush()
        elif fraction >= self.next_report or self.done == self.total:
            sys.stderr.write(line + "\n")
            self.next_report = fraction + 0.1

    def close(self):
        if self.enabled and self.tty:
            sys.stderr.write("\n")


def chunks(first, count, size):
    for start in range(first, first + count, size):
        yield start, min(start + size, first + count)


def run_local(worker, arguments, seed_chunks, jobs, timeout, on_done):
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(run_chunk, worker, arguments, a, b, timeout) for a, b in seed_chunks]
        for future in concurrent.futures.as_completed(futures):
            on_done(future.result())
    finally:
        # After a failure, the chunks not yet started are not started.
        pool.shutdown(wait=True, cancel_futures=True)


def run_cluster(address, worker, arguments, seed_chunks, timeout, on_done):
    """Runs the chunks as Dask tasks. When a worker dies, the scheduler runs
    its tasks again on another worker; results are merged by seed, so a seed
    is never lost and never counted twice."""
    try:
        import cloudpickle
        from distributed import Client, as_completed
    except ImportError as e:
        raise WorkerError(f"--cluster needs Dask distributed (pip install distributed): {e}")
    # The cluster's workers need not have this script on their path.
    if __name__ != "__main__":
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with Client(address, timeout="30s") as client:
        futures = [client.submit(run_chunk, worker, arguments, a, b, timeout, pure=False,
                                 key=f"npu-regress-{a}-{b}-{time.monotonic_ns()}", retries=2)
                   for a, b in seed_chunks]
        for future in as_completed(futures):
            on_done(future.result())


class UsageError(Exception):
    """The worker rejected the generator options."""


def load_bins(worker, arguments):
    """The coverage model; also has the worker check the generator options."""
    proc = subprocess.run([worker, "--list-bins"] + arguments, capture_output=True, text=True)
    if proc.returncode == EXIT_USAGE:
        raise UsageError(proc.stderr.strip().removeprefix("npu-regress-worker: error: "))
    if proc.returncode != 0:
        raise WorkerError(f"{worker} --list-bins failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def enabled_fault_classes(args, model):
    if not args.fault_percent:
        return set()
    if args.faults:
        return set(args.faults.split(","))
    return set(model["fault_classes"])


def coverage_summary(model, hits, enabled_faults):
    bins = model["bins"]
    considered = [i for i, b in enumerate(bins) if not b["fault"] or b["fault"] in enabled_faults]
    hit = [i for i in considered if hits.get(i, 0)]
    groups = {}
    for i in considered:
        g = groups.setdefault(bins[i]["group"], {"bins": 0, "hit": 0, "holes": []})
        g["bins"] += 1
        if hits.get(i, 0):
            g["hit"] += 1
        else:
            g["holes"].append(bins[i]["name"])
    excluded = len(bins) - len(considered)
    percent = 100.0 * len(hit) / len(considered) if considered else 100.0
    return {"bins": len(considered), "hit": len(hit), "percent": percent, "excluded_fault_bins": excluded,
            "groups": groups}


def write_coverage_report(path, coverage, summary, enabled_faults):
    lines = ["# npu-regress functional coverage", ""]
    lines.append(f"{coverage['hit']} of {coverage['bins']} bins hit: **{coverage['percent']:.2f} %** "
                 f"after {summary['seeds']} seeds ({summary['packets_executed']:,} packets).")
    if coverage["excluded_fault_bins"]:
        lines.append(f"{coverage['excluded_fault_bins']} fault bins are excluded: their fault classes were not "
                     f"injected (enabled: {', '.join(sorted(enabled_faults)) or 'none'}).")
    lines += ["", "| instruction | bins | hit | % |", "|---|---:|---:|---:|"]
    for name, g in sorted(coverage["groups"].items()):
        lines.append(f"| {name} | {g['bins']} | {g['hit']} | {100.0 * g['hit'] / g['bins']:.1f} |")
    holes = [h for g in coverage["groups"].values() for h in g["holes"]]
    lines += ["", f"## Holes ({len(holes)})", ""]
    lines += [f"- `{h}`" for h in sorted(holes)] or ["None."]
    Path(path).write_text("\n".join(lines) + "\n")


def write_junit(path, results, elapsed):
    suite = ET.Element("testsuite", name="npu-regress", tests=str(len(results)),
                       failures=str(sum(r["status"] == "diverged" for r in results)),
                       errors=str(sum(r["status"] == "error" for r in results)), time=f"{elapsed:.3f}")
    for r in results:
        case = ET.SubElement(suite, "testcase", classname="npu-regress.cosim", name=f"seed-{r['seed']}",
                             time=f"{r.get('seconds', 0):.3f}")
        if r["status"] == "diverged":
            d = r["divergence"]
            failure = ET.SubElement(case, "failure", message=d["signature"])
            failure.text = f"{d['diagnostic']}\nreproduce: {d['reproducer']}"
        elif r["status"] == "error":
            error = ET.SubElement(case, "error", message=r["error"][:200])
            error.text = f"{r['error']}\nreproduce: {r.get('reproducer', '')}"
    ET.ElementTree(suite).write(path, encoding="unicode", xml_declaration=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="npu-regress", description="Run constrained-random NPU streams through ISS/RTL co-simulation.",
        epilog="Exit codes: 0 pass, 1 divergence/error/coverage below --min-coverage, 2 usage, 3 worker failure.")
    seeds = parser.add_argument_group("seeds")
    seeds.add_argument("--seeds", type=int, default=100, help="number of seeds (default 100)")
    seeds.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    seeds.add_argument("--seed", type=int, help="run this one seed (a reproducer line)")
    gen = parser.add_argument_group("generator (as npu-randgen)")
    for flag, kind, text in GENERATOR_OPTIONS:
        gen.add_argument(flag, type=kind, help=text)
    parser.add_argument("--backend", default="cosim",
                        help="cosim (the ISS against the RTL, default), reference (the ISS against the "
                             "reference model of the ISA), or iss or rtl alone")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="local worker processes (default: every core)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run on this Dask distributed scheduler (tcp://host:8786) instead of locally")
    parser.add_argument("--chunk", type=int, default=4, help="seeds per task (default 4)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per task before it is an error")
    parser.add_argument("--out", "-o", default="npu-regress-out",
                        help="directory for summary.json, junit.xml, coverage.md and reproducers")
    parser.add_argument("--no-minimise", action="store_true", help="do not minimise divergences")
    parser.add_argument("--max-minimise-runs", type=int, help="candidate runs per minimisation (default 400)")
    parser.add_argument("--min-coverage", type=float, help="fail unless at least this %% of the bins is hit")
    parser.add_argument("--fail-on-unexpected", action="store_true",
                        help="fail when a packet's outcome differs from the generator's intent although "
                             "both models agree (the generator's model and the ISS disagree)")
    parser.add_argument("--replay", metavar="FILE", help="run one .npubin/.npuasm as the regression does")
    parser.add_argument("--worker", help="path of npu-regress-worker (default: beside this script)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.seed is not None:
        args.first_seed, args.seeds = args.seed, 1
    if args.seeds < 1 or args.first_seed < 0 or args.chunk < 1 or args.jobs < 1:
        parser.error("--seeds, --chunk and --jobs must be at least 1, --first-seed at least 0")
    return args


def main(argv=None):
    args = parse_args(argv)
    worker = args.worker or str(Path(__file__).resolve().parent / "npu-regress-worker")
    if not os.access(worker, os.X_OK):
        print(f"npu-regress: error: the worker {worker} is missing or not executable (build it, or pass "
              f"--worker)", file=sys.stderr)
        return EXIT_INPUT
    arguments = generator_arguments(args) + ["--backend", args.backend]
    if args.no_minimise:
        arguments.append("--no-minimise")
    if args.max_minimise_runs is not None:
        arguments += ["--max-minimise-runs", str(args.max_minimise_runs)]
    if args.replay:
        return subprocess.run([worker, "--replay", args.replay, "--backend", args.backend]).returncode

    try:
        model = load_bins(worker, arguments)
    except UsageError as e:
        print(f"npu-regress: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except WorkerError as e:
        print(f"npu-regress: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    results = {}
    lock = threading.Lock()
    progress = Progress(args.seeds, not args.quiet)

    def on_done(chunk_results):
        with lock:
            for r in chunk_results:
                results[r["seed"]] = r  # by seed: a retried chunk replaces, never adds
            progress.update(chunk_results)

    start = time.monotonic()
    seed_chunks = list(chunks(args.first_seed, args.seeds, args.chunk))
    # A worker that cannot run (or an interrupt) ends the run, but the seeds
    # that finished are reported: a long run is not lost to its last chunk.
    stopped_by = None
    try:
        if args.cluster:
            run_cluster(args.cluster, worker, arguments, seed_chunks, args.timeout, on_done)
        else:
            run_local(worker, arguments, seed_chunks, args.jobs, args.timeout, on_done)
    except WorkerError as e:
        stopped_by = str(e)
    except KeyboardInterrupt:
        stopped_by = "interrupted"
    progress.close()
    elapsed = time.monotonic() - start

    ordered = [results[s] for s in sorted(results)]
    hits = {}
    unexpected = []
    for r in ordered:
        for b in r.get("bins", []):
            hits[b] = hits.get(b, 0) + 1
        unexpected += [f"seed {r['seed']}: {u}" for u in r.get("unexpected", [])]
    packets = sum(r.get("executed", 0) for r in ordered)
    failures = [r for r in ordered if r["status"] != "pass"]
    summary = {
        "seeds": len(ordered), "first_seed": args.first_seed, "passed": len(ordered) - len(failures),
        "diverged": sum(r["status"] == "diverged" for r in ordered),
        "errors": sum(r["status"] == "error" for r in ordered),
        "packets_executed": packets, "device_cycles": sum(r.get("cycles", 0) for r in ordered),
        "wall_seconds": elapsed, "streams_per_hour": len(ordered) / elapsed * 3600 if elapsed else 0.0,
        "packets_per_second": packets / elapsed if elapsed else 0.0,
        "backend": args.backend, "engine": f"dask {args.cluster}" if args.cluster else f"local x{args.jobs}",
        "generator_arguments": generator_arguments(args),
        "faults": {}, "divergences_by_intent": {}, "unexpected_outcomes": unexpected[:200], "unexpected_outcome_count": len(unexpected),
        "failures": [],
    }
    if stopped_by:
        summary["incomplete"] = {"reason": stopped_by, "seeds_missing": args.seeds - len(ordered)}
    for r in ordered:
        for name, n in r.get("faults", {}).items():
            summary["faults"][name] = summary["faults"].get(name, 0) + n
    enabled = enabled_fault_classes(args, model)
    coverage = coverage_summary(model, hits, enabled)
    summary["coverage"] = {k: v for k, v in coverage.items() if k != "groups"}
    summary["coverage"]["holes"] = sorted(h for g in coverage["groups"].values() for h in g["holes"])

    for r in failures:
        entry = {"seed": r["seed"], "status": r["status"]}
        if r["status"] == "diverged":
            d = r["divergence"]
            entry.update(signature=d["signature"], packet=d["packet"], diagnostic=d["diagnostic"],
                         reproducer=d["reproducer"], intent=d.get("intent", ""),
                         faults_before=d.get("faults_before", 0))
            if "minimised" in d:
                path = out / f"seed-{r['seed']}.min.npuasm"
                path.write_text(d["minimised"]["npuasm"])
                entry["minimised"] = {"path": str(path), "packets": d["minimised"]["packets"],
                                      "data_bytes": d["minimised"]["data_bytes"], "runs": d["minimised"]["runs"]}
        else:
            entry.update(error=r["error"], reproducer=r.get("reproducer", ""))
        summary["failures"].append(entry)
        if r["status"] == "diverged":
            key = entry["intent"] or "valid packet"
            summary["divergences_by_intent"][key] = summary["divergences_by_intent"].get(key, 0) + 1

    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    write_junit(out / "junit.xml", ordered, elapsed)
    write_coverage_report(out / "coverage.md", coverage, summary, enabled)

    print(f"npu-regress: {summary['passed']} passed, {len(failures)} failed of {len(ordered)} seeds "
          f"({packets:,} packets, {summary['packets_per_second']:.0f} packets/s, "
          f"{summary['streams_per_hour']:,.0f} streams/h); coverage {coverage['percent']:.2f} % "
          f"({coverage['hit']}/{coverage['bins']} bins); reports in {out}/")
    if unexpected:
        print(f"npu-regress: {len(unexpected)} packets had an outcome the generator did not intend "
              f"(both models agreed; see summary.json)")
    for entry in summary["failures"]:
        what = entry.get("signature") or entry.get("error", "")
        line = f"FAIL seed {entry['seed']}: {what}\n  reproduce: {entry['reproducer']}"
        if "minimised" in entry:
            m = entry["minimised"]
            line += (f"\n  minimised: {m['path']} ({m['packets']} packets, {m['data_bytes']} data bytes): "
                     f"npu-regress --replay {m['path']}"
                     + (f" --backend {args.backend}" if args.backend != "cosim" else ""))
        print(line)
    if stopped_by:
        print(f"npu-regress: error: {stopped_by}; {args.seeds - len(ordered)} of {args.seeds} seeds did "
              f"not run (the reports cover the {len(ordered)} that did)", file=sys.stderr)
        return EXIT_INPUT
    if failures:
        return EXIT_FAILURE
    if unexpected and args.fail_on_unexpected:
        for u in unexpected[:20]:
            print(f"UNEXPECTED {u}")
        return EXIT_FAILURE
    if args.min_coverage is not None and coverage["percent"] < args.min_coverage:
        print(f"npu-regress: coverage {coverage['percent']:.2f} % is below --min-coverage {args.min_coverage}")
        return EXIT_FAILURE
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
