"""Python kernels, used while Cuvil exports a model, for composite ops whose
C++ implementation branches on tensor values.

torch.export traces a CompositeImplicitAutograd op through its C++ kernel.
Where that kernel reads a value to decide what to do, export stops with a
DataDependentOutputException: torch.cov asks whether its degrees of freedom
are <= 0 (`at::is_scalar_tensor_true(norm_factor.le(0))`, an aten.equal on
the value) to warn and use 0, and so does torch.corrcoef, which calls it.
While `export_kernels()` is active these ops have a Python kernel (the
Python dispatcher, which export traces under, prefers it; eager calls keep
the C++ kernel) computing the same values with the branch as a select. What
the kernels leave out: eager's warning, and its errors for negative weights
(fweights, aweights), which are checks on values a compiled model cannot
raise from; every other argument check is kept.
"""
import contextlib

import torch
from torch._C import DispatchKey

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


KERNELS = {aten.cov.default: cov}


@contextlib.contextmanager
def export_kernels():
    """These Python kernels in place of the C++ ones while the block runs
    (an op that already had a Python kernel of its own keeps it)."""
    key = DispatchKey.CompositeImplicitAutograd
    installed = []
    try:
        for op, kernel in KERNELS.items():
            if key not in op.py_kernels:
                op.py_impl(key)(kernel)
                installed.append(op)
        yield
    finally:
        for op in installed:
            del op.py_kernels[key]
            op._dispatch_cache.clear()
