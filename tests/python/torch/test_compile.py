"""torch.compile with npu tensors: the graph-capturing backends run the
ops on the npu; the default (Inductor), which has no npu code generator,
refuses with a message naming the backends that work; backend="npu"
captures each graph's packets once and replays them (npu_bridge/compile.py)."""

from __future__ import annotations

import gc
import pathlib
import re
import sys

import pytest
import torch


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    # Compiled graphs hold the npu parameters they guard on; later tests
    # (backend switches) need the device empty.
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
    gc.collect()


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_graph_capturing_backends_run_on_the_npu(backend):
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
    compiled = torch.compile(lambda a: torch.relu(a) * 2.0)
    with pytest.raises(Exception, match='no code generator for the npu device.*backend="aot_eager"'):
        compiled(torch.randn(4, device="npu"))


# --- torch.compile(backend="npu"): captured once, replayed ------------------------------

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "examples" / "torch"))
import qwen2_forward  # noqa: E402


@pytest.fixture()
def stats():
    torch.npu.reset_compile_stats()
    yield torch.npu.compile_stats
    torch.npu.reset_compile_stats()


def _npu_mlp() -> torch.nn.Module:
    return _model().npu()


def _bits_equal(a: torch.Tensor, b: torch.Tensor) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.equal(a.cpu().view(torch.int32), b.cpu().view(torch.int32))


def test_mlp_forward_is_captured_once_and_replayed_bit_identical(stats):
    model = _npu_mlp()
    compiled = torch.compile(model, backend="npu")
    with torch.no_grad():
        for seed in range(4):
            x = torch.randn(8, 16, generator=torch.Generator().manual_seed(seed)).npu()
            _bits_equal(compiled(x), model(x))
    s = stats()
    assert s["graphs"] == 1 and s["breaks"] == 0
    assert s["replays"] == 3
    assert s["packets_per_graph"][0] > 0 and s["pool_bytes"] > 0


def test_a_shape_change_captures_again(stats):
    model = _npu_mlp()
    compiled = torch.compile(model, backend="npu", dynamic=False)
    with torch.no_grad():
        for batch in (8, 8, 5, 5, 8):
            x = torch.randn(batch, 16).npu()
            _bits_equal(compiled(x), model(x))
    s = stats()
    assert s["graphs"] == 2 and s["replays"] == 3 and s["breaks"] == 0


def test_a_replay_is_one_submission_of_the_recorded_packets(stats):
    model = _npu_mlp()
    compiled = torch.compile(model, backend="npu")
    x = torch.randn(8, 16).npu()
    with torch.no_grad():
        compiled(x)
        torch.npu.synchronize()
        submissions, packets = torch.npu.submission_count(), torch.npu.packet_count()
        compiled(x)
        assert torch.npu.submission_count() - submissions == 1
        assert torch.npu.packet_count() - packets == stats()["packets_per_graph"][0]


def test_replays_read_this_calls_inputs_and_write_fresh_outputs(stats):
    # Every input at another address than in the capture (all kept alive),
    # one a view at an offset into a larger tensor: wrong input patches read
    # the capture's inputs, wrong output patches leave the results elsewhere
    # or overwrite an earlier call's results.
    model = _npu_mlp()
    compiled = torch.compile(model, backend="npu")
    backing = [torch.randn(3, 8, 16).npu() for _ in range(3)]
    inputs = [b[1] for b in backing]
    with torch.no_grad():
        outputs = [compiled(x) for x in inputs]
        expected = [model(x) for x in inputs]
    assert stats()["replays"] == 2
    assert len({o.data_ptr() for o in outputs}) == 3
    for out, want in zip(outputs, expected):
        _bits_equal(out, want)


def test_a_graph_output_that_is_an_input_view(stats):
    compiled = torch.compile(lambda a: (a.t(), a * 2.0), backend="npu")
    for _ in range(3):
        a = torch.randn(4, 6).npu()
        view, doubled = compiled(a)
        assert view.data_ptr() == a.data_ptr() and torch.equal(view.cpu(), a.cpu().t())
        _bits_equal(doubled, a * 2.0)


def _sorted_plus_one(x: torch.Tensor) -> torch.Tensor:
    return (torch.sort(x * 2.0, dim=-1).values + 1.0).relu()


def test_an_op_that_falls_back_breaks_the_graph(stats):
    x = torch.randn(4, 8)
    torch.npu.reset_stats()
    _sorted_plus_one(x.npu())
    assert any("::sort" in op for op in torch.npu.fallback_stats()), "sort is native now: pick another op"
    compiled = torch.compile(_sorted_plus_one, backend="npu")
    # Call 1 finds the break, call 2 captures the graphs around it, calls 3 and 4 replay them.
    for seed in range(4):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(seed)).npu()
        _bits_equal(compiled(x), _sorted_plus_one(x))
    s = stats()
    assert s["breaks"] == 1
    (reason,) = s["break_reasons"]
    assert reason.startswith("CPU fallback (aten::sort")
    # The nodes before and after the sort are graphs of their own, replayed.
    assert s["graphs"] == 2 and s["replays"] == 4 and s["eager_graphs"] == 1


def test_random_ops_break_the_graph(stats):
    compiled = torch.compile(lambda a: torch.nn.functional.dropout(a * 2.0, 0.5, training=True) + 1.0,
                             backend="npu")
    a = torch.randn(64).npu() + 3.0
    first, second = compiled(a).cpu(), compiled(a).cpu()
    for out in (first, second):
        assert torch.all((out == 1.0) | torch.isclose(out, a.cpu() * 4.0 + 1.0))
    assert not torch.equal(first, second), "a replay repeated the draws"
    assert "random numbers (a replay would repeat the draws)" in stats()["break_reasons"]


def test_npu_debug_names_the_breaking_node(stats, capfd):
    torch.npu.set_debug_level(1)
    try:
        torch.compile(_sorted_plus_one, backend="npu")(torch.randn(4, 8).npu())
    finally:
        torch.npu.set_debug_level(0)
    assert re.search(r"\[COMPILE\] graph break in forward\d+ at node sort \(aten\.sort\.\w+\): CPU fallback",
                     capfd.readouterr().err)


def test_mlp_backward_is_captured_too(stats):
    eager, compiled_model = _npu_mlp(), _npu_mlp()
    compiled = torch.compile(compiled_model, backend="npu")
    for seed in range(3):
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(seed)).npu()
        for m in (eager, compiled_model):
            m.zero_grad()
        (compiled(x) ** 2).sum().backward()
        (eager(x) ** 2).sum().backward()
        for p, q in zip(compiled_model.parameters(), eager.parameters()):
            _bits_equal(p.grad, q.grad)
    s = stats()
    assert s["graphs"] == 2 and s["breaks"] == 0 and s["replays"] == 4


def test_tiny_qwen2_forward_bit_identical_to_eager(stats):
    model = qwen2_forward.build_model().to("npu")
    compiled = torch.compile(model, backend="npu", dynamic=False)
    with torch.no_grad():
        for seed, length in ((1, 12), (2, 12), (3, 12), (4, 7)):
            ids = qwen2_forward.sample_input_ids(batch=2, length=length, seed=seed).npu()
            _bits_equal(compiled(ids).logits, model(ids).logits)
    s = stats()
    # One graph per sequence length, the positions and causal mask included (arange, compares on the npu).
    assert s["breaks"] == 0 and s["graphs"] == 2 and s["replays"] == 2


@torch.library.custom_op("npu_compile_test::host_round_trip", mutates_args=())
def _host_round_trip(x: torch.Tensor) -> torch.Tensor:
    """Doubles x on the host: a copy to the host and back, as an op with no
    device kernel for part of its work would do."""
    return (x.cpu() * 2).to(x.device)


@_host_round_trip.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


def test_a_host_read_breaks_the_graph(stats):
    def loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(_host_round_trip(logits * 2.0), target)

    compiled = torch.compile(loss, backend="npu")
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        logits, target = torch.randn(6, 5, generator=g).npu(), torch.randint(0, 5, (6,), generator=g).npu()
        _bits_equal(compiled(logits, target), loss(logits, target))
    assert stats()["break_reasons"] == {"host synchronisation": 1}


def test_tiny_qwen2_lora_step_compiles_without_a_break(stats):
    # Forward, loss (labels with the shifted-out position ignored) and
    # backward as two captured graphs; the fused AdamW step runs eagerly
    # between the replays. Bit-identical to eager npu, within 1e-5 of the CPU.
    import qwen2_lora

    cpu_model, cpu_opt, eager_model, eager_opt = qwen2_lora.lora_pair(4, "fused", 3e-2)
    compiled_model = qwen2_lora.build_lora_model(4).to("npu")
    compiled_opt = qwen2_lora.make_optimizer(compiled_model, "fused", 3e-2)

    def forward_backward(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    compiled = torch.compile(compiled_model, backend="npu")
    for ids in qwen2_lora.dataset(4, 2, 2, 8):
        losses = []
        for model, optimizer, run in ((cpu_model, cpu_opt, cpu_model), (eager_model, eager_opt, eager_model),
                                      (compiled_model, compiled_opt, compiled)):
            device = next(model.parameters()).device
            losses.append(forward_backward(run, ids.to(device)).item())
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        cpu, eager, compiled_loss = losses
        assert compiled_loss == eager
        assert abs(compiled_loss - cpu) <= 1e-5 * abs(cpu)
    for p, q in zip(compiled_model.parameters(), eager_model.parameters()):
        _bits_equal(p, q)
    s = stats()
    assert s["breaks"] == 0 and s["graphs"] == 2 and s["replays"] == 6


def test_npu_compile_dump_replays_on_npu_sim(stats, tmp_path, monkeypatch):
    from npu_testing import assert_replay_passes, replay, rtl_built

    monkeypatch.setenv("NPU_COMPILE_DUMP", str(tmp_path / "dumps"))
    model = _npu_mlp()
    compiled = torch.compile(model, backend="npu")
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(5)).npu()
    y = compiled(x)
    (y**2).sum().backward()
    compiled(x)  # a replay writes nothing
    dumps = [pathlib.Path(d) for d in stats()["dumps"]]
    assert [re.fullmatch(r"(forward|backward)\d+\.0\.npubin", d.name) is not None for d in dumps] == [True, True]
    assert sorted(p.name for p in (tmp_path / "dumps").iterdir()) == sorted(d.name for d in dumps)
    # The results are the dumps' check regions: the forward's output, the
    # backward's weight gradient.
    assert y.detach().cpu().numpy().tobytes() in dumps[0].read_bytes()
    assert model[0].weight.grad.cpu().numpy().tobytes() in dumps[1].read_bytes()
    backends = ["iss", "rtl", "cosim"] if rtl_built() else ["iss"]
    for dump in dumps:
        for backend in backends:
            assert assert_replay_passes(replay(dump, "--backend", backend)) >= 2, (dump, backend)


def test_npu_compile_dump_names_a_file_that_is_no_directory(tmp_path, monkeypatch):
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("kept")
    monkeypatch.setenv("NPU_COMPILE_DUMP", str(not_a_directory))
    compiled = torch.compile(_npu_mlp(), backend="npu")
    with pytest.raises(Exception, match="NPU_COMPILE_DUMP=.*file: not a directory"):
        compiled(torch.randn(8, 16).npu())
    assert not_a_directory.read_text() == "kept"
