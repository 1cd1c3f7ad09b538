#!/usr/bin/env python3
"""Overhead of the PyTorch bridge, measured against PyTorch CPU in the same
run, with issue 17's targets:

* per-op host overhead: the issuing thread's CPU time per ``torch.add(a, b,
  out=c)`` on 64-element ``npu`` tensors (Python call, dispatch, packet
  building and submission; the device runs on its own thread), target
  <= 2 us; the CPU op's whole time beside it;
* a 64x64 ``mm``, per op, synchronised once per batch (target <= 1.5x CPU);
* 1,000 small elementwise ops (500 mul + 500 add on 32x32 tensors, results
  allocated), wall time including the final synchronisation (target
  <= 1.1x CPU);
* a 1024x1024 ``mm`` at equal threads: CPU intra-op threads = the ISS's
  NPU_ISS_THREADS = --threads (target <= 1.0x CPU);
* a tiny Qwen2 forward pass (examples/torch/qwen2_forward.py's model)
  including the copy of the logits to the host; also with position ids and
  mask prepared on the host (no integer ops).

Each figure is the best of --best measurements. Wall times suffer on a
machine shared with other work: the load average is printed with them.
Not a test.

    bench/torch_overhead.py [--threads 1] [--best 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time
import warnings
from collections.abc import Callable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import machine  # noqa: E402

TARGETS = {"host_overhead_us": 2.0, "mm_64": 1.5, "elementwise_1000": 1.1, "mm_1024": 1.0}


def best_of(runs: int, measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(runs))


def timed(run: Callable[[], None], clock: Callable[[], float] = time.perf_counter) -> float:
    start = clock()
    run()
    return clock() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU intra-op threads and the ISS's NPU_ISS_THREADS")
    parser.add_argument("--best", type=int, default=5, help="measurements per figure (best taken)")
    parser.add_argument("--forwards", type=int, default=20, help="forward passes per measurement")
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    # Read by the ISS when the device starts, so before the bridge loads.
    os.environ["NPU_ISS_THREADS"] = str(args.threads)

    import torch
    import npu_bridge  # noqa: F401
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torch"))
    import qwen2_forward

    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message="npu: ")  # fallbacks are counted below
    load_before = machine.describe()["load_average"]

    def sync(device: str) -> None:
        if device == "npu":
            torch.npu.synchronize()

    def host_time_per_op(device: str, ops: int = 20000) -> float:
        a, b = torch.randn(64, device=device), torch.randn(64, device=device)
        c = torch.empty(64, device=device)

        def run() -> None:
            for _ in range(ops):
                torch.add(a, b, out=c)
        run()
        sync(device)
        seconds = timed(run, time.thread_time)
        sync(device)
        return seconds / ops

    def mm_per_op(device: str, n: int, ops: int) -> float:
        a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)

        def run() -> None:
            for _ in range(ops):
                torch.mm(a, b)
            sync(device)
        run()
        return timed(run) / ops

    def elementwise_1000(device: str) -> float:
        x, y = torch.randn(32, 32, device=device), torch.randn(32, 32, device=device)

        def run() -> None:
            z = x
            for _ in range(500):
                z = z * y
                z = z + x
            sync(device)
        run()
        return timed(run)

    def forward(model, input_ids, **inputs) -> float:
        with torch.no_grad():
            model(input_ids, **inputs).logits.cpu()
            return timed(lambda: [model(input_ids, **inputs).logits.cpu()
                                  for _ in range(args.forwards)]) / args.forwards

    rows: dict[str, dict] = {}

    def row(name: str, cpu: float, npu: float, unit: str) -> None:
        rows[name] = {"cpu": cpu, "npu": npu, "unit": unit, "ratio": npu / cpu}

    # Interleaved per measurement, so that a burst of other work slows both sides alike.
    for name, measure, unit, scale in (
            ("host_overhead_us", host_time_per_op, "us", 1e6),
            ("mm_64", lambda d: mm_per_op(d, 64, 500), "us", 1e6),
            ("elementwise_1000", elementwise_1000, "ms", 1e3),
            ("mm_1024", lambda d: mm_per_op(d, 1024, 3), "ms", 1e3)):
        cpu, npu = [], []
        for _ in range(args.best):
            cpu.append(measure("cpu"))
            npu.append(measure("npu"))
        row(name, min(cpu) * scale, min(npu) * scale, unit)

    model = qwen2_forward.build_model("eager")
    input_ids = qwen2_forward.sample_input_ids(batch=1, length=args.length)
    cpu_forward = best_of(args.best, lambda: forward(model, input_ids))
    model.to("npu")
    npu_ids = input_ids.to("npu")
    torch.npu.reset_stats()
    npu_forward = best_of(args.best, lambda: forward(model, npu_ids))
    fallbacks = torch.npu.fallback_stats()
    prepared = {k: v.to("npu") for k, v in qwen2_forward.prepared_inputs(input_ids).items()}
    npu_prepared = best_of(args.best, lambda: forward(model, npu_ids, **prepared))
    row("qwen2_forward", cpu_forward * 1e3, npu_forward * 1e3, "ms")
    row("qwen2_forward_prepared", cpu_forward * 1e3, npu_prepared * 1e3, "ms")

    print(machine.line())
    print(f"torch {torch.__version__}; CPU intra-op threads {args.threads}; NPU backend "
          f"{torch.npu.get_backend()}, NPU_ISS_THREADS={args.threads}; best of {args.best}")
    labels = {"host_overhead_us": "per-op host time (add, out=; thread CPU time)",
              "mm_64": "mm 64x64 per op", "elementwise_1000": "1,000 small elementwise ops",
              "mm_1024": "mm 1024x1024 per op", "qwen2_forward": "tiny Qwen2 forward (1x%d)" % args.length,
              "qwen2_forward_prepared": "  with host-prepared positions and mask"}
    for name, r in rows.items():
        if name == "host_overhead_us":
            target = f"npu {r['npu']:.2f} us <= {TARGETS[name]:.1f} us: " + \
                ("met" if r["npu"] <= TARGETS[name] else "NOT met")
        elif name in TARGETS:
            target = f"<= {TARGETS[name]:.1f}x: " + ("met" if r["ratio"] <= TARGETS[name] else "NOT met")
        else:
            target = ""
        print(f"{labels[name]:<48} cpu {r['cpu']:9.2f} {r['unit']:<2}  npu {r['npu']:9.2f} {r['unit']:<2}  "
              f"ratio {r['ratio']:5.2f}  {target}")
    per_forward = {op: n // (args.forwards * args.best + args.best) for op, n in sorted(fallbacks.items())}
    print(f"CPU fallbacks per forward: {per_forward or 'none'}")
    machine.finish("torch_overhead", load_before, args.json, torch=torch.__version__,
                   threads=args.threads, best_of=args.best, rows=rows, targets=TARGETS,
                   fallbacks_per_forward=per_forward)
    return 0


if __name__ == "__main__":
    sys.exit(main())
