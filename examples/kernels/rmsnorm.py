"""RMSNorm on the NPU against numpy in float64."""
import pathlib

import numpy as np

import npu_kernel as nk

KERNEL = pathlib.Path(__file__).with_suffix(".npuasm")


def check() -> bool:
    c = nk.constants(KERNEL)
    rows, cols = c["ROWS"], c["COLS"]
    rng = np.random.default_rng(4)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    x64 = x.astype(np.float64)
    rstd = 1 / np.sqrt((x64 * x64).mean(axis=1) + 1e-6)
    out = nk.run(KERNEL, {"X": x, "W": w}, {"Y": ((rows, cols),), "RSTD": ((rows,),)})
    return (nk.compare("rmsnorm y", out["Y"], x64 * rstd[:, None] * w, 1e-5, 1e-6)
            and nk.compare("rmsnorm rstd", out["RSTD"], rstd, 1e-5, 0))


if __name__ == "__main__":
    nk.main(check)
