"""Before import: weight-only quantization (`precision="int8-weight"` /
`"int4-weight"`, or `cuvil.quantize_weights(model, bits, group_size)`).

Activations stay float; each linear layer's weight becomes signed integers
(symmetric, round to nearest: int8 in [-127, 127], int4 in [-7, 7]) with one
f32 scale per output channel, or per output channel and group of
`group_size` consecutive input channels. The layer then computes

    per channel:  y = (x @ q^T) * s + b
    grouped:      y = sum_g (x_g @ q_g^T) * s_g + b      (a matmul per group)

so the scale leaves the contraction and the matmul reads the integer
weights themselves: Cuvil's raise step (cuvil-narrow-contraction-operands)
folds the `q.to(float)` into the contraction, which packs the int8 weight
once and converts it in registers. A weight then costs a quarter of its fp32
bytes, which is what makes memory-bound calls (LLM decoding: one token,
matrix-vector products) faster. int4 weights are stored one per byte (their
numerics, not yet their size).

Only nn.Linear (and Hugging Face's Conv1D, GPT-2's linear layer) change;
embeddings, norms and convolutions stay float.
"""
from __future__ import annotations

import logging
from typing import Optional

from .errors import CompileError

log = logging.getLogger("cuvil.quantize")

#: precision -> (bits, default group size; None: one scale per output channel).
WEIGHT_ONLY_PRECISIONS = {"int8-weight": (8, None), "int4-weight": (4, 128)}


def quantize_weights(model, bits: int = 8, group_size: Optional[int] = None, inplace: bool = False):
    """A copy of `model` (the model itself with inplace=True) with every
    nn.Linear (and transformers' Conv1D) replaced by a WeightOnlyLinear
    holding `bits`-bit weights (8 or 4) and f32 scales per output channel,
    or per `group_size` input channels (a divisor of the layer's input size;
    layers it does not divide keep one scale per output channel, with a log
    line)."""
    import copy

    import torch
    if bits not in (8, 4):
        raise ValueError(f"quantize_weights: bits must be 8 or 4, got {bits!r}")
    if group_size is not None and (not isinstance(group_size, int) or group_size < 1):
        raise ValueError(f"quantize_weights: group_size must be a positive int or None, got {group_size!r}")
    if not isinstance(model, torch.nn.Module):
        raise CompileError("quantize", f"weight-only quantization takes a torch.nn.Module, got {type(model).__name__}")
    if not inplace:
        model = copy.deepcopy(model)
    linear_cls = _weight_only_linear_class()
    count = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            weight = _linear_weight(child)
            if weight is None:
                continue
            group = group_size
            if group is not None and weight.shape[1] % group:
                log.info("cuvil: %s (%d inputs): group size %d does not divide it, one scale per output channel",
                         name, weight.shape[1], group)
                group = None
            setattr(parent, name, linear_cls(weight, child.bias, bits, group))
            count += 1
    log.info("cuvil: %s: %d linear layers quantized to int%d weights (%s)", type(model).__name__, count, bits,
             f"groups of {group_size}" if group_size else "per output channel")
    return model


def _linear_weight(module):
    """A linear layer's weight as [out, in], or None for other modules."""
    import torch
    if isinstance(module, torch.nn.Linear):
        return module.weight.detach()
    # transformers.pytorch_utils.Conv1D (GPT-2): y = x @ W + b with W [in, out].
    if type(module).__name__ == "Conv1D" and hasattr(module, "nf") and getattr(module, "weight", None) is not None \
            and module.weight.dim() == 2:
        return module.weight.detach().t()
    return None


def quantize_tensor(weight, bits: int, group_size: Optional[int]):
    """(q, scale) of a float [N, K] weight: q int8 [N, K//G, G] holding
    `bits`-bit values, scale f32 [N, K//G, 1]; G = group_size or K.
    Symmetric round to nearest: w ~ q * scale."""
    import torch
    n, k = weight.shape
    g = group_size or k
    w = weight.float().reshape(n, k // g, g)
    qmax = 2 ** (bits - 1) - 1
    scale = w.abs().amax(dim=-1, keepdim=True).clamp(min=torch.finfo(torch.float32).tiny) / qmax
    q = torch.clamp(torch.round(w / scale), -qmax, qmax).to(torch.int8)
    return q, scale


_CLASS = None


def _weight_only_linear_class():
    """WeightOnlyLinear, defined on first use so that importing cuvil does
    not import torch."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    import torch

    class WeightOnlyLinear(torch.nn.Module):
        """A linear layer on integer weights with float scales; see the
        module's docstring for the arithmetic."""

        def __init__(self, weight, bias, bits: int, group_size: Optional[int]):
            super().__init__()
            n, k = weight.shape
            q, scale = quantize_tensor(weight, bits, group_size)
            self.in_features, self.out_features, self.bits = k, n, bits
            self.groups = q.shape[1]
            if self.groups == 1:   # [N, K] and [N]: y = (x @ q^T) * s + b
                self.register_buffer("qweight", q.reshape(n, k).contiguous())
                self.register_buffer("scale", scale.reshape(n).contiguous())
            else:   # [Gn * N, G] (group g: rows g*N.. of a 2-D slice, no reshape) and [Gn, N]
                self.register_buffer("qweight", q.permute(1, 0, 2).reshape(-1, q.shape[2]).contiguous())
                self.register_buffer("scale", scale.reshape(n, -1).t().contiguous())
            self.bias = None if bias is None else torch.nn.Parameter(bias.detach().clone(), requires_grad=False)

        def dequantized_weight(self):
            """The float weight [N, K] this layer computes with."""
            if self.groups == 1:
                return self.qweight.float() * self.scale[:, None]
            q = self.qweight.float().reshape(self.groups, self.out_features, -1)
            return (q * self.scale[:, :, None]).permute(1, 0, 2).reshape(self.out_features, -1)

        def forward(self, x):
            dtype = x.dtype
            if self.groups == 1:
                y = torch.nn.functional.linear(x, self.qweight.to(dtype)) * self.scale.to(dtype)
            else:   # one matmul per group: each runs on the (packed) matmul kernels
                xs, n = x.split(self.in_features // self.groups, dim=-1), self.out_features
                y = sum(torch.nn.functional.linear(xg, self.qweight[g * n:(g + 1) * n].to(dtype)) * self.scale[g].to(dtype)
                        for g, xg in enumerate(xs))
            return y if self.bias is None else y + self.bias.to(dtype)

        def extra_repr(self) -> str:
            return (f"in_features={self.in_features}, out_features={self.out_features}, int{self.bits}, "
                    f"groups={self.groups}, bias={self.bias is not None}")

    _CLASS = WeightOnlyLinear
    return _CLASS
