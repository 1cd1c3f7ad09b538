"""Tiny random-init Hugging Face models on the npu against PyTorch CPU:
forward logits, greedy generate(max_new_tokens=8) with default inputs (the
model builds its own positions and masks), and the ops that fell back to
the CPU on the way (issue 15's acceptance: none).

    python examples/torch/hf_models.py [qwen2 llama gpt2 bert] [--autocast bf16|f16]

--autocast runs both devices under torch.autocast with that dtype.
"""

from __future__ import annotations

import argparse
import sys

import torch
import transformers


AUTOCAST_TYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def tiny_config(name: str) -> transformers.PretrainedConfig:
    # Special tokens inside the tiny vocabulary (generate compares against them).
    tokens = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)
    common = dict(vocab_size=128, hidden_size=64, num_attention_heads=4, num_hidden_layers=2,
                  intermediate_size=128, **tokens)
    if name == "qwen2":
        return transformers.Qwen2Config(num_key_value_heads=2, max_position_embeddings=128,
                                        **common)
    if name == "llama":
        return transformers.LlamaConfig(num_key_value_heads=2, max_position_embeddings=128,
                                        **common)
    if name == "gpt2":
        return transformers.GPT2Config(vocab_size=128, n_embd=64, n_head=4, n_layer=2,
                                       n_positions=128, **tokens)
    if name == "bert":
        return transformers.BertConfig(max_position_embeddings=128, **common)
    raise ValueError(f"unknown model {name!r}: choose qwen2, llama, gpt2 or bert")


def build(name: str) -> torch.nn.Module:
    torch.manual_seed(0)
    config = tiny_config(name)
    config.attn_implementation = "eager"
    cls = transformers.BertModel if name == "bert" else transformers.AutoModelForCausalLM
    model = cls.from_config(config) if name != "bert" else cls(config)
    return model.eval()


def sample_ids(batch: int = 2, length: int = 12) -> torch.Tensor:
    return torch.randint(3, 128, (batch, length), generator=torch.Generator().manual_seed(1))


def outputs(model: torch.nn.Module, name: str, ids: torch.Tensor, device: str,
            autocast: torch.dtype | None = None) -> dict:
    model.to(device)
    ids = ids.to(device)
    with torch.no_grad(), torch.autocast(device, dtype=autocast, enabled=autocast is not None):
        out = model(input_ids=ids)
        result = {"logits": (out.last_hidden_state if name == "bert" else out.logits).float().cpu()}
        if name != "bert":
            result["generated"] = model.generate(ids, max_new_tokens=8, do_sample=False,
                                                 pad_token_id=0).cpu()
    return result


def relative_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


def run(name: str, autocast: torch.dtype | None = None) -> dict:
    """The npu against the CPU, both under torch.autocast(dtype=autocast)
    when it is given."""
    model = build(name)
    ids = sample_ids()
    expected = outputs(model, name, ids, "cpu", autocast)
    torch.npu.reset_stats()
    actual = outputs(model, name, ids, "npu", autocast)
    torch.npu.synchronize()
    report = {"relative": relative_difference(actual["logits"], expected["logits"]),
              "fallbacks": dict(torch.npu.fallback_stats())}
    if "generated" in expected:
        report["same_ids"] = torch.equal(actual["generated"], expected["generated"])
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["qwen2", "llama", "gpt2", "bert"])
    parser.add_argument("--autocast", choices=sorted(AUTOCAST_TYPES), help="run under torch.autocast")
    args = parser.parse_args(argv)
    for name in args.models:
        report = run(name, AUTOCAST_TYPES.get(args.autocast))
        fallbacks = report["fallbacks"]
        print(f"{name}: logits within {report['relative']:.2e} relative"
              + (f", generated ids {'identical' if report['same_ids'] else 'DIFFERENT'}"
                 if "same_ids" in report else "")
              + f", {sum(fallbacks.values())} fallbacks")
        for op, count in sorted(fallbacks.items(), key=lambda kv: -kv[1]):
            print(f"  {count:5d}  {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
