"""Module.to("npu") (and .npu(), .cpu()) move parameters in place, as
PyTorch does between CPU and CUDA: each Parameter object stays and only its
data moves. So weights tied across modules stay one tensor, an optimizer
built before the move updates the moved parameters, and the device holds a
tied weight once."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

VOCAB = 64


def tiny_tied_model(family: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if family == "gpt2":
        config = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                            tie_word_embeddings=True, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = GPT2LMHeadModel(config)
    else:
        config = Qwen2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                             tie_word_embeddings=True)
        model = Qwen2ForCausalLM(config)
    model.config._attn_implementation = "eager"
    assert model.lm_head.weight is model.get_input_embeddings().weight
    return model.train()


def block_bytes(nbytes: int) -> int:
    return (nbytes + 511) // 512 * 512  # the allocator's 512-byte granules (docs/pytorch.md)


def test_to_and_back_keeps_each_parameter_and_its_gradient():
    model = torch.nn.Linear(8, 4)
    model(torch.randn(3, 8)).sum().backward()
    weight, grad = model.weight, model.weight.grad
    expected = weight.detach().clone()
    model.to("npu")
    assert model.weight is weight and weight.device.type == "npu"
    assert model.weight.grad is grad and grad.device.type == "npu"
    assert torch.equal(weight.detach().cpu(), expected)
    model.cpu()
    assert model.weight is weight and weight.device.type == "cpu"
    model.npu()
    assert model.weight is weight and weight.device.type == "npu"
    assert torch._has_compatible_shallow_copy_type(torch.zeros(1), torch.zeros(1, device="npu"))
    assert torch._has_compatible_shallow_copy_type(torch.zeros(1, device="npu"), torch.zeros(1))


@pytest.mark.parametrize("family", ["gpt2", "qwen2"])
def test_a_tied_model_fine_tunes_as_on_the_cpu(family):
    cpu_model = tiny_tied_model(family)
    npu_model = copy.deepcopy(cpu_model)
    # Built before the move: it must update the parameters the model uses.
    npu_optimizer = torch.optim.AdamW(npu_model.parameters(), lr=1e-3)
    parameters = list(npu_model.parameters())
    npu_model.to("npu")
    assert all(a is b for a, b in zip(npu_model.parameters(), parameters, strict=True))
    assert npu_model.lm_head.weight is npu_model.get_input_embeddings().weight
    assert all(p.device.type == "npu" for p in npu_model.parameters())
    cpu_optimizer = torch.optim.AdamW(cpu_model.parameters(), lr=1e-3)
    batch = torch.randint(0, VOCAB, (2, 8), generator=torch.Generator().manual_seed(1))
    for step in range(5):
        losses = []
        for model, optimizer, device in ((cpu_model, cpu_optimizer, "cpu"), (npu_model, npu_optimizer, "npu")):
            ids = batch.to(device)
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
        cpu_loss, npu_loss = losses
        assert abs(npu_loss - cpu_loss) <= 1e-5 * abs(cpu_loss), f"step {step}: npu {npu_loss}, cpu {cpu_loss}"
    # The tied weight got the gradients of both of its uses, once.
    torch.testing.assert_close(npu_model.lm_head.weight.detach().cpu(), cpu_model.lm_head.weight.detach(),
                               rtol=1e-5, atol=1e-6)


def test_the_device_holds_a_tied_weight_once():
    model = tiny_tied_model("qwen2")
    tensors = [*model.parameters(), *model.buffers()]  # parameters() lists the tied weight once
    baseline = torch.npu.memory_allocated()
    model.to("npu")
    assert torch.npu.memory_allocated() - baseline == sum(block_bytes(t.nbytes) for t in tensors)
    del model, tensors
    assert torch.npu.memory_allocated() == baseline
