#!/usr/bin/env python3
"""Simulation speed of the Verilated RTL: simulated clock cycles per second
on a GEMM stream and a softmax stream, with the single-threaded model and
the model Verilated with --threads 2. Builds the two benchmark binaries if
needed, runs each workload, prints a markdown table (and the JSON with
--json).

    bench/rtl_cycles.py [--build-dir build] [--repeat N] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
VTA_TSIM_CYCLES_PER_SECOND = 190_000  # published figure, not measured here


def run(binary: pathlib.Path, repeat: int) -> list[dict]:
    result = subprocess.run([str(binary), str(repeat)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    parser.add_argument("--repeat", type=int, default=4, help="packets per stream")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir)
    subprocess.run(["ninja", "-C", str(build), "npu-rtl-bench", "npu-rtl-bench-mt"], check=True,
                   stdout=subprocess.DEVNULL)
    results = []
    for name in ("npu-rtl-bench", "npu-rtl-bench-mt"):
        results += run(build / "bin" / name, args.repeat)
    single = {r["workload"]: r["cycles_per_second"] for r in results if r["threads"] == 1}
    print("| workload | Verilator threads | device cycles | wall s | simulated cycles/s | vs 1 thread |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['workload']} x{r['packets']} | {r['threads']} | {r['device_cycles']} | "
              f"{r['seconds']:.2f} | {r['cycles_per_second']:,.0f} | "
              f"{r['cycles_per_second'] / single[r['workload']]:.2f} |")
    print(f"(for scale: VTA's tsim runs about {VTA_TSIM_CYCLES_PER_SECOND:,} cycles/s with threads on ResNet-18)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
