"""The Qwen2-0.5B-shaped model (examples/torch/qwen2_0_5b.py) with one of
its 24 layers, every other dimension as published (hidden 896, 14 heads, 2
KV heads, intermediate 4864, vocabulary 151,936, tied embeddings): the
forward, greedy generation and LoRA steps on the npu against the CPU. The
full model runs from the example (docs/pytorch.md has its figures)."""

from __future__ import annotations

import copy
import sys
import warnings

import torch

from npu_testing import REPO

sys.path.insert(0, str(REPO / "examples" / "torch"))
import qwen2_0_5b  # noqa: E402


def test_one_layer_of_qwen2_0_5b_runs_forward_generate_and_lora_as_on_the_cpu():
    warnings.filterwarnings("ignore", message="npu: ")
    cpu_model = qwen2_0_5b.build_model(layers=1)
    npu_model = copy.deepcopy(cpu_model).to("npu")
    ids = torch.randint(0, cpu_model.config.vocab_size, (1, 24), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        want = cpu_model(ids).logits
        got = npu_model(ids.to("npu")).logits
        assert qwen2_0_5b.relative_difference(got, want) <= 1e-4
        prompt = ids[:, :8]
        cpu_ids = cpu_model.generate(prompt, max_new_tokens=4, do_sample=False)
        npu_ids = npu_model.generate(prompt.to("npu"), max_new_tokens=4, do_sample=False).cpu()
    assert torch.equal(cpu_ids, npu_ids)
    del npu_model
    cpu_losses, _ = qwen2_0_5b.train(qwen2_0_5b.lora(copy.deepcopy(cpu_model)), ids, "cpu", steps=3)
    npu_losses, _ = qwen2_0_5b.train(qwen2_0_5b.lora(copy.deepcopy(cpu_model)).to("npu"), ids.to("npu"), "npu",
                                     steps=3)
    assert cpu_losses[-1] < cpu_losses[0]  # the adapters learn
    for c, n in zip(cpu_losses, npu_losses):
        assert abs(n - c) <= 1e-4 * abs(c)
