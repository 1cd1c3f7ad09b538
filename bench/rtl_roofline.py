#!/usr/bin/env python3
"""Roofline of the Verilated RTL: MATMUL 128x128x128 and 256x256x64 against
the peak of the T x T array, an elementwise ADD and a unary EXP on N
elements against the larger of their compute roof (L lanes, one ROM word
per cycle: EXP's micro-program binds it) and the bus bandwidth (the busier
AXI direction), COPY against the bus bandwidth, and
a COPY_STRIDED with inner stride 2 against the bus bandwidth of the bytes
it delivers. One packet each on the default memory (isa/hardware.td's
latency, full bus width, no wait states). Builds npu-rtl-roofline if
needed, prints the CPU and a markdown table (and the JSON with --json).

    bench/rtl_roofline.py [--build-dir build] [--elements N] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


def cpu_name() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    parser.add_argument("--elements", type=int, default=1 << 20,
                        help="elements of the vector and copy workloads (a multiple of 2048)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir)
    subprocess.run(["ninja", "-C", str(build), "npu-rtl-roofline"], check=True, stdout=subprocess.DEVNULL)
    result = subprocess.run([str(build / "bin" / "npu-rtl-roofline"), str(args.elements)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        return result.returncode
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    print(f"CPU: {cpu_name()} ({os.cpu_count()} logical cores)")
    print("| workload | compute cycles | memory cycles | binds | device cycles | achieved / cycle "
          "| peak / cycle | % of bound | wall s |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        unit = r["unit"]
        compute = f"{r['compute_cycles']:,.0f}" if r["compute_cycles"] else "–"
        memory = f"{r['memory_cycles']:,.0f}" if r["memory_cycles"] else "–"
        print(f"| {r['workload']} | {compute} | {memory} | {r['bound']} | {r['device_cycles']:,} | "
              f"{r['achieved_per_cycle']:.2f} {unit} | {r['peak_per_cycle']:.0f} {unit} | "
              f"{r['percent_of_bound']:.1f} % | {r['seconds']:.1f} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
