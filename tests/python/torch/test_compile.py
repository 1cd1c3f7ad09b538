"""torch.compile with npu tensors: the graph-capturing backends run the
ops on the npu; the default (Inductor), which has no npu code generator,
refuses with a message naming them (until torch.compile(backend="npu"))."""

from __future__ import annotations

import pytest
import torch


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_graph_capturing_backends_run_on_the_npu(backend):
    torch._dynamo.reset()
    model = _model()
    x = torch.randn(8, 16)
    expected = model(x)
    on_npu = model.npu()
    compiled = torch.compile(on_npu, backend=backend)
    out = compiled(x.npu())
    assert out.is_npu
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)
    out.sum().backward()
    assert all(p.grad is not None and p.grad.is_npu for p in on_npu.parameters())


def test_inductor_refuses_naming_the_backends_that_work():
    torch._dynamo.reset()
    compiled = torch.compile(lambda a: torch.relu(a) * 2.0)
    with pytest.raises(Exception, match='no code generator for the npu device.*backend="aot_eager"'):
        compiled(torch.randn(4, device="npu"))
