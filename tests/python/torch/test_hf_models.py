"""Tiny random-init Hugging Face models on the npu against PyTorch CPU
(examples/torch/hf_models.py): forward logits within 1e-4 relative and
greedy generate(max_new_tokens=8) with default inputs (the models build
their own positions and masks) giving the CPU's token ids, with no op
falling back to the CPU (issue 15)."""

from __future__ import annotations

from npu_testing import REPO, run_python

MODELS = ["qwen2", "llama", "gpt2", "bert"]


def test_every_model_matches_the_cpu_under_npu_strict():
    # NPU_STRICT=1 turns any fallback into an error: none happens.
    result = run_python(
        f"import sys; sys.path.insert(0, {str(REPO / 'examples' / 'torch')!r})\n"
        "import torch, hf_models\n"
        f"for name in {MODELS!r}:\n"
        "    report = hf_models.run(name)\n"
        "    print(name, report)\n"
        "    assert report['relative'] < 1e-4 and report.get('same_ids', True), report\n"
        "    assert report['fallbacks'] == {}, report\n"
        "print('ok')",
        NPU_STRICT="1")
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]
