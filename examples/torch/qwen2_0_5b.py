#!/usr/bin/env python3
"""A Qwen2-0.5B-shaped model on the NPU against the CPU: forward, greedy
generation and LoRA fine-tuning steps.

The model is built from the published Qwen2-0.5B configuration (24 layers,
hidden 896, 14 attention heads, 2 key-value heads, intermediate 4864,
vocabulary 151,936, tied embeddings) with seeded random weights: nothing is
downloaded. --layers N keeps the first N layers for a quick run (every
other dimension stays). One copy runs on the CPU and one on
torch.device("npu"), from identical weights:

  * forward of a 1 x --tokens batch: the logits' largest difference relative
    to the largest CPU logit;
  * greedy generate(max_new_tokens=--new-tokens) from the first 16 tokens:
    the generated ids on both devices;
  * --steps LoRA steps (peft, r=8 on every attention and MLP projection,
    AdamW) on the batch's next-token loss: both loss curves and their
    largest relative difference;

then the device memory peak and the time per forward and per training step
on each device.

    python3 examples/torch/qwen2_0_5b.py [--layers 24] [--tokens 128] [--new-tokens 16] [--steps 10]
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from collections.abc import Callable

import torch
from peft import LoraConfig, get_peft_model
from transformers import Qwen2Config, Qwen2ForCausalLM

import npu_bridge  # noqa: F401  (registers torch.device("npu"))


def qwen2_0_5b_config(layers: int = 24) -> Qwen2Config:
    """The published Qwen2-0.5B configuration, with `layers` of its 24 layers."""
    config = Qwen2Config(
        vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=layers,
        num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
        rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, hidden_act="silu",
        attention_dropout=0.0, use_cache=True)
    config._attn_implementation = "eager"
    return config


def build_model(layers: int, seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(qwen2_0_5b_config(layers)).eval()


def relative_difference(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.cpu() - want).abs().max() / want.abs().max()).item()


def timed(device: str, call: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, float]:
    start = time.perf_counter()
    result = call()
    if device == "npu":
        torch.npu.synchronize()
    return result, time.perf_counter() - start


def lora(model: Qwen2ForCausalLM, seed: int = 1) -> torch.nn.Module:
    config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0,
                        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    torch.manual_seed(seed)
    peft_model = get_peft_model(model, config)
    # peft starts B at zero; a random B makes the first step's gradients
    # reach every adapter matrix.
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.02)
    return peft_model


def train(model: torch.nn.Module, ids: torch.Tensor, device: str, steps: int) -> tuple[list[float], float]:
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, fused=True)
    losses, seconds = [], 0.0
    for _ in range(steps):
        def step() -> torch.Tensor:
            optimizer.zero_grad()
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            return loss.detach()
        loss, elapsed = timed(device, step)
        losses.append(loss.item())
        seconds += elapsed
    return losses, seconds / max(steps, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=24, help="layers of the 24 to keep")
    parser.add_argument("--tokens", type=int, default=128, help="sequence length of the batch")
    parser.add_argument("--new-tokens", type=int, default=16, help="greedy tokens to generate")
    parser.add_argument("--steps", type=int, default=10, help="LoRA training steps")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="npu: ")

    cpu_model = build_model(args.layers)
    npu_model = copy.deepcopy(cpu_model).to("npu")
    ids = torch.randint(0, cpu_model.config.vocab_size, (1, args.tokens),
                        generator=torch.Generator().manual_seed(2))
    parameters = sum(p.numel() for p in cpu_model.parameters())
    print(f"Qwen2-0.5B-shaped model: {args.layers} layers, {parameters / 1e6:.1f} M parameters, "
          f"batch 1 x {args.tokens}, device memory {torch.npu.mem_get_info()[1] / 2**30:.1f} GiB")

    torch.npu.reset_peak_memory_stats()
    with torch.no_grad():
        want, cpu_forward = timed("cpu", lambda: cpu_model(ids).logits)
        got, npu_forward = timed("npu", lambda: npu_model(ids.to("npu")).logits)
    print(f"forward: logits differ by {relative_difference(got, want):.2e} of the largest; "
          f"{npu_forward:.2f} s on npu, {cpu_forward:.2f} s on cpu ({npu_forward / cpu_forward:.2f}x)")

    prompt = ids[:, :16]
    with torch.no_grad():
        cpu_ids = cpu_model.generate(prompt, max_new_tokens=args.new_tokens, do_sample=False)
        npu_ids = npu_model.generate(prompt.to("npu"), max_new_tokens=args.new_tokens, do_sample=False).cpu()
    print(f"generate: {'identical' if torch.equal(cpu_ids, npu_ids) else 'DIFFERENT'} ids "
          f"{npu_ids[0, prompt.shape[1]:].tolist()}")

    if args.steps:
        del npu_model
        cpu_losses, cpu_step = train(lora(copy.deepcopy(cpu_model)), ids, "cpu", args.steps)
        npu_losses, npu_step = train(lora(copy.deepcopy(cpu_model)).to("npu"), ids.to("npu"), "npu", args.steps)
        worst = max(abs(a - b) / abs(b) for a, b in zip(npu_losses, cpu_losses))
        print("LoRA step   cpu loss     npu loss")
        for step, (c, n) in enumerate(zip(cpu_losses, npu_losses)):
            print(f"{step:9d}   {c:.6f}   {n:.6f}")
        print(f"LoRA: losses differ by at most {worst:.2e} (relative); "
              f"{npu_step:.2f} s per step on npu, {cpu_step:.2f} s on cpu ({npu_step / cpu_step:.2f}x)")
    print(f"device memory peak: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB; "
          f"fallbacks: {dict(torch.npu.fallback_stats()) or 'none'}")


if __name__ == "__main__":
    main()
