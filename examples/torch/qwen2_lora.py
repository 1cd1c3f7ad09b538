#!/usr/bin/env python3
"""LoRA fine-tuning of a tiny Qwen2-architecture causal LM on the NPU.

The model is examples/torch/qwen2_forward.py's tiny Qwen2 (random weights,
nothing downloaded) with peft LoRA adapters on q_proj and v_proj. Two copies
with identical initial weights are trained for --steps AdamW steps on the
same synthetic token data (made here: a small fixed set of batches of
sequences that count up by a fixed stride modulo the vocabulary, so the next
token is learnable, trained on in turn), one on the CPU and one on
torch.device("npu"). Forward, backward (autograd) and the
optimizer step (fused AdamW: one ADAMW packet per adapter matrix) run on
the NPU; the script prints both loss curves side by side, their largest
relative difference, the time per step on each device and what ran natively
or fell back.

The model builds its own position ids and causal mask on the device (try
it with NPU_STRICT=1: nothing falls back); --prepared-inputs hands it float
positions and an additive mask made on the host instead. --autocast bf16|f16
runs both forwards under torch.autocast with that type; the curves then
agree within a quarter unit of the type's roundoff (docs/pytorch.md).

    python3 examples/torch/qwen2_lora.py [--steps 20] [--batches 1] [--lr 0.03]
        [--optimizer fused|foreach] [--prepared-inputs] [--autocast bf16|f16]
        [--capture step.npubin]

--capture records one more training step on the NPU (forward, backward,
optimizer step, the loss read back) into a .npubin trace that
`build/bin/npu-sim step.npubin` replays, checking every value the host read.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from peft import LoraConfig, get_peft_model

import npu_bridge  # noqa: F401  (registers torch.device("npu"))
import qwen2_forward

# Loss curves agree to this relative difference at every step (docs/pytorch.md).
LOSS_RTOL = 1e-4
AUTOCAST_TYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def loss_tolerance(autocast: torch.dtype | None) -> float:
    """LOSS_RTOL in float32; under autocast a quarter of the reduced type's
    unit roundoff (docs/pytorch.md, Automatic mixed precision)."""
    return LOSS_RTOL if autocast is None else torch.finfo(autocast).eps / 8


def build_lora_model(rank: int = 4, seed: int = 0) -> torch.nn.Module:
    """The tiny Qwen2 with LoRA adapters on the attention's q and v
    projections; only the adapters train."""
    model = qwen2_forward.build_model("eager", seed).train()
    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                        target_modules=["q_proj", "v_proj"])
    torch.manual_seed(seed + 1)  # the adapters' initialisation
    return get_peft_model(model, config)


def synthetic_batches(batch: int, length: int, vocab: int = 256, seed: int = 2) -> Iterator[torch.Tensor]:
    """Endless batches of sequences start, start + s, start + 2s, ...
    (mod vocab), each row with its own start and a stride s from a few."""
    generator = torch.Generator().manual_seed(seed)
    while True:
        start = torch.randint(0, vocab, (batch, 1), generator=generator)
        stride = torch.randint(1, 4, (batch, 1), generator=generator)
        yield (start + stride * torch.arange(length)) % vocab


def trainable(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def make_optimizer(model: torch.nn.Module, kind: str, lr: float) -> torch.optim.Optimizer:
    # fused=True: one _fused_adamw_ call per step (ADAMW packets on npu, the
    # fused CPU kernel on the CPU); foreach: torch's default multi-tensor path.
    options = {"fused": True} if kind == "fused" else {"foreach": True}
    return torch.optim.AdamW(trainable(model), lr=lr, betas=(0.9, 0.99), weight_decay=0.01, **options)


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, input_ids: torch.Tensor,
               prepared: dict[str, torch.Tensor], autocast: torch.dtype | None = None) -> float:
    with torch.autocast(input_ids.device.type, dtype=autocast, enabled=autocast is not None):
        loss = model(input_ids=input_ids, labels=input_ids, **prepared).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


@dataclass
class Run:
    losses: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def train(model: torch.nn.Module, optimizer: torch.optim.Optimizer, batches: list[torch.Tensor],
          device: str, prepare: bool, autocast: torch.dtype | None = None) -> Run:
    run = Run()
    for input_ids in batches:
        prepared = qwen2_forward.prepared_inputs(input_ids) if prepare else {}
        start = time.perf_counter()
        ids = input_ids.to(device)
        inputs = {k: v.to(device) for k, v in prepared.items()}
        run.losses.append(train_step(model, optimizer, ids, inputs, autocast))
        run.seconds.append(time.perf_counter() - start)
    return run


def max_relative_difference(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / abs(y) for x, y in zip(a, b, strict=True))


def lora_pair(rank: int, optimizer: str, lr: float) -> tuple[torch.nn.Module, torch.optim.Optimizer,
                                                              torch.nn.Module, torch.optim.Optimizer]:
    """The CPU model and its optimizer, and an identical copy on the NPU."""
    cpu_model = build_lora_model(rank)
    npu_model = copy.deepcopy(cpu_model).to("npu")
    return (cpu_model, make_optimizer(cpu_model, optimizer, lr),
            npu_model, make_optimizer(npu_model, optimizer, lr))


def dataset(steps: int, distinct: int, batch: int, length: int) -> list[torch.Tensor]:
    """The batches of `steps` steps: `distinct` fixed batches in turn."""
    data = synthetic_batches(batch, length)
    fixed = [next(data) for _ in range(distinct)]
    return [fixed[step % distinct] for step in range(steps)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--batches", type=int, default=1, help="distinct batches, trained on in turn")
    parser.add_argument("--rank", type=int, default=4, help="LoRA rank")
    parser.add_argument("--lr", type=float, default=3e-2)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU intra-op threads (at these sizes more only add synchronisation)")
    parser.add_argument("--optimizer", choices=["fused", "foreach"], default="fused")
    parser.add_argument("--prepared-inputs", action="store_true",
                        help="pass host-built positions and mask (no CPU fallback at all)")
    parser.add_argument("--autocast", choices=sorted(AUTOCAST_TYPES),
                        help="run the forwards under torch.autocast with this type")
    parser.add_argument("--capture", metavar="PATH", help="record one more NPU training step into a .npubin")
    args = parser.parse_args()
    for name in ("steps", "batches", "batch", "length", "rank", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    torch.set_num_threads(args.threads)
    # Fallbacks are counted and reported below rather than warned about.
    warnings.filterwarnings("ignore", message="npu: ")
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing", category=FutureWarning)

    cpu_model, cpu_optimizer, npu_model, npu_optimizer = lora_pair(args.rank, args.optimizer, args.lr)
    batches = dataset(args.steps, args.batches, args.batch, args.length)

    autocast = AUTOCAST_TYPES.get(args.autocast)
    tolerance = loss_tolerance(autocast)
    cpu = train(cpu_model, cpu_optimizer, batches, "cpu", args.prepared_inputs, autocast)
    torch.npu.reset_stats()
    npu = train(npu_model, npu_optimizer, batches, "npu", args.prepared_inputs, autocast)
    native = torch.npu.op_stats()
    fallbacks = torch.npu.fallback_stats()

    trained = sum(p.numel() for p in trainable(cpu_model))
    total = sum(p.numel() for p in cpu_model.parameters())
    print(f"tiny Qwen2 + LoRA r={args.rank} on q_proj/v_proj: {trained} of {total} parameters train; "
          f"{args.batches} batch(es) of {args.batch}x{args.length} tokens, AdamW ({args.optimizer}, lr {args.lr:g}), "
          f"NPU backend {torch.npu.get_backend()}")
    print(f"{'step':>4}  {'loss cpu':>10}  {'loss npu':>10}  {'rel diff':>9}")
    for step, (c, n) in enumerate(zip(cpu.losses, npu.losses, strict=True), 1):
        print(f"{step:4d}  {c:10.6f}  {n:10.6f}  {abs(n - c) / abs(c):9.2e}")
    difference = max_relative_difference(npu.losses, cpu.losses)
    verdict = "tracks" if difference < tolerance else "DOES NOT track"
    print(f"max relative loss difference {difference:.2e}: the NPU run {verdict} the CPU run "
          f"(tolerance {tolerance:g}{', autocast ' + args.autocast if autocast else ''})")
    # The first step includes one-time work (optimizer state, caches): the
    # median of the rest is the steady state.
    steady = slice(1, None) if args.steps > 1 else slice(None)
    cpu_step = statistics.median(cpu.seconds[steady])
    npu_step = statistics.median(npu.seconds[steady])
    print(f"time per step: cpu {cpu_step * 1e3:.1f} ms, npu {npu_step * 1e3:.1f} ms "
          f"(ratio {npu_step / cpu_step:.2f})")
    busiest = sorted(((s["packets"], op, s["calls"]) for op, s in native.items() if s["packets"]), reverse=True)
    print(f"native ops: {len(busiest)}, {sum(p for p, _, _ in busiest)} packets; most packets (calls/packets): "
          + ", ".join(f"{op} {calls}/{packets}" for packets, op, calls in busiest[:12]))
    print("CPU fallbacks:", ", ".join(f"{op} x{n}" for op, n in sorted(fallbacks.items())) or "none")
    if autocast:
        print(f"ops on {args.autocast} computed on binary32 copies (torch.npu.widened_stats()):",
              ", ".join(f"{op} x{n}" for op, n in sorted(torch.npu.widened_stats().items())) or "none")

    if args.capture:
        input_ids = batches[-1]
        prepared = qwen2_forward.prepared_inputs(input_ids) if args.prepared_inputs else {}
        with torch.npu.capture(args.capture):
            loss = train_step(npu_model, npu_optimizer, input_ids.to("npu"),
                              {k: v.to("npu") for k, v in prepared.items()}, autocast)
        print(f"one training step (loss {loss:.6f}) written to {args.capture} (replay: npu-sim {args.capture})")
    if difference >= tolerance:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
