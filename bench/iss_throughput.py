#!/usr/bin/env python3
"""ISS throughput against numpy on the same machine, in the same run:
MATMUL 512^3 and 1024^3 against OpenBLAS sgemm with one thread (the ISS on
NPU_ISS_THREADS=1) and with two (both on two threads); ADD, MUL, EXP,
SIGMOID and SILU over 2^24 float32 elements and SOFTMAX and RMSNORM over
4096 rows of 1024 against numpy's expressions (np.add, np.multiply,
np.exp, 1/(1+np.exp(-x)), x/(1+np.exp(-x)), the row softmax
e=np.exp(x-x.max(1,keepdims=True)); e/e.sum(1,keepdims=True) and
x/np.sqrt((x*x).mean(1,keepdims=True)+eps)*w), which run on one thread
whatever the BLAS's count: the ISS on one and on two threads against them.
Prints the machine (CPU model, ISA extensions, load average), the OpenBLAS
kernel (threadpoolctl's internal_api and architecture), the ISS's GEMM
kernel, vector implementation and thread counts, both figures and the ratio
(targets: MATMUL and the elementwise ops >= 0.9x numpy, the vector
micro-programs >= 1.0x). Each figure is the best of several runs of the
whole comparison (--repeats), each itself a best of several packets: a
machine shared with other work (builds) slows single runs. --json FILE
writes the raw figures. Not a test.

The bf16 and f16 MATMUL rows (1024^3, A, B and C of that type) compare
against numpy's float32 sgemm on the inputs widened to float32: numpy has
no bf16 GEMM, and the ISS computes exactly that product (widening, then
its f32 kernel) plus one rounding per result.

    bench/iss_throughput.py [--build build] [--repeats 3] [--json out.json]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import machine

REPO = pathlib.Path(__file__).resolve().parents[1]
# The rows whose numpy baseline is float32 sgemm on inputs widened from a 16-bit type.
WIDENED = ("matmul_bf16_1024", "matmul_f16_1024")
# The rows of the ISS's GEMM kernel alone (no packet checks, no cycle model)
# and the numpy row each compares with.
KERNEL_ROWS = {"gemm_kernel_512": "matmul_512", "gemm_kernel_1024": "matmul_1024"}


def numpy_baseline(threads: int, widened: bool) -> dict:
    # Runs in a child so that the OpenBLAS settings apply from its start.
    code = r'''
import json, sys, time
WIDENED = sys.argv[1] == "1"
import numpy as np
from threadpoolctl import threadpool_info
def best(f, repeats):
    f()
    t = float("inf")
    for _ in range(repeats):
        s = time.perf_counter(); f(); t = min(t, time.perf_counter() - s)
    return t
out = {}
rng = np.random.default_rng(1)
for n in (512, 1024):
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32); b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.empty((n, n), np.float32)
    s = best(lambda: np.matmul(a, b, out=c), 10 if n == 512 else 4)
    out[f"matmul_{n}"] = {"seconds": s, "gflops": 2 * n**3 / s / 1e9}
# The reduced-precision rows: float32 sgemm on the inputs rounded to the
# type (bf16: RNE on the high half) and widened back to float32.
def bf16(x):
    u = x.view(np.uint32)
    return ((u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000).astype(np.uint32).view(np.float32)
if WIDENED:
    n = 1024
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32); c = np.empty((n, n), np.float32)
    for name, w in (("matmul_bf16_1024", bf16(a)), ("matmul_f16_1024", a.astype(np.float16).astype(np.float32))):
        s = best(lambda: np.matmul(w, w, out=c), 4)
        out[name] = {"seconds": s, "gflops": 2 * n**3 / s / 1e9}
n = 1 << 24
a = rng.uniform(-1, 1, n).astype(np.float32); b = rng.uniform(-1, 1, n).astype(np.float32)
c = np.empty(n, np.float32)
x = a[:4096 * 1024].reshape(4096, 1024); w = b[:1024]; eps = np.float32(1e-6)
def softmax():
    e = np.exp(x - x.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
def rmsnorm():
    return x / np.sqrt((x * x).mean(1, keepdims=True) + eps) * w
for name, f, count in (("add_2^24", lambda: np.add(a, b, out=c), n),
                       ("mul_2^24", lambda: np.multiply(a, b, out=c), n),
                       ("exp_2^24", lambda: np.exp(a, out=c), n),
                       ("sigmoid_2^24", lambda: 1 / (1 + np.exp(-a)), n),
                       ("silu_2^24", lambda: a / (1 + np.exp(-a)), n),
                       ("softmax_4096x1024", softmax, x.size),
                       ("rmsnorm_4096x1024", rmsnorm, x.size)):
    s = best(f, 5)
    out[name] = {"seconds": s, "gelements_per_s": count / s / 1e9}
out["blas"] = [{k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
               for i in threadpool_info()]
print(json.dumps(out))
'''
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    return json.loads(subprocess.run([sys.executable, "-c", code, "1" if widened else "0"],
                                     env=env, check=True, capture_output=True, text=True).stdout)


def iss_figures(build: pathlib.Path, threads: int) -> dict:
    env = dict(os.environ, NPU_ISS_THREADS=str(threads))
    return json.loads(subprocess.run([str(build / "bin" / "npu-iss-bench")], env=env, check=True,
                                     capture_output=True, text=True).stdout)


def best_of(runs: list) -> dict:
    # The fastest run of each row (every row has one figure: its rate).
    out = dict(runs[0])
    for run in runs[1:]:
        for name, figures in run.items():
            unit = "gflops" if "gflops" in figures else "gelements_per_s"
            if figures[unit] > out[name][unit]:
                out[name] = figures
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of the whole comparison; each figure is the best of them")
    parser.add_argument("--json", type=pathlib.Path,
                        help="also write the raw figures (both sides, ratios, machine) here")
    args = parser.parse_args()
    build = pathlib.Path(args.build)
    print(machine.line())
    report = {"machine": machine.describe(), "load_average_before": os.getloadavg(), "runs": []}
    for threads in (1, 2):
        iss_runs, base_runs, hosts, blas = [], [], [], None
        for _ in range(args.repeats):
            # Interleaved, so that a burst of other work slows both sides alike.
            run = iss_figures(build, threads)
            hosts.append(run.pop("host"))
            base = numpy_baseline(threads, widened=threads == 1)
            blas = base.pop("blas")
            iss_runs.append(run)
            base_runs.append(base)
        iss, base = best_of(iss_runs), best_of(base_runs)
        host = hosts[0]
        print(f"\n{threads} thread(s): ISS GEMM kernel {host['gemm_kernel']}, vector "
              f"micro-programs {host['vector_implementation']}, on {host['threads']} thread(s); "
              f"numpy BLAS: {blas} (numpy's elementwise ufuncs: one thread); "
              f"best of {args.repeats} runs")
        rows = {}
        print(f"{'benchmark':<50} {'ISS':>14} {'numpy':>14} {'ratio':>7}")
        for name, figures in iss.items():
            baseline = base.get(KERNEL_ROWS.get(name, name))
            if baseline is None:
                continue  # rows measured on one thread only
            unit = "gflops" if "gflops" in figures else "gelements_per_s"
            ratio = figures[unit] / baseline[unit]
            label = "GFLOP/s" if unit == "gflops" else "Gelem/s"
            row = name + (" (vs numpy f32 on widened inputs)" if name in WIDENED else
                          " (kernel alone, vs numpy matmul)" if name in KERNEL_ROWS else "")
            print(f"{row:<50} {figures[unit]:>8.2f} {label} {baseline[unit]:>8.2f} {label} "
                  f"{ratio:>6.2f}x")
            rows[name] = {"iss": figures, "numpy": baseline, "ratio": ratio}
        report["runs"].append({"threads": threads, "iss_host": host, "blas": blas, "rows": rows})
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        report["load_average_after"] = os.getloadavg()
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
