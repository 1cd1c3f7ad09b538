#!/usr/bin/env python3
"""Throughput of the ISS's AVX2 micro-program kernels against numpy, one
thread each, on the same machine and the same 2^24 float32 elements count.

    OPENBLAS_NUM_THREADS=1 bench/arith/compare_numpy.py [build-dir]

Prints ns/element for numpy and for npu-arith-bench, and the ratio
(numpy time / NPU time: above 1 means the ISS kernel is faster).
"""
import os
import pathlib
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (the thread limits must be set first)

N = 1 << 24
REPEATS = 5


def numpy_ns_per_element(func, *args):
    out = np.empty(N, dtype=np.float32)
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        func(*args, out=out)
        best = min(best, time.perf_counter() - start)
    return best / N * 1e9


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("NPU_BUILD_DIR", "build"))
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, N).astype(np.float32)
    y = rng.uniform(-10, 10, N).astype(np.float32)
    numpy_times = {
        "exp": numpy_ns_per_element(np.exp, x),
        "log": numpy_ns_per_element(np.log, np.abs(x)),
        "sqrt": numpy_ns_per_element(np.sqrt, np.abs(x)),
        "div": numpy_ns_per_element(np.divide, x, y),
        "tanh": numpy_ns_per_element(np.tanh, x),
        "sin": numpy_ns_per_element(np.sin, x),
    }
    result = subprocess.run([build / "bin" / "npu-arith-bench", str(N), str(REPEATS)],
                            capture_output=True, text=True, check=True)
    npu_times = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and not line.startswith("#") and fields[0] != "program":
            npu_times[fields[0]] = float(fields[1])
    print(f"numpy {np.__version__}, {N} float32 elements, best of {REPEATS}, one thread")
    print(f"{'function':10} {'numpy ns/el':>12} {'npu ns/el':>10} {'numpy/npu':>10}")
    for name, t in numpy_times.items():
        print(f"{name:10} {t:12.3f} {npu_times[name]:10.3f} {t / npu_times[name]:10.2f}")


if __name__ == "__main__":
    main()
