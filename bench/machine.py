"""The machine a benchmark ran on, printed beside every figure: hosts differ
(an AVX-512 host makes OpenBLAS pick its SkylakeX kernel), and a machine
shared with other work slows single runs, so the load average goes with the
numbers.

    import machine
    print(machine.line())          # one line for a console report
    info = machine.describe()      # the same as a dict, for JSON
"""

from __future__ import annotations

import os
import pathlib
import platform

# The ISA extensions that decide which kernels run (of /proc/cpuinfo's flags).
EXTENSIONS = ("sse4_2", "avx", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
              "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def _cpuinfo() -> tuple[str, set[str]]:
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        for text in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = text.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    return model, flags


def blas() -> list[dict]:
    """numpy's BLAS libraries as threadpoolctl sees them (kernel, threads,
    version); empty when numpy or threadpoolctl is missing."""
    try:
        import numpy  # noqa: F401  (loads the BLAS threadpoolctl inspects)
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [{k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for i in threadpool_info() if i.get("user_api") == "blas"]


def describe(with_blas: bool = False) -> dict:
    model, flags = _cpuinfo()
    info = {
        "cpu": model,
        "hardware_threads": os.cpu_count(),
        "isa_extensions": [e for e in EXTENSIONS if e in flags],
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if with_blas:
        info["blas"] = blas()
    return info


def line(with_blas: bool = False) -> str:
    info = describe(with_blas)
    text = (f"CPU: {info['cpu']}, {info['hardware_threads']} hardware threads; ISA extensions: "
            f"{' '.join(info['isa_extensions']) or '?'}; load average "
            f"{' '.join(f'{x:.2f}' for x in info['load_average'])}")
    for lib in info.get("blas", []):
        text += (f"; BLAS: {lib['internal_api']} {lib['version']} kernel {lib['architecture']}, "
                 f"{lib['num_threads']} thread(s)")
    return text


def finish(benchmark: str, load_before: list[float], json_path: pathlib.Path | None, **figures) -> None:
    """Prints the load average after a run and, given a path, writes the
    run's figures there as JSON with the benchmark's name, the machine and
    the load average before and after."""
    import json

    load_after = describe()["load_average"]
    print(f"load average before {load_before}, after {load_after}")
    if json_path:
        json_path.write_text(json.dumps({
            "benchmark": benchmark, "machine": describe(), "load_average_before": load_before,
            "load_average_after": load_after, **figures}, indent=2) + "\n")
