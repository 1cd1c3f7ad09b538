#!/usr/bin/env python3
"""Training step time of the tiny Qwen2 with LoRA adapters
(examples/torch/qwen2_lora.py) on ``npu`` against PyTorch CPU, same run.

A step is forward with labels (cross-entropy), backward, one AdamW step and
the loss read back to the host. Both models start from the same weights and
train on the same batch; the first --warmup steps (optimizer state, caches)
are not timed; the median step of the rest is reported with the npu/cpu
ratio, for fused AdamW (ADAMW packets) and the default foreach AdamW, with
the model's own positions and mask (its integer work falls back to the
CPU) and with host-prepared ones (nothing falls back). Not a test: run it by
hand. The CPU side runs with --threads intra-op threads (default 1, as
bench/torch_overhead.py).

    bench/torch_training.py [--steps 30] [--batch 4] [--length 16] [--threads 1]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import warnings

import torch

import npu_bridge  # noqa: F401

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torch"))
import qwen2_lora  # noqa: E402


def median_step(run: qwen2_lora.Run, warmup: int) -> float:
    return statistics.median(run.seconds[warmup:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1, help="CPU intra-op threads")
    args = parser.parse_args()
    if args.steps <= args.warmup:
        parser.error("--steps must exceed --warmup")
    torch.set_num_threads(args.threads)
    # Fallbacks are counted and reported below rather than warned about.
    warnings.filterwarnings("ignore", message="npu: ")

    print(f"torch {torch.__version__}, CPU threads {args.threads}, NPU backend {torch.npu.get_backend()}; "
          f"tiny Qwen2 + LoRA r=4 (q_proj, v_proj), batch {args.batch}x{args.length}, "
          f"median of {args.steps - args.warmup} steps")
    for optimizer in ("fused", "foreach"):
        for prepared in (False, True):
            cpu_model, cpu_opt, npu_model, npu_opt = qwen2_lora.lora_pair(4, optimizer, 3e-2)
            batches = qwen2_lora.dataset(args.steps, 1, args.batch, args.length)
            cpu = qwen2_lora.train(cpu_model, cpu_opt, batches, "cpu", prepared)
            torch.npu.reset_stats()
            npu = qwen2_lora.train(npu_model, npu_opt, batches, "npu", prepared)
            fallbacks = sum(torch.npu.fallback_stats().values()) // args.steps
            cpu_step, npu_step = median_step(cpu, args.warmup), median_step(npu, args.warmup)
            inputs = "host-prepared positions/mask" if prepared else "model-built positions/mask"
            print(f"LoRA step, AdamW {optimizer:7s}, {inputs}: cpu {cpu_step * 1e3:6.2f} ms   "
                  f"npu {npu_step * 1e3:6.2f} ms   ratio {npu_step / cpu_step:5.2f}   "
                  f"fallbacks/step {fallbacks}   max loss rel diff "
                  f"{qwen2_lora.max_relative_difference(npu.losses, cpu.losses):.1e}")


if __name__ == "__main__":
    main()
