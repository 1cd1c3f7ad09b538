"""A causal attention head on the NPU against numpy in float64."""
import pathlib

import numpy as np

import npu_kernel as nk

KERNEL = pathlib.Path(__file__).with_suffix(".npuasm")


def check() -> bool:
    c = nk.constants(KERNEL)
    t, d = c["T"], c["D"]
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((t, d)).astype(np.float32) for _ in range(3))
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(d)
    s[np.triu(np.ones((t, t), dtype=bool), 1)] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    out = nk.run(KERNEL, {"Q": q, "KEYS": k, "V": v}, {"O": ((t, d),)})
    return nk.compare("attention", out["O"], p @ v.astype(np.float64), 1e-4, 1e-5)


if __name__ == "__main__":
    nk.main(check)
