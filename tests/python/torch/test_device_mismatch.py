"""A call that mixes npu tensors with CPU tensors raises PyTorch's device
error, as it does for CUDA tensors, instead of running on the CPU and
returning a result on whichever device its first tensor is on. 0-dim CPU
tensors (scalars) may take part, as for CUDA."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from op_samples import op_name, out_dtype, out_shapes, registered_ops, sample

DEVICE_ERROR = r"Expected all tensors to be on the same device"

# Registered ops that take tensors of several devices by design.
MIXED_BY_DESIGN = {
    "aten::_copy_from": "copies between devices",
    "aten::_copy_from_and_resize": "copies between devices",
    "aten::_has_compatible_shallow_copy_type": "compares tensor types across devices",
    "aten::_to_cpu": "moves tensors of any device to the host (the CPU fallback's transfer)",
    "aten::set_.source_Tensor": "refuses a CPU source with its own error (test_memory.py)",
    "aten::_fused_sdp_choice": "only picks the attention implementation, whose ops check their tensors",
}
# Arguments that PyTorch lets live on the host.
HOST_ARGUMENTS = {
    **{(op, "state_steps"): "the optimizers' step counters may be CPU tensors (torch.optim groups them so)"
       for op in ("aten::_fused_adamw_", "aten::_fused_adamw_.tensor_lr", "aten::_fused_adam_",
                  "aten::_fused_adam_.tensor_lr")},
    ("aten::fill_.Tensor", "self"): "fill_ takes its 0-dim value from any device (value.item())",
}


def out_tensors(op: torch._ops.OpOverload, kwargs: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {name: torch.empty(shape, dtype=out_dtype(op)) for name, shape in out_shapes(op, kwargs).items()}


def cases() -> list[tuple[torch._ops.OpOverload, str]]:
    """(op, the argument put on the CPU) for every registered op with two
    or more tensors, for each argument that is not a 0-dim tensor."""
    result = []
    for op in registered_ops():
        arguments = op._schema.arguments
        tensors = [a for a in arguments if str(a.type) in ("Tensor", "Optional[Tensor]", "List[Tensor]")]
        if op_name(op) in MIXED_BY_DESIGN or len(tensors) < 2 and not any(
                str(a.type) == "List[Tensor]" for a in arguments):
            continue
        kwargs = sample(op)
        kwargs.update(out_tensors(op, kwargs))
        for argument in tensors:
            value = kwargs.get(argument.name)
            if (op_name(op), argument.name) in HOST_ARGUMENTS:
                continue
            if isinstance(value, torch.Tensor) and value.dim() > 0 or isinstance(value, list) and value:
                result.append((op, argument.name))
    return result


def npu_arguments(kwargs: dict[str, Any], on_cpu: str) -> dict[str, Any]:
    def move(name: str, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value if name == on_cpu else value.to("npu")
        if isinstance(value, list) and value and isinstance(value[0], torch.Tensor):
            # The last tensor of the list stays on the CPU.
            return [t if name == on_cpu and i == len(value) - 1 else t.to("npu") for i, t in enumerate(value)]
        return value

    return {name: move(name, value) for name, value in kwargs.items()}


CASES = cases()


def test_every_op_with_several_tensors_is_covered():
    covered = {op_name(op) for op, _ in CASES}
    assert {"aten::add_.Tensor", "aten::mm", "aten::where.self", "aten::cat", "aten::embedding",
            "aten::_fused_adamw_", "aten::nll_loss_forward"} <= covered


@pytest.mark.parametrize("op,on_cpu", CASES, ids=lambda v: op_name(v) if not isinstance(v, str) else v)
def test_a_cpu_tensor_among_npu_tensors_is_refused(op, on_cpu):
    kwargs = sample(op)
    kwargs.update(out_tensors(op, kwargs))
    arguments = npu_arguments(kwargs, on_cpu)
    torch.npu.reset_stats()
    with pytest.raises(RuntimeError, match=DEVICE_ERROR):
        op(**arguments)


def test_cpu_in_place_op_with_an_npu_operand_is_refused():
    cpu = torch.ones(3)
    with pytest.raises(RuntimeError, match=DEVICE_ERROR):
        cpu.add_(torch.ones(3, device="npu"))
    assert torch.equal(cpu, torch.ones(3))  # untouched
    with pytest.raises(RuntimeError, match=DEVICE_ERROR):
        torch.add(torch.ones(3), torch.ones(3, device="npu"))
    with pytest.raises(RuntimeError, match=DEVICE_ERROR):
        torch.atan2(torch.ones(3, device="npu"), torch.ones(3))  # an op that falls back
    assert torch.npu.fallback_stats().get("aten::atan2.out", 0) == 0


def test_cpu_scalars_and_copies_across_devices_still_work():
    x = torch.ones(3, device="npu")
    torch.testing.assert_close((x + torch.tensor(2.0)).cpu(), torch.full((3,), 3.0))
    torch.testing.assert_close(torch.atan2(x, torch.tensor(1.0)).cpu(), torch.full((3,), torch.pi / 4))
    cpu = torch.zeros(3)
    cpu.copy_(x)
    assert torch.equal(cpu, torch.ones(3))
    x.copy_(torch.full((3,), 5.0))
    assert torch.equal(x.cpu(), torch.full((3,), 5.0))
    indexed = torch.arange(6.0, device="npu")[torch.tensor([0, 5])]  # CPU indices, as on CUDA
    assert torch.equal(indexed.cpu(), torch.tensor([0.0, 5.0]))
