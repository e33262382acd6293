"""Python kernels, used while Cuvil exports a model, for ops whose eager
implementation branches on tensor values.

torch.export traces a CompositeImplicitAutograd op through its C++ kernel,
and a Python function of torch through its Python body. Where either reads
a value to decide what to do, export stops (DataDependentOutputException,
GuardOnDataDependentSymNode): torch.cov asks whether its degrees of freedom
are <= 0 (`at::is_scalar_tensor_true(norm_factor.le(0))`, an aten.equal on
the value) to warn and use 0, and so does torch.corrcoef, which calls it;
F.gaussian_nll_loss raises if `torch.any(var < 0)`. While
`export_kernels()` is active these have kernels computing the same values
without the branch: an aten op a Python kernel (the Python dispatcher,
which export traces under, prefers it; eager calls keep the C++ kernel), a
torch function a TorchFunctionMode that calls Cuvil's version. What they
leave out: eager's warnings, and its errors for values out of their domain
(negative weights, a negative variance), checks a compiled model cannot
raise from; every check of types and shapes is kept.
"""
import contextlib
import math

import torch
import torch.nn.functional as F
from torch._C import DispatchKey
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten


def cov(x, *, correction=1, fweights=None, aweights=None):
    """aten.cov (ATen's Correlation.cpp): the weighted covariance of the rows
    of `x` (variables) over its columns (observations), with eager's dtype
    promotions (an integer input gives float32)."""
    torch._check(x.dim() <= 2, lambda: "cov(): expected input to have two or fewer dimensions but got an "
                                       f"input with {x.dim()} dimensions")
    torch._check(x.dtype != torch.bool, lambda: "cov(): bool dtype is not supported for input")
    observations = x if x.dim() == 2 else x.view(1, -1)
    count = observations.size(1)
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, count, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, count, integral=False)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else torch.scalar_tensor(count, dtype=torch.int64)
    avg = (observations * w if w is not None else observations).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    # Eager warns and uses 0 (then divides by it) where this is <= 0.
    norm_factor = torch.where(norm_factor <= 0, torch.zeros_like(norm_factor), norm_factor)
    centered = observations - avg.unsqueeze(1)
    c = torch.mm(centered, (centered * w if w is not None else centered).t().conj())
    return torch.true_divide(c, norm_factor).squeeze()


def _check_weights(name: str, w, count: int, integral: bool) -> None:
    torch._check(w.dim() <= 1, lambda: f"cov(): expected {name} to have one or fewer dimensions but got "
                                       f"{name} with {w.dim()} dimensions")
    if integral:
        torch._check(not w.dtype.is_floating_point and not w.dtype.is_complex and w.dtype != torch.bool,
                     lambda: f"cov(): expected {name} to have integral dtype but got {name} with {w.dtype} dtype")
    else:
        torch._check(w.dtype.is_floating_point,
                     lambda: f"cov(): expected {name} to have floating point dtype but got {name} with {w.dtype} dtype")
    torch._check(w.numel() == count, lambda: f"cov(): expected {name} to have the same numel as there are "
                                             f"observations in the input but got {w.numel()} != {count}")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """F.gaussian_nll_loss: 0.5 (log(max(var, eps)) + (input - target)^2 /
    max(var, eps)) (+ 0.5 log(2 pi) if `full`), reduced; `var` a float, of
    input's size, or one dim short of it or 1 in one dim (homoscedastic)."""
    if isinstance(var, float):
        var = var * torch.ones_like(input)
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = torch.unsqueeze(var, -1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.size(), var.size()) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clamp(min=eps)
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


KERNELS = {aten.cov.default: cov}
FUNCTIONS = {F.gaussian_nll_loss: gaussian_nll_loss}


class _Functions(TorchFunctionMode):
    """Calls FUNCTIONS' versions in place of torch's (the mode is off inside
    a handler: their own torch calls go on to export's modes)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return FUNCTIONS.get(func, func)(*args, **(kwargs or {}))


@contextlib.contextmanager
def export_kernels():
    """KERNELS in place of the C++ ones (an op that already had a Python
    kernel of its own keeps it) and FUNCTIONS in place of torch's while the
    block runs."""
    key = DispatchKey.CompositeImplicitAutograd
    installed = []
    try:
        for op, kernel in KERNELS.items():
            if key not in op.py_kernels:
                op.py_impl(key)(kernel)
                installed.append(op)
        with _Functions():
            yield
    finally:
        for op in installed:
            del op.py_kernels[key]
            op._dispatch_cache.clear()
