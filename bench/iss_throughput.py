#!/usr/bin/env python3
"""ISS throughput against numpy on the same machine, in the same run:
MATMUL 512^3 and 1024^3 against single-thread OpenBLAS sgemm, and ADD, MUL
and EXP over 2^24 float32 elements against numpy. Prints both figures and
the ratio (target: ISS >= 0.5x numpy). Not a test.

The bf16 and f16 MATMUL rows (1024^3, A, B and C of that type) compare
against numpy's float32 sgemm on the inputs widened to float32: numpy has
no bf16 GEMM, and the ISS computes exactly that product (widening, then
its f32 kernel) plus one rounding per result.

    bench/iss_throughput.py [--build build]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
# The rows whose numpy baseline is float32 sgemm on inputs widened from a 16-bit type.
WIDENED = ("matmul_bf16_1024", "matmul_f16_1024")


def numpy_baseline() -> dict:
    # Runs in a child so that the OpenBLAS settings apply from its start.
    code = r'''
import json, time
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
n = 1024
a = rng.uniform(-1, 1, (n, n)).astype(np.float32); c = np.empty((n, n), np.float32)
for name, w in (("matmul_bf16_1024", bf16(a)), ("matmul_f16_1024", a.astype(np.float16).astype(np.float32))):
    s = best(lambda: np.matmul(w, w, out=c), 4)
    out[name] = {"seconds": s, "gflops": 2 * n**3 / s / 1e9}
n = 1 << 24
a = rng.uniform(-1, 1, n).astype(np.float32); b = rng.uniform(-1, 1, n).astype(np.float32)
c = np.empty(n, np.float32)
for name, f in (("add", lambda: np.add(a, b, out=c)), ("mul", lambda: np.multiply(a, b, out=c)),
                ("exp", lambda: np.exp(a, out=c))):
    s = best(f, 5)
    out[f"{name}_2^24"] = {"seconds": s, "gelements_per_s": n / s / 1e9}
out["blas"] = [{k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
               for i in threadpool_info()]
print(json.dumps(out))
'''
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    return json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                     capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.environ.get("NPU_BUILD_DIR", REPO / "build"))
    args = parser.parse_args()
    iss = json.loads(subprocess.run([str(pathlib.Path(args.build) / "bin" / "npu-iss-bench")],
                                    check=True, capture_output=True, text=True).stdout)
    base = numpy_baseline()
    print(f"numpy BLAS: {base.pop('blas')}")
    print(f"{'benchmark':<50} {'ISS':>14} {'numpy':>14} {'ratio':>7}")
    for name, figures in iss.items():
        unit = "gflops" if "gflops" in figures else "gelements_per_s"
        ratio = figures[unit] / base[name][unit]
        label = "GFLOP/s" if unit == "gflops" else "Gelem/s"
        row = name + (" (vs numpy f32 on widened inputs)" if name in WIDENED else "")
        print(f"{row:<50} {figures[unit]:>8.2f} {label} {base[name][unit]:>8.2f} {label} {ratio:>6.2f}x")


if __name__ == "__main__":
    main()
