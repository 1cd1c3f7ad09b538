#!/usr/bin/env python3
"""A forward pass of a tiny Qwen2-architecture causal LM on the NPU.

The model is built from a small transformers.Qwen2Config with seeded random
weights (nothing is downloaded), run on the CPU and on torch.device("npu"),
and the logits are compared. By default the model prepares its own position
ids and causal mask, which uses integer ops the NPU does not have (they fall
back to the CPU); --prepared-inputs hands it float positions and an additive
4-D mask built on the host, which makes the whole forward native (try it with
NPU_STRICT=1).

    python3 examples/torch/qwen2_forward.py [--attn sdpa] [--capture fwd.npubin]
"""

from __future__ import annotations

import argparse
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

import npu_bridge  # noqa: F401  (registers torch.device("npu"))


def tiny_config(attn_implementation: str = "eager") -> Qwen2Config:
    config = Qwen2Config(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        tie_word_embeddings=False,
    )
    config._attn_implementation = attn_implementation
    return config


def build_model(attn_implementation: str = "eager", seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(tiny_config(attn_implementation)).eval()


def sample_input_ids(batch: int = 2, length: int = 12, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, 256, (batch, length), generator=torch.Generator().manual_seed(seed))


def prepared_inputs(input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Position ids (as floats: rotary embeddings take them as such) and an
    additive causal mask, built on the host so that the model need not."""
    batch, length = input_ids.shape
    positions = torch.arange(length, dtype=torch.float32).unsqueeze(0)
    causal = torch.full((length, length), torch.finfo(torch.float32).min).triu(1)
    return {"position_ids": positions, "attention_mask": causal.expand(batch, 1, length, length)}


def forward_logits(model: Qwen2ForCausalLM, input_ids: torch.Tensor, device: str,
                   prepared: bool = False) -> torch.Tensor:
    kwargs = {k: v.to(device) for k, v in prepared_inputs(input_ids).items()} if prepared else {}
    with torch.no_grad():
        return model(input_ids.to(device), **kwargs).logits


def relative_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attn", choices=["eager", "sdpa"], default="eager")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--length", type=int, default=12)
    parser.add_argument("--prepared-inputs", action="store_true",
                        help="pass host-built positions and mask (an all-native forward)")
    parser.add_argument("--capture", metavar="PATH", help="record the NPU forward into a .npubin")
    args = parser.parse_args()

    model = build_model(args.attn)
    input_ids = sample_input_ids(args.batch, args.length)
    expected = forward_logits(model, input_ids, "cpu", args.prepared_inputs)

    model.to("npu")
    torch.npu.reset_stats()
    start = time.perf_counter()
    if args.capture:
        with torch.npu.capture(args.capture):
            logits = forward_logits(model, input_ids, "npu", args.prepared_inputs).cpu()
    else:
        logits = forward_logits(model, input_ids, "npu", args.prepared_inputs).cpu()
    elapsed = time.perf_counter() - start

    print(f"Qwen2 ({args.attn} attention) logits {tuple(logits.shape)} on {torch.npu.get_backend()}: "
          f"{elapsed * 1e3:.1f} ms, max relative difference to CPU {relative_difference(logits, expected):.2e}")
    native = torch.npu.op_stats()
    print("native ops (calls/packets):",
          ", ".join(f"{op} {s['calls']}/{s['packets']}" for op, s in sorted(native.items()) if s["packets"]))
    print("CPU fallbacks:", torch.npu.fallback_stats() or "none")
    if args.capture:
        print(f"trace written to {args.capture} (replay: npu-sim {args.capture})")


if __name__ == "__main__":
    main()
