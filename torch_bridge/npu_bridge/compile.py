"""``torch.compile(model, backend="npu")``: each graph as one recorded packet stream.

AOTAutograd hands the backend its forward and backward ATen graphs. On the
first call with given input shapes a graph runs once, node by node, with the
bridge capturing (``_C._graph_capture_begin``): the packets the native ops
submit are recorded as they run, so this call's results are real, and the
allocations come from a pool the compiled graph keeps. Later calls with the
same shapes replay the recording in one runtime submission, its address
fields moved to the call's inputs and to fresh outputs (GraphCapture.cpp).

A node whose work a replay could not repeat breaks the graph: it ran on the
CPU (a fallback), waited for or copied to/from the host, draws random
numbers (a replay would repeat its draws), or has CPU tensors among its
operands or results. The graph is then split around such nodes
(``torch.fx.passes.split_module``): the nodes between them are captured as
graphs of their own, the breaking nodes run eagerly on every call. Breaks
are counted with their reasons in :func:`compile_stats`; ``NPU_DEBUG=1``
names each node.

With ``NPU_COMPILE_DUMP=dir`` every capture is also written as a
self-contained ``.npubin`` (the runtime's trace capture: the live device
memory as data, the packets, the graph's inputs and outputs after the run
as check regions) that ``npu-sim`` replays on iss, rtl or cosim. See
docs/pytorch.md, "torch.compile".
"""

from __future__ import annotations

import operator
import os
import pathlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch.fx.passes.split_module import split_module
from torch.utils._pytree import tree_flatten, tree_unflatten

from . import _C

__all__ = ["compile_stats", "reset_compile_stats", "CompiledGraph"]


class _Stats:
    def __init__(self) -> None:
        self.graphs = 0  # captured streams
        self.packets: list[int] = []  # per captured stream
        self.pool_bytes = 0
        self.breaks = 0
        self.break_reasons: Counter[str] = Counter()
        self.break_nodes: list[str] = []
        self.eager_graphs = 0  # graphs (or segments) run node by node
        self.replays = 0
        self.compile_seconds = 0.0
        self.dumps: list[str] = []  # .npubin files written (NPU_COMPILE_DUMP)


_stats = _Stats()


def compile_stats() -> dict[str, Any]:
    """What torch.compile(backend="npu") did since the last reset: captured
    graphs, their packets and pool bytes, graph breaks and their reasons,
    replays, and the time spent capturing and partitioning."""
    return {
        "graphs": _stats.graphs,
        "packets_per_graph": list(_stats.packets),
        "pool_bytes": _stats.pool_bytes,
        "breaks": _stats.breaks,
        "break_reasons": dict(_stats.break_reasons),
        "break_nodes": list(_stats.break_nodes),
        "eager_graphs": _stats.eager_graphs,
        "replays": _stats.replays,
        "compile_seconds": _stats.compile_seconds,
        "dumps": list(_stats.dumps),
    }


def reset_compile_stats() -> None:
    global _stats
    _stats = _Stats()


def _is_npu(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "npu"


def _fallback_counts() -> dict[str, int]:
    return dict(_C._fallback_stats())


def _dump_directory() -> pathlib.Path | None:
    """NPU_COMPILE_DUMP's directory, created if missing, or None."""
    setting = os.environ.get("NPU_COMPILE_DUMP")
    if not setting:
        return None
    directory = pathlib.Path(setting)
    if directory.exists() and not directory.is_dir():
        raise RuntimeError(f"NPU_COMPILE_DUMP={setting}: not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _read_back(values: object) -> None:
    """Copies the npu tensors among `values` to the host: a trace capture
    keeps their final bytes as check regions."""
    for t in tree_flatten(values)[0]:
        if _is_npu(t) and t.numel():
            t.cpu()


class _CaptureInterpreter(torch.fx.Interpreter):
    """Runs a graph under capture and finds the nodes a replay could not repeat."""

    def __init__(self, module: torch.fx.GraphModule) -> None:
        super().__init__(module)
        self.unsupported: dict[torch.fx.Node, str] = {}

    def run_node(self, node: torch.fx.Node) -> Any:
        if node.op not in ("call_function", "call_method", "call_module"):
            return super().run_node(node)
        args, kwargs = self.fetch_args_kwargs_from_env(node)
        reason = None
        if torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
            reason = "random numbers (a replay would repeat the draws)"
        elif any(isinstance(a, torch.Tensor) and not _is_npu(a) for a in tree_flatten((args, kwargs))[0]):
            reason = "CPU tensor operand"
        fallbacks_before = _fallback_counts()
        _, flushes_before = _C._graph_capture_counters()
        result = super().run_node(node)
        _, flushes_after = _C._graph_capture_counters()
        fallbacks_after = _fallback_counts()
        if reason is None and fallbacks_after != fallbacks_before:
            ops = sorted(op for op, n in fallbacks_after.items() if n != fallbacks_before.get(op, 0))
            reason = "CPU fallback (" + ", ".join(ops) + ")"
        elif reason is None and flushes_after != flushes_before:
            reason = "host synchronisation"
        elif reason is None and any(
            isinstance(r, torch.Tensor) and not _is_npu(r) for r in tree_flatten(result)[0]
        ):
            reason = "CPU tensor result"
        if reason is not None:
            self.unsupported[node] = reason
        return result


def _layout(t: torch.Tensor) -> tuple[torch.dtype, tuple[int, ...], tuple[int, ...], int]:
    return t.dtype, tuple(t.shape), t.stride(), t.storage_offset()


def _view_of(storage: torch.UntypedStorage, layout: tuple, device: torch.device) -> torch.Tensor:
    dtype, size, stride, offset = layout
    return torch.empty(0, dtype=dtype, device=device).set_(storage, offset, size, stride)


class _Replay:
    """One capture of a graph: replays it for inputs laid out as the capture's."""

    def __init__(self, stream: Any, args: Sequence[object], outputs: object) -> None:
        self.stream = stream
        self.tensor_inputs = [i for i, a in enumerate(args) if _is_npu(a)]
        input_storages = {}
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() != 0:
                input_storages.setdefault(a.untyped_storage().data_ptr(), i)
        flat, self.spec = tree_flatten(outputs)
        # How each output is made at a call: a view of a fresh buffer (the
        # capture allocated its storage), a view of an input's storage, or
        # the object the graph returned (a constant).
        self.outputs: list[tuple] = []
        self.buffer_bytes: list[int] = []
        representatives: list[torch.Tensor] = []
        buffer_of: dict[int, int] = {}
        for out in flat:
            if not isinstance(out, torch.Tensor):
                self.outputs.append(("value", out))
                continue
            address = out.untyped_storage().data_ptr()
            if address in input_storages:
                self.outputs.append(("input", input_storages[address], _layout(out)))
            elif address != 0 and stream.owns(address):
                if address not in buffer_of:
                    buffer_of[address] = len(self.buffer_bytes)
                    self.buffer_bytes.append(out.untyped_storage().nbytes())
                    representatives.append(out)
                self.outputs.append(("buffer", buffer_of[address], _layout(out)))
            else:
                self.outputs.append(("value", out))
        stream.bind([args[i] for i in self.tensor_inputs], representatives)
        self._captured_storages = [r.untyped_storage() for r in representatives]

    def first_results(self, args: Sequence[object]) -> object:
        """The capture's results, moved out of the pool (its blocks are the replays')."""
        buffers = self._fresh_buffers()
        for buffer, storage in zip(buffers, self._captured_storages):
            source = torch.empty(0, dtype=torch.uint8, device="npu").set_(storage)
            buffer.copy_(source)
        self._captured_storages = []
        return self._results(args, buffers)

    def __call__(self, args: Sequence[object], leaves: Sequence[object]) -> object:
        buffers = self._fresh_buffers()
        self.stream.replay([leaves[i] for i in self.tensor_inputs], buffers)
        _stats.replays += 1
        return self._results(leaves, buffers)

    def _fresh_buffers(self) -> list[torch.Tensor]:
        return [torch.empty(n, dtype=torch.uint8, device="npu") for n in self.buffer_bytes]

    def _results(self, args: Sequence[object], buffers: list[torch.Tensor]) -> object:
        flat = []
        for kind, *rest in self.outputs:
            if kind == "value":
                flat.append(rest[0])
            elif kind == "input":
                source = args[rest[0]]
                flat.append(_view_of(source.untyped_storage(), rest[1], source.device))
            else:
                flat.append(_view_of(buffers[rest[0]].untyped_storage(), rest[1], buffers[rest[0]].device))
        return tree_unflatten(flat, self.spec)


class _Segment(torch.nn.Module):
    """A part of a split graph between breaks, as the split module calls it."""

    def __init__(self, graph: CompiledGraph) -> None:
        super().__init__()
        self.graph = graph

    def forward(self, *args: object) -> object:
        return self.graph(*args)


def _call_key(args: Sequence[object]) -> tuple:
    """What a capture depends on: each tensor's device and layout, which
    tensors share storage, and the other arguments' values."""
    key = []
    first_with_storage: dict[int, int] = {}
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            address = a.untyped_storage().data_ptr()
            shared = first_with_storage.setdefault(address, i) if address else i
            key.append((a.device, *_layout(a), shared))
        else:
            key.append((type(a), a))
    return tuple(key)


class CompiledGraph:
    """A graph compiled for the npu: captured once per input layout, replayed after."""

    def __init__(self, module: torch.fx.GraphModule, name: str, partition: bool = True) -> None:
        self.module = module
        self.name = name
        self.partition = partition
        # Per call key: runs a call given its arguments and their flattened leaves.
        self._runs: dict[tuple, Callable[[Sequence[object], Sequence[object]], object]] = {}

    def __call__(self, *args: object) -> object:
        # A segment of a split graph may be handed a tuple of tensors (an op's results).
        leaves, spec = tree_flatten(args)
        key = (spec, _call_key(leaves))
        run = self._runs.get(key)
        if run is not None:
            return run(args, leaves)
        return self._capture(key, args, leaves)

    def _capture(self, key: tuple, args: Sequence[object], leaves: Sequence[object]) -> object:
        start = time.perf_counter()
        interpreter = _CaptureInterpreter(self.module)
        directory = _dump_directory()
        dump = directory / f"{self.name}.{len(self._runs)}.npubin" if directory else None
        if dump:
            _C._capture_begin(os.fspath(dump))
        try:
            _C._graph_capture_begin()
            try:
                outputs = interpreter.run(*args)
            finally:
                stream = _C._graph_capture_end()
            if dump:
                _read_back((list(leaves), outputs))
        finally:
            if dump:
                _C._capture_end()
        if dump:
            _stats.dumps.append(os.fspath(dump))
        unsupported = interpreter.unsupported
        del interpreter
        if not unsupported:
            replay = _Replay(stream, leaves, outputs)
            del outputs
            self._runs[key] = replay
            _stats.graphs += 1
            _stats.packets.append(stream.packets)
            _stats.pool_bytes += stream.pool_bytes
            result = replay.first_results(leaves)
        else:
            # The run's results are right (every node ran); its recording is not replayable.
            del stream
            self._note_breaks(unsupported)
            self._runs[key] = self._split(unsupported) if self.partition else self._eager()
            result = outputs
        _stats.compile_seconds += time.perf_counter() - start
        return result

    def _note_breaks(self, unsupported: dict[torch.fx.Node, str]) -> None:
        for node, reason in unsupported.items():
            _stats.breaks += 1
            _stats.break_reasons[reason] += 1
            _stats.break_nodes.append(f"{self.name}:{node.name}")
            if _C._debug_level() >= 1:
                print(
                    f"[COMPILE] graph break in {self.name} at node {node.name} ({node.target}): {reason}",
                    file=sys.stderr,
                )

    def _eager(self) -> Callable[[Sequence[object], Sequence[object]], object]:
        _stats.eager_graphs += 1
        module = self.module
        return lambda args, leaves: module(*args)

    def _split(
        self, unsupported: dict[torch.fx.Node, str]
    ) -> Callable[[Sequence[object], Sequence[object]], object]:
        # Consecutive replayable nodes share a partition; each breaking node is
        # one of its own, with the getitems that unpack its results.
        partition_of: dict[torch.fx.Node, int] = {}
        eager_partitions = set()
        current = 0
        for node in self.module.graph.nodes:
            unpacks_a_break = (
                node.target is operator.getitem
                and isinstance(node.args[0], torch.fx.Node)
                and node.args[0] in unsupported
            )
            if unpacks_a_break:
                partition_of[node] = partition_of[node.args[0]]
            elif node in unsupported:
                current += 1
                partition_of[node] = current
                eager_partitions.add(current)
                current += 1
            else:
                partition_of[node] = current
        split = split_module(self.module, self.module, lambda node: partition_of[node])
        for name, child in list(split.named_children()):
            if not name.startswith("submod_"):
                continue
            partition = int(name.removeprefix("submod_"))
            if partition in eager_partitions:
                _stats.eager_graphs += 1
            else:
                setattr(split, name, _Segment(CompiledGraph(child, f"{self.name}.{name}", partition=False)))
        return lambda args, leaves: split(*args)


def _compiler(kind: str) -> Callable[[torch.fx.GraphModule, list[torch.Tensor]], Callable]:
    counter = iter(range(sys.maxsize))

    def compile_graph(module: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Callable:
        return make_boxed_func(CompiledGraph(module, f"{kind}{next(counter)}"))

    return compile_graph


# Dynamo finds this through the package's "torch_dynamo_backends" entry point
# (setup.py) when torch.compile is first given backend="npu", so that
# importing npu_bridge does not import Dynamo.
npu_backend = aot_autograd(fw_compiler=_compiler("forward"), bw_compiler=_compiler("backward"))
