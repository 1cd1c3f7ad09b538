"""A SwiGLU MLP on the NPU against numpy in float64."""
import pathlib

import numpy as np

import npu_kernel as nk

KERNEL = pathlib.Path(__file__).with_suffix(".npuasm")


def check() -> bool:
    c = nk.constants(KERNEL)
    n, h, f = c["TOKENS"], c["HIDDEN"], c["FFN"]
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, h)).astype(np.float32)
    wg, wu = ((rng.standard_normal((h, f)) / np.sqrt(h)).astype(np.float32) for _ in range(2))
    wd = (rng.standard_normal((f, h)) / np.sqrt(f)).astype(np.float32)
    x64 = x.astype(np.float64)
    g = x64 @ wg
    want = ((g / (1 + np.exp(-g))) * (x64 @ wu)) @ wd
    out = nk.run(KERNEL, {"X": x, "WG": wg, "WU": wu, "WD": wd}, {"Y": ((n, h),)})
    return nk.compare("mlp", out["Y"], want, 1e-4, 1e-5)


if __name__ == "__main__":
    nk.main(check)
