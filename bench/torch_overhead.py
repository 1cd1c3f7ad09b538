#!/usr/bin/env python3
"""Overhead of the PyTorch bridge, measured against PyTorch CPU in the same run:

* per-op time of a 64x64 ``mm`` on ``npu`` (dispatch, packet building and
  submission, the ISS executing it in the background; synchronised once per
  batch of ops) against ``torch.mm`` on the CPU;
* a tiny Qwen2 forward pass (examples/torch/qwen2_forward.py's model) on
  ``npu`` against CPU eager, each including the copy of the logits to the host;
  also on ``npu`` with position ids and mask prepared on the host, which
  removes the model's integer ops and so every CPU fallback.

Prints microseconds / milliseconds and the npu/cpu ratios. Not a test: run it
by hand. The CPU side runs with --threads intra-op threads (default 1: at
these sizes more threads only add synchronisation, and a loaded machine makes
them erratic).

    bench/torch_overhead.py [--threads 1] [--repeat 200] [--attn eager]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import torch

import npu_bridge  # noqa: F401

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torch"))
import qwen2_forward  # noqa: E402


def best_of(runs: int, measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(runs))


def per_op_seconds(op: Callable[[], object], repeat: int, sync: Callable[[], None]) -> float:
    for _ in range(20):
        op()
    sync()
    start = time.perf_counter()
    for _ in range(repeat):
        op()
    sync()
    return (time.perf_counter() - start) / repeat


def forward_seconds(model, input_ids: torch.Tensor, repeat: int, **inputs: torch.Tensor) -> float:
    with torch.no_grad():
        for _ in range(3):
            model(input_ids, **inputs).logits.cpu()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            model(input_ids, **inputs).logits.cpu()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="CPU intra-op threads")
    parser.add_argument("--repeat", type=int, default=500, help="mm calls per measurement")
    parser.add_argument("--forwards", type=int, default=30, help="forward passes per measurement")
    parser.add_argument("--attn", choices=["eager", "sdpa"], default="eager")
    parser.add_argument("--length", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # Fallbacks are counted and reported below rather than warned about.
    warnings.filterwarnings("ignore", message="npu: ")

    a, b = torch.randn(64, 64), torch.randn(64, 64)
    an, bn = a.to("npu"), b.to("npu")
    cpu_mm = best_of(3, lambda: per_op_seconds(lambda: torch.mm(a, b), args.repeat, lambda: None))
    npu_mm = best_of(3, lambda: per_op_seconds(lambda: torch.mm(an, bn), args.repeat, torch.npu.synchronize))

    model = qwen2_forward.build_model(args.attn)
    input_ids = qwen2_forward.sample_input_ids(batch=1, length=args.length)
    cpu_fwd = forward_seconds(model, input_ids, args.forwards)
    model.to("npu")
    npu_ids = input_ids.to("npu")
    torch.npu.reset_stats()
    npu_fwd = forward_seconds(model, npu_ids, args.forwards)
    fallbacks = torch.npu.fallback_stats()
    prepared = {k: v.to("npu") for k, v in qwen2_forward.prepared_inputs(input_ids).items()}
    npu_prepared = forward_seconds(model, npu_ids, args.forwards, **prepared)

    print(f"torch {torch.__version__}, CPU threads {args.threads}, NPU backend {torch.npu.get_backend()}")
    print(f"mm 64x64:            cpu {cpu_mm * 1e6:8.1f} us/op   npu {npu_mm * 1e6:8.1f} us/op   "
          f"ratio {npu_mm / cpu_mm:5.2f}")
    print(f"Qwen2 forward ({args.attn}, 1x{args.length}): cpu {cpu_fwd * 1e3:6.2f} ms   "
          f"npu {npu_fwd * 1e3:6.2f} ms   ratio {npu_fwd / cpu_fwd:5.2f} (target <= 3)")
    per_forward = {op: n // (args.forwards + 3) for op, n in sorted(fallbacks.items())}
    print(f"  CPU fallbacks per forward: {per_forward or 'none'}")
    print(f"  npu with host-prepared positions and mask (no fallback): {npu_prepared * 1e3:6.2f} ms   "
          f"ratio {npu_prepared / cpu_fwd:5.2f}")


if __name__ == "__main__":
    main()
