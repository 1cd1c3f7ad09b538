"""Every op the bridge registers that writes a tensor, on an expanded view
(elements sharing memory) and on a view that partly overlaps an input: the
npu raises where PyTorch's CPU kernel raises, with the same message, and
where neither raises the results agree.

PyTorch's CPU kernels differ in what they refuse (TensorIterator's checks
for the pointwise ops and copy_, an out's own overlap only for mm and the
out= forms it generates, nothing for softmax or sum); the cases are read
from the CPU here, not written down. Where the CPU does not refuse a
partial overlap its result depends on the order it happens to read and
write in; the npu then computes as if every input were read before the
first write, which the test checks instead."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from op_samples import op_name, out_dtype, out_shapes, random_tensor, registered_ops, sample, written_arguments

# Ops that write tensor metadata (sizes, storage) or stream bookkeeping
# (record_stream), not elements.
METADATA_ONLY = {"aten::resize_", "aten::set_", "aten::set_.source_Storage",
                 "aten::set_.source_Storage_storage_offset", "aten::set_.source_Tensor",
                 "aten::record_stream"}


def writing_ops() -> list[torch._ops.OpOverload]:
    return [op for op in registered_ops() if written_arguments(op) and op_name(op) not in METADATA_ONLY]


@dataclass
class Case:
    op: torch._ops.OpOverload
    written: str  # the written argument made to overlap
    layout: str  # "expanded" or "overlaps <input>"

    def __str__(self) -> str:
        return f"{op_name(self.op)}:{self.written}:{self.layout}"


def cases() -> list[Case]:
    result = []
    for op in writing_ops():
        kwargs = sample(op)
        shapes = {**{k: v.shape for k, v in kwargs.items() if isinstance(v, torch.Tensor)}, **out_shapes(op, kwargs)}
        for argument in written_arguments(op):
            if str(argument.type) != "Tensor":
                continue  # lists (the fused optimizers): no view of one tensor
            shape = shapes[argument.name]
            if max(shape, default=1) > 1:
                result.append(Case(op, argument.name, "expanded"))
            written = kwargs[argument.name] if argument.name in kwargs else None
            written_dtype = written.dtype if isinstance(written, torch.Tensor) else out_dtype(op)
            for other in op._schema.arguments:
                value = kwargs.get(other.name)
                if (other.name != argument.name and isinstance(value, torch.Tensor)
                        and value.dtype == written_dtype and value.numel() > 0):
                    result.append(Case(op, argument.name, f"overlaps {other.name}"))
    return result


def build(case: Case) -> dict[str, Any]:
    """The CPU arguments of a case: the written tensor a view of the layout."""
    torch.manual_seed(7)
    kwargs = sample(case.op)
    shapes = out_shapes(case.op, kwargs)
    for name, shape in shapes.items():
        kwargs[name] = random_tensor(shape, out_dtype(case.op))
    target = kwargs[case.written]
    shape, numel = target.shape, target.numel()
    if case.layout == "expanded":
        dim = max(range(len(shape)), key=lambda d: shape[d])
        strides = list(torch.empty(shape).stride())
        strides[dim] = 0
        # The buffer has room for every element: a kernel that ignores the
        # strides writes inside it, not past it.
        kwargs[case.written] = random_tensor((numel,), target.dtype).as_strided(shape, strides)
    else:
        read = case.layout.split()[1]
        source = kwargs[read]
        buffer = random_tensor((max(numel, source.numel()) + 1,), target.dtype)
        kwargs[read] = buffer[: source.numel()].view(source.shape).copy_(source)
        kwargs[case.written] = buffer[1 : 1 + numel].view(shape)
    return kwargs


def storages(kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """Each distinct storage among the tensor arguments, as a 1-D tensor."""
    seen: dict[int, torch.Tensor] = {}
    for value in kwargs.values():
        for t in value if isinstance(value, list) else [value]:
            if isinstance(t, torch.Tensor) and t.numel() > 0:
                storage = t.untyped_storage()
                if storage.data_ptr() not in seen:
                    seen[storage.data_ptr()] = torch.empty(0, dtype=t.dtype, device=t.device).set_(storage)
    return list(seen.values())


def on_npu(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The same arguments on the npu, aliasing each other as they do on the CPU."""
    copies = {base.untyped_storage().data_ptr(): base.to("npu") for base in storages(kwargs)}

    def move(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            return t
        if t.numel() == 0:
            return t.to("npu")
        base = copies[t.untyped_storage().data_ptr()]
        return base.as_strided(t.shape, t.stride(), t.storage_offset())

    return {k: [move(t) for t in v] if isinstance(v, list) else move(v) for k, v in kwargs.items()}


def standalone(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Copies of the arguments that share no memory."""
    def copy(value: Any) -> Any:
        return value.clone() if isinstance(value, torch.Tensor) else value

    return {k: [copy(t) for t in v] if isinstance(v, list) else copy(v) for k, v in kwargs.items()}


def run(op: Callable, kwargs: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The error message op raises (None if it succeeds) and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            op(**kwargs)
            error = None
        except RuntimeError as e:
            error = str(e).splitlines()[0]
    messages = {str(w.message).split(" (Triggered internally at")[0] for w in caught}
    return error, sorted(m for m in messages if not m.startswith("npu:"))


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b, rtol=1e-5, atol=1e-5, equal_nan=True)


def check_expanded_write(case: Case, npu: dict[str, Any]) -> None:
    """An expanded output that neither device refused: the npu wrote
    nothing outside the view. Which of the values aimed at one element it
    keeps depends on the order a kernel writes in, which PyTorch leaves
    undefined (some CPU kernels even ignore the strides of such an out and
    write past it)."""
    original = build(case)[case.written]
    covered = torch.zeros(original.untyped_storage().nbytes() // original.element_size(), dtype=torch.bool)
    covered.as_strided(original.shape, original.stride(), original.storage_offset()).fill_(True)
    before = torch.empty(0, dtype=original.dtype).set_(original.untyped_storage())
    after = npu[case.written].as_strided((covered.numel(),), (1,), 0).cpu()
    assert torch.equal(after[~covered], before[~covered]), "the npu wrote outside the view"


CASES = cases()


def test_every_writing_op_is_covered():
    assert {op_name(c.op) for c in CASES} >= {
        op_name(op) for op in writing_ops() if any(str(a.type) == "Tensor" for a in written_arguments(op))}
    assert len(CASES) > 100


@pytest.mark.parametrize("case", CASES, ids=str)
def test_writes_into_overlapping_memory_match_the_cpu(case):
    cpu = build(case)
    npu = on_npu(cpu)
    cpu_error, cpu_warnings = run(case.op, cpu)
    npu_error, npu_warnings = run(case.op, npu)
    assert npu_error == cpu_error
    assert npu_warnings == cpu_warnings
    if cpu_error is not None:
        return
    cpu_memory = storages(cpu)
    npu_memory = [t.cpu() for t in storages(npu)]
    if case.layout == "expanded":
        check_expanded_write(case, npu)
        return
    if all(close(n, c) for n, c in zip(npu_memory, cpu_memory)):
        return
    # The CPU read some inputs after writing over them: the npu reads first.
    reference = standalone(build(case))
    case.op(**reference)
    expected = build(case)
    for name, value in reference.items():
        if any(a.name == name for a in written_arguments(case.op)):
            expected[name].copy_(value)
    assert all(close(n, e) for n, e in zip(npu_memory, storages(expected)))
