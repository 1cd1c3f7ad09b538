#!/usr/bin/env python3
"""An MLP classifier's forward pass on the NPU, compared with the CPU.

Linear layers become MATMUL (+ bias add), activations and softmax are NPU
instructions; run with NPU_DEBUG=1 to see every op as it is lowered.

    python3 examples/torch/mlp_forward.py [--batch 32]
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

import npu_bridge  # noqa: F401  (registers torch.device("npu"))


def build_mlp(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(32, 64),
        nn.GELU(approximate="tanh"),
        nn.Linear(64, 64),
        nn.SiLU(),
        nn.RMSNorm(64),
        nn.Linear(64, 10),
        nn.LogSoftmax(dim=-1),
    ).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()

    model = build_mlp()
    x = torch.randn(args.batch, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(x)
        model.to("npu")
        torch.npu.reset_stats()
        result = model(x.to("npu")).cpu()
    difference = (result - expected).abs().max().item()
    print(f"MLP log-probabilities {tuple(result.shape)}: max abs difference to CPU {difference:.2e}")
    print("native ops (calls/packets):",
          ", ".join(f"{op} {s['calls']}/{s['packets']}" for op, s in sorted(torch.npu.op_stats().items())
                    if s["packets"]))
    print("CPU fallbacks:", torch.npu.fallback_stats() or "none")


if __name__ == "__main__":
    main()
