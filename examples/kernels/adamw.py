"""An AdamW step on the NPU against the torch.optim.AdamW formula in float64."""
import math
import pathlib

import numpy as np

import npu_kernel as nk

KERNEL = pathlib.Path(__file__).with_suffix(".npuasm")


def check() -> bool:
    c = nk.constants(KERNEL)
    n = c["N"]
    rng = np.random.default_rng(7)
    p = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    m = (rng.standard_normal(n) * 0.1).astype(np.float32)
    v = rng.uniform(0, 0.01, n).astype(np.float32)
    lr, beta1, beta2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 0.01, 7
    bc1, bc2 = 1 - beta1**step, 1 - beta2**step
    hyper = np.array([lr, beta1, beta2, eps, wd, bc1, math.sqrt(bc2), 0], dtype=np.float32)
    out = nk.run(KERNEL, {"PARAM": p, "GRAD": g, "M1": m, "M2": v, "HYPER": hyper},
                 {"PARAM": ((n,),), "M1": ((n,),), "M2": ((n,),)})
    # The reference uses the hyper-parameters as the device receives them (float32).
    lr, beta1, beta2, eps, wd, bc1, bc2_sqrt = (float(h) for h in hyper[:7])
    p64, g64 = p.astype(np.float64) * (1 - lr * wd), g.astype(np.float64)
    m64 = beta1 * m + (1 - beta1) * g64
    v64 = beta2 * v + (1 - beta2) * g64 * g64
    p64 = p64 - (lr / bc1) * m64 / (np.sqrt(v64) / bc2_sqrt + eps)
    return (nk.compare("adamw param", out["PARAM"], p64, 1e-5, 1e-7)
            and nk.compare("adamw exp_avg", out["M1"], m64, 1e-5, 1e-7)
            and nk.compare("adamw exp_avg_sq", out["M2"], v64, 1e-5, 1e-9))


if __name__ == "__main__":
    nk.main(check)
