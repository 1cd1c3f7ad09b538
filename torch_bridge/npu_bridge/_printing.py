"""``print(tensor)`` for npu tensors: the values are formatted from one host copy.

PyTorch formats a tensor with a dozen tensor ops (abs, isfinite, masked_select,
ne, min/max, ...) on its own device. None of them is an NPU instruction, so on
the npu each would be a counted CPU fallback, and printing would fail under
``NPU_STRICT=1``. PyTorch itself copies xla, lazy, ipu and mtia tensors to the
CPU before formatting them (torch/_tensor_str.py, ``_str_intern``); this does
the same for npu tensors: one device-to-host copy, the values formatted by
PyTorch's own code, and the suffixes (``device='npu:0'``, ``grad_fn``, ...)
taken from the npu tensor.
"""

from __future__ import annotations

import torch
import torch._tensor_str as _tensor_str

_format_tensor = _tensor_str._str_intern


def _str_intern(inp: torch.Tensor, *, tensor_contents: str | None = None) -> str:
    if (
        tensor_contents is None
        and inp.device.type == "npu"
        and inp.layout == torch.strided
        and inp.numel() > 0
        and not torch._C._functorch.is_functorch_wrapped_tensor(inp)
    ):
        # The prefix is "tensor(" unless inp is a subclass: the contents are
        # indented by its length, as _str_intern does.
        is_plain_tensor = type(inp) is torch.Tensor or type(inp) is torch.nn.Parameter
        prefix = "tensor(" if is_plain_tensor else f"{type(inp).__name__}("
        primal = torch.autograd.forward_ad.unpack_dual(inp).primal
        tensor_contents = _tensor_str._tensor_str(primal.detach().to("cpu"), len(prefix))
    return _format_tensor(inp, tensor_contents=tensor_contents)


def install() -> None:
    """Makes Tensor.__repr__ / str() format npu tensors from a host copy."""
    _tensor_str._str_intern = _str_intern
