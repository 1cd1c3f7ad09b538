"""The ops the bridge registers for the npu, read from the dispatcher, and
sample arguments for each, so that tests can run every registered op (a new
registration is picked up by them; one whose arguments cannot be made up
from its schema fails them until it has an entry in SAMPLES)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

SHAPE = (4, 6)


def registered_ops() -> list[torch._ops.OpOverload]:
    """Every aten op with an npu (PrivateUse1) kernel of the bridge's own."""
    ops = []
    for name in torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1"):
        namespace, _, qualified = name.partition("::")
        if namespace != "aten":
            continue
        base, _, overload = qualified.partition(".")
        ops.append(getattr(getattr(torch.ops.aten, base), overload or "default"))
    return sorted(ops, key=str)


def op_name(op: torch._ops.OpOverload) -> str:
    return op._schema.name + ("." + op._schema.overload_name if op._schema.overload_name else "")


def written_arguments(op: torch._ops.OpOverload) -> list[torch.Argument]:
    return [a for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def is_out_argument(argument: torch.Argument) -> bool:
    """An out= tensor (keyword-only and written), which the tests allocate."""
    return argument.kwarg_only and argument.alias_info is not None and argument.alias_info.is_write


def randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def random_tensor(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Random values of any dtype the samples use."""
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if not dtype.is_floating_point:
        return torch.randint(-100, 100, shape, dtype=dtype)
    return torch.randn(shape).to(dtype)


def integers(*shape: int) -> torch.Tensor:
    return random_tensor(shape, torch.int64)


# Arguments that the schema alone does not determine, per op (keyword
# arguments of the op's schema, CPU tensors). Out tensors are left out.
SAMPLES: dict[str, Callable[[], dict[str, Any]]] = {
    "aten::mm.out": lambda: dict(self=randn(4, 6), mat2=randn(6, 6)),
    "aten::mm": lambda: dict(self=randn(4, 6), mat2=randn(6, 6)),
    "aten::addmm.out": lambda: dict(self=randn(4, 6), mat1=randn(4, 6), mat2=randn(6, 6)),
    "aten::addmm": lambda: dict(self=randn(4, 6), mat1=randn(4, 6), mat2=randn(6, 6)),
    "aten::bmm.out": lambda: dict(self=randn(2, 4, 6), mat2=randn(2, 6, 6)),
    "aten::bmm": lambda: dict(self=randn(2, 4, 6), mat2=randn(2, 6, 6)),
    "aten::mv": lambda: dict(self=randn(4, 6), vec=randn(6)),
    "aten::dot": lambda: dict(self=randn(6), tensor=randn(6)),
    "aten::nll_loss_forward": lambda: dict(
        self=randn(*SHAPE).log_softmax(-1), target=torch.tensor([0, 5, 2, 3]), weight=randn(6).abs(),
        reduction=1, ignore_index=-100),
    "aten::nll_loss_forward.output": lambda: dict(
        self=randn(*SHAPE).log_softmax(-1), target=torch.tensor([0, 5, 2, 3]), weight=None, reduction=0,
        ignore_index=-100),
    "aten::nll_loss_backward": lambda: dict(
        grad_output=randn(4), self=randn(*SHAPE), target=torch.tensor([0, 5, 2, 3]), weight=randn(6).abs(),
        reduction=0, ignore_index=-100, total_weight=torch.tensor(4.0)),
    "aten::nll_loss_backward.grad_input": lambda: dict(
        grad_output=randn(4), self=randn(*SHAPE), target=torch.tensor([0, 5, 2, 3]), weight=None,
        reduction=0, ignore_index=-100, total_weight=torch.tensor(4.0)),
    "aten::embedding": lambda: dict(weight=randn(*SHAPE), indices=torch.tensor([0, 3, 1, 3])),
    "aten::embedding_dense_backward": lambda: dict(
        grad_output=randn(*SHAPE), indices=torch.tensor([0, 3, 1, 3]), num_weights=4, padding_idx=-1,
        scale_grad_by_freq=False),
    "aten::embedding_dense_backward.out": lambda: dict(
        grad_output=randn(*SHAPE), indices=torch.tensor([0, 3, 1, 3]), num_weights=4, padding_idx=-1,
        scale_grad_by_freq=False),
    "aten::cat": lambda: dict(tensors=[randn(1, 6), randn(3, 6)], dim=0),
    "aten::cat.out": lambda: dict(tensors=[randn(1, 6), randn(3, 6)], dim=0),
    "aten::fill_.Tensor": lambda: dict(self=randn(*SHAPE), value=torch.tensor(2.5)),
    "aten::masked_fill.Tensor": lambda: dict(
        self=randn(*SHAPE), mask=torch.rand(*SHAPE) > 0.5, value=torch.tensor(2.5)),
    "aten::masked_fill_.Tensor": lambda: dict(
        self=randn(*SHAPE), mask=torch.rand(*SHAPE) > 0.5, value=torch.tensor(2.5)),
    "aten::_fused_rms_norm": lambda: dict(input=randn(*SHAPE), normalized_shape=[6], weight=randn(6), eps=1e-6),
    "aten::_fused_rms_norm_backward": lambda: dict(
        grad_out=randn(*SHAPE), input=randn(*SHAPE), normalized_shape=[6], rstd=randn(4, 1).abs(),
        weight=randn(6), output_mask=[True, True]),
    "aten::_safe_softmax": lambda: dict(self=randn(*SHAPE), dim=-1),
    "aten::native_layer_norm": lambda: dict(
        input=randn(*SHAPE), normalized_shape=[6], weight=randn(6), bias=randn(6), eps=1e-5),
    "aten::native_layer_norm_backward": lambda: dict(
        grad_out=randn(*SHAPE), input=randn(*SHAPE), normalized_shape=[6], mean=randn(4, 1),
        rstd=randn(4, 1).abs(), weight=randn(6), bias=randn(6), output_mask=[True, True, True]),
    "aten::pow.Tensor_Tensor": lambda: dict(self=randn(*SHAPE).abs() + 0.1, exponent=randn(*SHAPE)),
    "aten::pow_.Tensor": lambda: dict(self=randn(*SHAPE), exponent=torch.randint(-3, 4, SHAPE).float()),
    "aten::pow.Tensor_Tensor_out": lambda: dict(self=randn(*SHAPE).abs(), exponent=randn(6)),
    "aten::pow.Scalar": lambda: dict(self=2.5, exponent=randn(*SHAPE)),
    "aten::pow.Scalar_out": lambda: dict(self=-0.5, exponent=torch.randint(-3, 4, SHAPE).float()),
    "aten::clamp": lambda: dict(self=randn(*SHAPE), min=-0.5, max=0.5),
    "aten::clamp_": lambda: dict(self=randn(*SHAPE), min=-0.5, max=0.5),
    "aten::clamp.out": lambda: dict(self=randn(*SHAPE), min=-0.5, max=0.5),
    "aten::sum": lambda: dict(self=randn(*SHAPE)),
    "aten::view": lambda: dict(self=randn(*SHAPE), size=[6, 4]),
    "aten::_reshape_alias": lambda: dict(self=randn(*SHAPE), size=[6, 4], stride=[4, 1]),
    "aten::as_strided": lambda: dict(self=randn(*SHAPE), size=[3, 2], stride=[1, 6], storage_offset=1),
    "aten::lerp.Scalar": lambda: dict(self=randn(*SHAPE), end=randn(*SHAPE), weight=0.3),
    "aten::gather": lambda: dict(self=randn(*SHAPE), dim=1, index=torch.tensor([[0, 5], [1, 1], [2, 3], [4, 0]])),
    "aten::gather.out": lambda: dict(self=randn(*SHAPE), dim=0, index=torch.tensor([[3, 0, 1, 1, 2, 0]])),
    "aten::index_select": lambda: dict(self=randn(*SHAPE), dim=1, index=torch.tensor([5, 0, 2])),
    "aten::index_select.out": lambda: dict(self=integers(*SHAPE), dim=0, index=torch.tensor([3, 3, 0])),
    "aten::arange.start_out": lambda: dict(start=2, end=20, step=3),
    "aten::index.Tensor": lambda: dict(self=randn(*SHAPE), indices=[None, torch.tensor([5, -1, 0])]),
    "aten::index.Tensor_out": lambda: dict(self=integers(*SHAPE), indices=[torch.tensor([[3], [-4]])]),
    "aten::cumsum": lambda: dict(self=integers(*SHAPE), dim=1),
    "aten::cumsum_": lambda: dict(self=integers(*SHAPE), dim=0),
    "aten::cumsum.out": lambda: dict(self=integers(*SHAPE), dim=1),
    "aten::linalg_vector_norm": lambda: dict(self=randn(*SHAPE), ord=2, dim=[0], keepdim=True),
    "aten::linalg_vector_norm.out": lambda: dict(self=randn(*SHAPE), ord=1),
    "aten::convolution_overrideable": lambda: dict(
        input=randn(2, 3, 7, 7), weight=randn(4, 3, 3, 3), bias=randn(4), stride=[1, 1], padding=[1, 1],
        dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1),
    "aten::convolution_backward_overrideable": lambda: dict(
        grad_output=randn(2, 4, 7, 7), input=randn(2, 3, 7, 7), weight=randn(4, 3, 3, 3), stride=[1, 1],
        padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=1,
        output_mask=[True, True, True]),
}

for _name in ("aten::_fused_adamw_", "aten::_fused_adam_"):
    SAMPLES[_name] = lambda: dict(
        self=[randn(*SHAPE)], grads=[randn(*SHAPE)], exp_avgs=[randn(*SHAPE)], exp_avg_sqs=[randn(*SHAPE).abs()],
        max_exp_avg_sqs=[], state_steps=[torch.tensor(1.0)], lr=1e-3, beta1=0.9, beta2=0.999,
        weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)
for _name in ("aten::_fused_adamw_.tensor_lr", "aten::_fused_adam_.tensor_lr"):
    SAMPLES[_name] = lambda: dict(
        self=[randn(*SHAPE)], grads=[randn(*SHAPE)], exp_avgs=[randn(*SHAPE)], exp_avg_sqs=[randn(*SHAPE).abs()],
        max_exp_avg_sqs=[], state_steps=[torch.tensor(1.0)], lr=torch.tensor(1e-3), beta1=0.9, beta2=0.999,
        weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)

# Tolerances against the CPU of the ops whose result differs from the CPU's
# by more than a summation order (the sample test of test_ops.py; default
# npu_testing.SUMS).
TOLERANCES: dict[str, dict[str, float]] = {}

# Values of required non-tensor arguments by name, for the ops not in SAMPLES.
NAMED_VALUES: dict[str, Any] = {
    "dim": -1,
    "half_to_float": False,
    "input_dtype": torch.float32,
    "exponent": 3.0,
    "value": 0.5,
    "threshold": 0.0,
    "approximate": "tanh",
    "weight": 0.3,
    "keepdim": False,
    "min": -0.5,
    "max": 0.5,
    "p": 0.5,
    "train": True,
    "scale": 2.0,
    "other": 0.25,
}
# The shifts: integer values and amounts (inside and outside the width).
for _shift in ("left", "right"):
    for _name in (f"aten::bitwise_{_shift}_shift.Tensor", f"aten::bitwise_{_shift}_shift_.Tensor",
                  f"aten::bitwise_{_shift}_shift.Tensor_out"):
        SAMPLES[_name] = lambda: dict(self=integers(*SHAPE), other=integers(*SHAPE))
for _op in ("lshift", "rshift"):
    SAMPLES[f"aten::__{_op}__.Tensor"] = lambda: dict(self=integers(*SHAPE), other=integers(*SHAPE))
    SAMPLES[f"aten::__i{_op}__.Tensor"] = lambda: dict(self=integers(*SHAPE), other=integers(*SHAPE))
    SAMPLES[f"aten::__{_op}__.Scalar"] = lambda: dict(self=integers(*SHAPE), other=3)
    SAMPLES[f"aten::__i{_op}__.Scalar"] = lambda: dict(self=integers(*SHAPE), other=3)
# Tensor arguments that are masks.
BOOL_TENSORS = {"mask", "condition"}
# Ops over masks: their self (and other) are bool.
BOOL_SELF_OPS = {"aten::any", "aten::all", "aten::bitwise_and", "aten::bitwise_or", "aten::bitwise_xor",
                 "aten::bitwise_not", "aten::bitwise_and_", "aten::bitwise_or_", "aten::bitwise_xor_",
                 "aten::bitwise_not_", "aten::logical_and_", "aten::logical_or_", "aten::logical_xor_",
                 "aten::logical_not_"}
# The dtype of an op's out= tensors where it is not float32.
OUT_DTYPES: dict[str, torch.dtype] = {
    **{f"aten::{op}.{overload}": torch.bool for op in ("any", "all")
       for overload in ("out", "all_out", "dims_out")},
    **{f"aten::{op}.{overload}": torch.bool for op in ("eq", "ne", "lt", "le", "gt", "ge")
       for overload in ("Tensor_out", "Scalar_out")},
    **{f"aten::bitwise_{op}.Tensor_out": torch.bool for op in ("and", "or", "xor")},
    "aten::bitwise_not.out": torch.bool,
    **{f"aten::logical_{op}.out": torch.bool for op in ("and", "or", "xor", "not")},
    "aten::isin.Tensor_Tensor_out": torch.bool,
    "aten::argmax.out": torch.int64,
    "aten::argmin.out": torch.int64,
    "aten::count_nonzero.dim_IntList_out": torch.int64,
    "aten::cumsum.out": torch.int64,
    "aten::bitwise_left_shift.Tensor_out": torch.int64,
    "aten::bitwise_right_shift.Tensor_out": torch.int64,
    "aten::index_select.out": torch.int64,
    "aten::index.Tensor_out": torch.int64,
}


def out_dtype(op: torch._ops.OpOverload) -> torch.dtype:
    return OUT_DTYPES.get(op_name(op), torch.float32)


def sample(op: torch._ops.OpOverload) -> dict[str, Any]:
    """Keyword arguments (CPU tensors) for op, without its out= tensors.
    Raises LookupError when the schema does not determine them."""
    name = op_name(op)
    if name in SAMPLES:
        return SAMPLES[name]()
    kwargs: dict[str, Any] = {}
    for argument in op._schema.arguments:
        kind = str(argument.type)
        if kind == "Tensor":
            if is_out_argument(argument):
                continue
            boolean = argument.name in BOOL_TENSORS or (
                argument.name in ("self", "other") and op._schema.name in BOOL_SELF_OPS)
            kwargs[argument.name] = torch.rand(*SHAPE) > 0.5 if boolean else randn(*SHAPE)
        elif argument.name in NAMED_VALUES:
            value = NAMED_VALUES[argument.name]
            kwargs[argument.name] = [value] if kind.startswith(("List", "Optional[List")) else value
        elif not argument.has_default_value():
            raise LookupError(f"{name}: no sample for argument {argument.name} ({kind}); add one to SAMPLES")
    return kwargs


def out_shapes(op: torch._ops.OpOverload, kwargs: dict[str, Any]) -> dict[str, torch.Size]:
    """The shapes of op's out= tensors for these CPU arguments (read from
    the CPU kernel, which resizes an empty out)."""
    outs = {a.name: torch.empty(0, dtype=out_dtype(op))
            for a in op._schema.arguments if is_out_argument(a) and str(a.type) == "Tensor"}
    if outs:
        op(**kwargs, **outs)
    return {name: t.shape for name, t in outs.items()}
