"""Tiled GEMM on the NPU against numpy (float64 accumulation)."""
import pathlib

import numpy as np

import npu_kernel as nk

KERNEL = pathlib.Path(__file__).with_suffix(".npuasm")


def check() -> bool:
    c = nk.constants(KERNEL)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((c["M"], c["K"])).astype(np.float32)
    b = rng.standard_normal((c["K"], c["N"])).astype(np.float32)
    out = nk.run(KERNEL, {"A": a, "B": b}, {"C": ((c["M"], c["N"]),)})
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return nk.compare("gemm", out["C"] / scale, (a.astype(np.float64) @ b) / scale, 0, c["K"] * 2**-23)


if __name__ == "__main__":
    nk.main(check)
