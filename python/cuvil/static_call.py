"""Stage 6, run: the short call path of a signature whose shapes are all static.

CompiledModule.__call__'s generic path rebuilds, on every call, what a
static signature does not change: a numpy view per input, a memref
descriptor per input and output, the ~100-entry argument list, the pytree
of the outputs. Each of those steps is cheap with warm caches, but a call
runs right after the previous call's kernels have evicted Python's objects
and code: timed around the C call, ResNet-18 int8 spent ~0.2 ms per call in
that Python at 1 thread (Zen 5).

A StaticCall builds the descriptors and the argument tuple once; a call
checks that its tensors are what the signature was compiled for (exact
type, dtype and shape, CPU, contiguous, 64-byte aligned), writes their data
pointers into the input descriptors, allocates the outputs with torch.empty
and calls the library. Anything else (another shape, a view with an offset,
a tensor subclass, a second thread while one call runs) returns None and
the caller takes the generic path, which handles every case.
"""
import ctypes
import threading
from typing import List, Optional

from . import execution, weights
from .signature import MLIR_TO_TORCH


def eligible(sig, args) -> bool:
    """Whether `sig` called with `args` (which just ran on the generic path)
    can take the short path: tensors only, static output shapes, results that
    are the user's outputs as they are (no write-back of mutated inputs, no
    linalg checks, no uint8 / complex views, no numbers among the outputs),
    no random seed."""
    import torch
    c = sig.contract
    outputs = sig.main.outputs
    return (all(type(a) is torch.Tensor for a in args)
            and not c.random_seed and not c.mutations and not c.linalg_checks
            and all(slot[0] == "tensor" for slot in c.output_slots)
            and all(None not in s.shape and s.dtype in MLIR_TO_TORCH for s in outputs)
            # torch allocates each output in eager's dtype: MLIR's type must say it (i8 may be uint8)
            and len(c.output_dtypes) == len(outputs)
            and all(d == MLIR_TO_TORCH[s.dtype] for d, s in zip(c.output_dtypes, outputs))
            and all(None not in s.shape for s in sig.main.inputs)
            and all(isinstance(d, int) for dims in c.output_dims for d in dims))


class StaticCall:
    """`sig`'s @main for the exact input tensors of `args` (see the module
    docstring). One call at a time; calls from other threads meanwhile take
    the generic path."""

    def __init__(self, sig, args):
        import torch
        from torch.utils import _pytree as pytree
        self.sig = sig
        self.specs = tuple((a.dtype, a.shape) for a in args)
        self.input_keys = list(sig.contract.input_keys)
        self.outputs = [(tuple(s.shape), getattr(torch, MLIR_TO_TORCH[s.dtype])) for s in sig.main.outputs]
        self.single = sig.contract.out_spec.is_leaf() and len(self.outputs) == 1
        self.out_spec = sig.contract.out_spec
        self._unflatten = pytree.tree_unflatten
        self._check_weights = bool(sig.weight_tensors) and not sig.weights_fixed
        self._lock = threading.Lock()
        self._tensor = torch.Tensor
        self._empty = torch.empty
        self._bind(sig.run)

    def _bind(self, run: execution.BoundFunction) -> None:
        """Descriptors for the free inputs and the outputs, and the argument
        tuple with the bound weights' descriptors (a rebind makes new ones)."""
        self.run = run
        f = run.function
        self._inputs = [_static_descriptor(f.inputs[i].shape) for i in run.free_positions]
        self._outs = [_static_descriptor(shape) for shape, _ in self.outputs]
        args = list(run.argument_addresses)
        for i, d in zip(run.free_positions, self._inputs):
            args[i] = ctypes.addressof(d)
        args += [ctypes.addressof(d) for d in self._outs]
        self._args = tuple(ctypes.c_void_p(a) for a in args)
        # Its own function object: the generic path's converts Python ints
        # through argtypes; this one is given c_void_p values as they are.
        self._fn = run.function.library_function()
        self._fn.restype, self._fn.argtypes = None, None

    def __call__(self, args) -> Optional[object]:
        """The outputs, or None when these args are not this call's."""
        if len(args) != len(self.specs):
            return None
        for a, (dtype, shape) in zip(args, self.specs):
            if (type(a) is not self._tensor or a.dtype is not dtype or a.shape != shape or not a.is_cpu
                    or not a.is_contiguous() or a.data_ptr() % execution.ALIGNMENT):
                return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self._call(args)
        finally:
            self._lock.release()

    def _call(self, args):
        sig = self.sig
        if self._check_weights:
            weights.rebind_if_changed(sig)
            if sig.run is not self.run:
                self._bind(sig.run)
        for d, key in zip(self._inputs, self.input_keys):
            d.allocated = d.aligned = args[key].data_ptr()
        outs: List[object] = []
        for (shape, dtype), d in zip(self.outputs, self._outs):
            out = self._empty(shape, dtype=dtype)
            ptr = out.data_ptr()
            if ptr % execution.ALIGNMENT:   # an allocator without torch's 64-byte alignment
                return None
            d.allocated = d.aligned = ptr
            outs.append(out)
        self._fn(*self._args)
        self.run.function.raise_reported_error()
        return outs[0] if self.single else self._unflatten(outs, self.out_spec)


def _static_descriptor(shape):
    """A memref descriptor of a C-contiguous array of `shape`, its pointers unset."""
    desc = execution._descriptor_type(len(shape))()
    desc.offset = 0
    if shape:
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= size
        desc.sizes[:] = shape
        desc.strides[:] = strides[::-1]
    return desc
