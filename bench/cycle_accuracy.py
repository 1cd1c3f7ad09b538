#!/usr/bin/env python3
"""How well the ISS's cycle model predicts the RTL: every stream of a corpus
runs on the cosim backend (ISS and RTL in lockstep, values compared) under
several memory configurations; each packet's predicted and measured cycles
are compared.

Prints, per op class and overall, the packets, the mean absolute per-packet
error (|predicted - rtl| / rtl), and the whole-stream error
(|sum predicted - sum rtl| / sum rtl, the worst stream's and the corpus's).
Packets whose work depends on their data (the model marks their bytes an
upper bound: a gather row skipped for its padding index) form their own
"(data-dependent)" classes, outside the bounds and the stream totals.
Also checks that every packet's engine requested the bytes the model
counts. Writes the measurements as JSON and, with --plot, a PNG: predicted
against RTL cycles per packet (log-log, one colour per op class) and the
per-class error bars. With --check it exits 1 when a bound is exceeded
(the CTest gate).

It also prints, per memory configuration without wait states (where the
model is not an expected value) and per class, the packets, how many were
predicted to the cycle and the largest |error| in cycles (the JSON's
"exactness"). With --exact it exits 1 when a packet of a class in
EXACT_TOLERANCE or of a vector instruction (VECTOR_TOLERANCE) is predicted further than that many cycles from the RTL
(0: to the cycle) under such a configuration, or when a packet's requested
bytes differ from the model's (the exact gate); --exact-tolerance
CLASS=CYCLES adds or overrides a class.

The corpus: the example kernels (examples/*.npuasm, examples/kernels/),
the captured PyTorch traces given with --trace (tiny Qwen2 forward, a LoRA
step), and --random constrained-random streams of npu-randgen (no faults)
covering every opcode and shape class; with --directed, the directed
streams of bench/cycle_directed/ (matrix products past the model's
simulated panels and blocks, products wider than the ISS's GEMM packs B
at once, every DMA run kind, EMBEDDING_BWD with and without a padding
index).

    bench/cycle_accuracy.py [--build-dir build] [--random 200] [--opcodes a,b]
                            [--trace f.npubin]... [--capture-torch] [--directed] [--no-examples]
                            [--config LATENCY:WIDTH:STALL]... [--json out.json]
                            [--plot out.png] [--check] [--class-bound 5] [--stream-bound 2]
                            [--corpus-bound 1] [--exact] [--exact-tolerance CLASS=CYCLES]...
"""
import argparse
import concurrent.futures
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from rtl_roofline import cpu_name

REPO = pathlib.Path(__file__).resolve().parents[1]
# latency (cycles), memory width (bytes per cycle), wait-state percentage:
# the harness's default, a narrow far memory, a near memory with wait states.
DEFAULT_CONFIGS = ["20:32:0", "37:8:0", "4:16:10"]
DIRECTED = REPO / "bench" / "cycle_directed"

# --exact: the classes the model predicts to the cycle at zero wait states
# (docs/simulator.md, "Exactness at zero wait states"), with the largest
# |predicted - RTL| in cycles each may show. A class not listed is measured
# and printed, not gated.
EXACT_TOLERANCE = {
    "nop": 0, "fence": 0, "halt": 0,
    "fill": 0, "copy": 0, "copy_strided": 0, "embedding": 0, "gather": 0,
    "matmul": 0, "bmm": 0,
}
# Every vector instruction is gated at 0 cycles (the ISA's records say
# which ones run on the vector engine); EMBEDDING_BWD too, since the model
# takes the executed packet's indices (its rows' addresses and the rows its
# padding index skips). (LAYERNORM,
# LAYERNORM_BWD, RMSNORM, MAX and SOFTMAX_BWD had 4 cycles, SUB 3, until
# the model's rows repeated with their place in a 4 KiB page.)
VECTOR_TOLERANCE = {}


def exact_tolerances(build_dir):
    """EXACT_TOLERANCE and every vector instruction's (VECTOR_TOLERANCE, else 0)."""
    run = subprocess.run([str(build_dir / "bin" / "npu-isa"), "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cycle_accuracy: npu-isa --json failed ({run.returncode}): {run.stderr.strip()}")
    tolerances = dict(EXACT_TOLERANCE)
    for instruction in json.loads(run.stdout)["instructions"]:
        if instruction["engine"] == "vector":
            name = instruction["mnemonic"]
            tolerance = VECTOR_TOLERANCE.get(name, 0)
            if tolerance is not None:
                tolerances[name] = tolerance
    return tolerances


def parse_tolerance(text):
    op, _, cycles = text.rpartition("=")
    try:
        value = int(cycles)
    except ValueError:
        value = -1
    if not op or value < 0:
        raise argparse.ArgumentTypeError(f"--exact-tolerance '{text}': expected CLASS=CYCLES, e.g. copy=2")
    return op, value


def parse_config(text):
    try:
        latency, width, stall = (int(field, 0) for field in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--config '{text}': expected LATENCY:WIDTH:STALL, e.g. 37:8:0")
    return {"latency": latency, "width": width, "stall": stall}


def config_name(c):
    return f"latency {c['latency']}, {c['width']} B/cycle, {c['stall']}% waits"


def capture_torch(build_dir, workdir):
    """[(name, path)]: the tiny Qwen2 forward and one LoRA step, captured."""
    traces = []
    for script, name in (("qwen2_forward.py", "qwen2-forward.npubin"), ("qwen2_lora.py", "qwen2-lora-step.npubin")):
        path = pathlib.Path(workdir) / name
        environment = dict(os.environ, NPU_BACKEND="iss", NPU_BUILD_DIR=str(build_dir))
        run = subprocess.run([sys.executable, str(REPO / "examples" / "torch" / script), "--capture", str(path)],
                             capture_output=True, text=True, env=environment)
        if run.returncode != 0 or not path.is_file():
            sys.exit(f"cycle_accuracy: examples/torch/{script} --capture failed ({run.returncode}):\n"
                     f"{run.stdout[-2000:]}{run.stderr[-2000:]}")
        traces.append((name, path))
    return traces


def corpus(args, workdir):
    """[(name, path)] of every stream to measure."""
    streams = [] if args.no_examples else (sorted((REPO / "examples").glob("*.npuasm")) +
                                           sorted((REPO / "examples" / "kernels").glob("*.npuasm")))
    if args.directed:
        streams += sorted(DIRECTED.glob("*.npuasm"))
    entries = [(str(p.relative_to(REPO)), p) for p in streams]
    for trace in args.trace:
        path = pathlib.Path(trace)
        if not path.is_file():
            sys.exit(f"cycle_accuracy: --trace {trace}: no such file")
        entries.append((path.name, path))
    if args.capture_torch:
        entries += capture_torch(args.build_dir, workdir)
    if args.random:
        out = pathlib.Path(workdir) / "random"
        out.mkdir()
        subprocess.run([str(args.build_dir / "bin" / "npu-randgen"), "--seed", str(args.first_seed),
                        "--count", str(args.random), "--packets", str(args.packets), "--fault-percent", "0",
                        *(["--opcodes", args.opcodes] if args.opcodes else []),
                        "--out-dir", str(out)], check=True, stdout=subprocess.DEVNULL)
        for seed in range(args.first_seed, args.first_seed + args.random):
            entries.append((f"random seed {seed}", out / f"seed-{seed}.npubin"))
    return entries


def measure(npu_sim, name, path, config, workdir, index):
    """The packet records of one cosim run: [(op, predicted, rtl)]."""
    stats = pathlib.Path(workdir) / f"stats-{index}.json"
    command = [str(npu_sim), "--backend", "cosim", "--quiet", "--stats-json", str(stats),
               "--mem-latency", str(config["latency"]), "--mem-width", str(config["width"]),
               "--mem-stall-percent", str(config["stall"]), str(path)]
    if path.suffix == ".npuasm":
        command += ["-I", str(path.parent)]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{name} ({config_name(config)}): npu-sim exited {run.returncode}:\n"
                           f"{run.stdout[-2000:]}{run.stderr[-2000:]}")
    records = json.loads(stats.read_text())["packet_records"]
    stats.unlink()
    # A packet whose work depends on its data (a gather row skipped for its
    # padding index: predicted_bytes_exact false) is measured apart: the
    # model charges what the operands allow at most.
    packets = [(r["op"] if r["predicted_bytes_exact"] else r["op"] + " (data-dependent)",
                r["predicted_cycles"], r["cycles"], r["index"]) for r in records]
    # The bytes each packet's engine requested against the model's: equal,
    # or at most the model's where the data may skip requests.
    def agrees(r):
        model, rtl = (r["predicted_bytes_read"], r["predicted_bytes_written"]), (r["bytes_read"], r["bytes_written"])
        return model == rtl or (not r["predicted_bytes_exact"] and rtl[0] <= model[0] and rtl[1] <= model[1])
    mismatches = [(r["index"], r["op"], (r["predicted_bytes_read"], r["predicted_bytes_written"]),
                   (r["bytes_read"], r["bytes_written"])) for r in records if not agrees(r)]
    return packets, mismatches


def host_line():
    return f"host: {cpu_name()}, {os.cpu_count()} cores"


def summarise(results):
    """Per class: packets, mean |error| per packet; per stream: error."""
    classes = {}
    streams = []
    for r in results:
        # Whole-stream totals over the packets whose work the operands fix.
        exact = [(p, m) for op, p, m, _ in r["packets"] if not op.endswith("(data-dependent)")]
        predicted = sum(p for p, _ in exact)
        measured = sum(m for _, m in exact)
        streams.append({"stream": r["stream"], "config": r["config"], "predicted": predicted, "rtl": measured,
                        "error": abs(predicted - measured) / measured if measured else 0.0})
        for op, p, m, _ in r["packets"]:
            c = classes.setdefault(op, {"packets": 0, "error_sum": 0.0, "bias_sum": 0.0, "worst": 0.0,
                                        "rtl_sum": 0, "cycles_off_sum": 0})
            error = abs(p - m) / m if m else 0.0
            c["packets"] += 1
            c["rtl_sum"] += m
            c["cycles_off_sum"] += abs(p - m)
            c["error_sum"] += error
            c["bias_sum"] += (p - m) / m if m else 0.0
            c["worst"] = max(c["worst"], error)
    for c in classes.values():
        c["mean_error"] = c.pop("error_sum") / c["packets"]
        c["bias"] = c.pop("bias_sum") / c["packets"]
        c["mean_cycles"] = c.pop("rtl_sum") / c["packets"]
        c["mean_cycles_off"] = c.pop("cycles_off_sum") / c["packets"]
    return classes, streams


# A class of packets this short on average (FENCE, NOP: a few cycles) is
# bounded by its mean |error| in cycles instead of in percent: under wait
# states the drain of a long packet's last writes may fall in the next
# packet on the RTL and in the long one in the model, so one such short
# packet off by 10 cycles is 333 % while the stream's total is exact.
SHORT_CLASS_CYCLES = 32
SHORT_CLASS_BOUND_CYCLES = 1.0


def class_bound_failures(classes, bound_percent):
    failures = []
    for op, c in sorted(classes.items()):
        if op.endswith("(data-dependent)"):
            continue
        if c["mean_cycles"] < SHORT_CLASS_CYCLES:
            if c["mean_cycles_off"] > SHORT_CLASS_BOUND_CYCLES:
                failures.append(f"{op}: mean per-packet error {c['mean_cycles_off']:.2f} cycles > "
                                f"{SHORT_CLASS_BOUND_CYCLES} (a class of packets under "
                                f"{SHORT_CLASS_CYCLES} cycles)")
        elif 100 * c["mean_error"] > bound_percent:
            failures.append(f"{op}: mean per-packet error {100 * c['mean_error']:.2f} % > {bound_percent} %")
    return failures


def exactness(results, configs, tolerances):
    """Per zero-wait configuration and class: packets, exact, max |error| (cycles), tolerance; and
    the packets past their class's tolerance."""
    table, excess = {}, []
    for config in (c for c in configs if c["stall"] == 0):
        name = config_name(config)
        rows = table.setdefault(name, {})
        for r in (r for r in results if r["config"] == name):
            for op, p, m, index in r["packets"]:
                row = rows.setdefault(op, {"packets": 0, "exact": 0, "max_error": 0,
                                           "tolerance": tolerances.get(op)})
                error = abs(p - m)
                row["packets"] += 1
                row["exact"] += error == 0
                row["max_error"] = max(row["max_error"], error)
                if row["tolerance"] is not None and error > row["tolerance"]:
                    excess.append(f"{r['stream']} ({name}): packet {index} ({op}) predicted {p} cycles, "
                                  f"the RTL took {m}: |error| {error} > {row['tolerance']}")
    return table, excess


def plot(results, classes, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(classes)
    colours = plt.get_cmap("tab20")
    fig, (scatter, bars) = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [1.1, 1]})
    low, high = float("inf"), 1.0
    for i, op in enumerate(names):
        xs = [m for r in results for o, _, m, _ in r["packets"] if o == op]
        ys = [p for r in results for o, p, _, _ in r["packets"] if o == op]
        low, high = min(low, *xs, *ys), max(high, *xs, *ys)
        scatter.scatter(xs, ys, s=6, color=colours(i % 20), label=op, alpha=0.7)
    scatter.plot([low, high], [low, high], color="black", linewidth=0.8)
    scatter.set_xscale("log")
    scatter.set_yscale("log")
    scatter.set_xlabel("RTL cycles per packet")
    scatter.set_ylabel("ISS predicted cycles per packet")
    scatter.set_title("Predicted vs measured, every packet and memory configuration")
    scatter.legend(fontsize=6, ncol=3, markerscale=2)
    errors = [100 * classes[op]["mean_error"] for op in names]
    worst = [100 * classes[op]["worst"] for op in names]
    positions = range(len(names))
    bars.barh(positions, worst, color="#dddddd", label="worst packet")
    bars.barh(positions, errors, color=[colours(i % 20) for i in positions], label="mean |error|")
    bars.set_yticks(list(positions), names, fontsize=7)
    bars.axvline(5, color="red", linewidth=0.8, label="5 % bound")
    bars.set_xscale("symlog", linthresh=10)
    bars.set_xlabel("per-packet error, %")
    bars.set_title("Per op class")
    bars.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("NPU_BUILD_DIR", REPO / "build")))
    parser.add_argument("--random", type=int, default=200, help="random streams (default 200)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--packets", type=int, default=30, help="packets per random stream")
    parser.add_argument("--capture-torch", action="store_true",
                        help="also capture the tiny Qwen2 forward and a LoRA step on the PyTorch device "
                             "(examples/torch/*.py --capture) and measure them; exit 77 (skipped) when "
                             "the npu_bridge package is not installed")
    parser.add_argument("--opcodes", help="restrict the random streams to these mnemonics")
    parser.add_argument("--directed", action="store_true",
                        help="add the directed streams of bench/cycle_directed/ to the corpus")
    parser.add_argument("--no-examples", action="store_true", help="leave the example kernels out of the corpus")
    parser.add_argument("--trace", action="append", default=[], help="a captured .npubin to add")
    parser.add_argument("--config", action="append", type=parse_config,
                        help=f"memory LATENCY:WIDTH:STALL (default {' '.join(DEFAULT_CONFIGS)})")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count())
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--plot", help="write the PNG here")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bound is exceeded")
    parser.add_argument("--class-bound", type=float, default=5.0,
                        help="per op class mean |error| bound, %% (default 5; a class of packets "
                             "under 32 cycles on average: 1 cycle)")
    parser.add_argument("--stream-bound", type=float, default=2.0,
                        help="whole-stream error bound, %% (default 2)")
    parser.add_argument("--corpus-bound", type=float, default=1.0,
                        help="bound of the error of the corpus's total cycles per memory configuration, "
                             "%% (default 1)")
    parser.add_argument("--exact", action="store_true",
                        help="exit 1 when a packet of a class of EXACT_TOLERANCE is predicted further "
                             "from the RTL than its tolerance (in cycles) under a memory configuration "
                             "without wait states, or requested other bytes than the model counts")
    parser.add_argument("--exact-tolerance", action="append", type=parse_tolerance, default=[],
                        metavar="CLASS=CYCLES", help="add or override a class's tolerance of --exact")
    parser.add_argument("--exact-offset", type=int, default=0, metavar="CYCLES",
                        help="add CYCLES to every prediction the exact gate sees (to show that it "
                             "fails: the CTest cycle_exact_fails_when_exceeded)")
    args = parser.parse_args()
    configs = args.config or [parse_config(c) for c in DEFAULT_CONFIGS]
    if args.exact and not any(c["stall"] == 0 for c in configs):
        parser.error("--exact needs a --config without wait states (the model is exact only there)")
    npu_sim = args.build_dir / "bin" / "npu-sim"
    if not npu_sim.is_file():
        sys.exit(f"cycle_accuracy: {npu_sim} not found (build first, or --build-dir)")
    if args.capture_torch and importlib.util.find_spec("npu_bridge") is None:
        print("cycle_accuracy: the npu_bridge package is not installed (scripts/build-torch): "
              "skipped, since the PyTorch captures are part of the corpus")
        return 77

    with tempfile.TemporaryDirectory(prefix="npu-cycle-accuracy-") as workdir:
        entries = corpus(args, workdir)
        if not entries:
            sys.exit("cycle_accuracy: the corpus is empty (--no-examples without --random, --trace or --directed)")
        jobs = [(name, path, config) for config in configs for name, path in entries]
        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(measure, npu_sim, name, path, config, workdir, i)
                       for i, (name, path, config) in enumerate(jobs)]
            for (name, path, config), future in zip(jobs, futures):
                try:
                    packets, mismatches = future.result()
                except RuntimeError as error:
                    sys.exit(f"cycle_accuracy: {error}")
                results.append({"stream": name, "config": config_name(config), "packets": packets,
                                "byte_mismatches": mismatches})

    classes, streams = summarise(results)
    print(host_line())
    print(f"{len(entries)} streams x {len(configs)} memory configurations, "
          f"{sum(c['packets'] for c in classes.values())} packets")
    print("\n| op class | packets | mean abs error | mean signed error | worst packet |")
    print("|---|---:|---:|---:|---:|")
    for op in sorted(classes):
        c = classes[op]
        print(f"| {op} | {c['packets']} | {100 * c['mean_error']:.2f} % | {100 * c['bias']:+.2f} % | "
              f"{100 * c['worst']:.1f} % |")
    print("\n| memory configuration | streams | worst stream error | corpus error |")
    print("|---|---:|---:|---:|")
    corpus_errors = {}
    for config in configs:
        mine = [s for s in streams if s["config"] == config_name(config)]
        predicted, measured = sum(s["predicted"] for s in mine), sum(s["rtl"] for s in mine)
        worst = max(mine, key=lambda s: s["error"])
        corpus_errors[config_name(config)] = abs(predicted - measured) / measured
        print(f"| {config_name(config)} | {len(mine)} | {100 * worst['error']:.2f} % ({worst['stream']}) | "
              f"{100 * corpus_errors[config_name(config)]:.2f} % |")

    mismatched = [(r["stream"], r["config"], m) for r in results for m in r["byte_mismatches"]]
    by_op = {}
    for _, _, (_, op, _, _) in mismatched:
        by_op[op] = by_op.get(op, 0) + 1
    print(f"\nbytes requested per packet: the model's equal the RTL's for "
          f"{sum(c['packets'] for c in classes.values()) - len(mismatched)} packets, differ for "
          f"{len(mismatched)}" + (f" ({', '.join(f'{op} {n}' for op, n in sorted(by_op.items()))})" if by_op else ""))
    tolerances = dict(exact_tolerances(args.build_dir), **dict(args.exact_tolerance))
    exact_table, exact_excess = exactness(
        [dict(r, packets=[(op, p + args.exact_offset, m, i) for op, p, m, i in r["packets"]]) for r in results]
        if args.exact_offset else results, configs, tolerances)
    for name, rows in exact_table.items():
        print(f"\nexactness, {name}:\n\n| op class | packets | exact | max abs error (cycles) | tolerance |")
        print("|---|---:|---:|---:|---:|")
        for op in sorted(rows):
            row = rows[op]
            print(f"| {op} | {row['packets']} | {row['exact']} | {row['max_error']} | "
                  f"{'—' if row['tolerance'] is None else row['tolerance']} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"classes": classes, "streams": streams, "results": results,
                                                       "exactness": exact_table}))
    if args.plot:
        plot(results, classes, args.plot)
        print(f"\nplot written to {args.plot}")
    failures = []
    if args.check:
        failures += class_bound_failures(classes, args.class_bound)
    if args.check or args.exact:
        failures += [f"{stream} ({config}): packet {index} ({op}) requested (read, written) = {rtl} bytes, "
                     f"the model {model}" for stream, config, (index, op, model, rtl) in mismatched]
    if args.check:
        failures += [f"{s['stream']} ({s['config']}): whole-stream error {100 * s['error']:.2f} % > "
                     f"{args.stream_bound} %" for s in streams if 100 * s["error"] > args.stream_bound]
        failures += [f"the corpus ({config}): error {100 * error:.2f} % > {args.corpus_bound} %"
                     for config, error in corpus_errors.items() if 100 * error > args.corpus_bound]
    if args.exact:
        failures += [f"exact: {excess}" for excess in exact_excess]
    for failure in failures:
        print(f"cycle_accuracy: bound exceeded: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
