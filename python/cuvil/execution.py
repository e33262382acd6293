"""Stage 6, run: load a compiled library and call its entry points.

Functions are compiled with `llvm.emit_c_interface` and results as
out-params, so `_mlir_ciface_<name>(desc*...)` takes one memref descriptor
pointer per input, then one per output. Descriptors are built over numpy
arrays (64-byte aligned, C-contiguous) without copying; ctypes releases the
GIL during the call.
"""
import ctypes
import math
from dataclasses import dataclass
from typing import Dict, List, Sequence

import numpy as np

ALIGNMENT = 64

_NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
              "i32": np.int32, "i16": np.int16, "i8": np.int8, "i1": np.bool_,
              # numpy has no bfloat16: its arrays hold the bits (torch views them back).
              "bf16": np.int16}


def to_array(tensor) -> np.ndarray:
    """A C-contiguous numpy view of a CPU tensor (no copy when it already is
    contiguous); bfloat16 as its 16-bit patterns, uint8 as int8."""
    import torch
    t = tensor.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy()
    if t.dtype == torch.uint8:   # MLIR's i8: the same bits
        return t.view(torch.int8).numpy()
    return t.numpy()


def to_tensor(array: np.ndarray, dtype: str):
    """The torch tensor over `array` (MLIR element type `dtype`), no copy."""
    import torch
    t = torch.from_numpy(array)
    return t.view(torch.bfloat16) if dtype == "bf16" else t


@dataclass(frozen=True)
class TensorSpec:
    """Shape (None for a dynamic dim) and MLIR element type of an argument."""
    shape: tuple
    dtype: str

    @property
    def np_dtype(self):
        if self.dtype not in _NP_DTYPES:
            raise TypeError(f"element type {self.dtype} has no numpy equivalent")
        return _NP_DTYPES[self.dtype]


def aligned_empty(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data is 64-byte aligned."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize   # (np.prod: a ufunc reduction per call)
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    offset = (-raw.ctypes.data) % ALIGNMENT
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def as_aligned(array: np.ndarray) -> np.ndarray:
    if array.flags.c_contiguous and array.ctypes.data % ALIGNMENT == 0:
        return array
    out = aligned_empty(array.shape, array.dtype)
    out[...] = array
    return out


def first_touch(arrays: Sequence[np.ndarray], threads: int) -> None:
    """Writes zeros over `arrays` from `threads` threads at once, so that the
    kernel maps their fresh pages in parallel. For main_prepack's outputs
    (BERT-base: 340 MB of packed weights) the page faults are most of a warm
    start: numpy asks for huge pages above 4 MB, and a fresh 2 MB page costs
    ~3.5 ms on the 2-core test VM (340 MB: 0.60 s on one thread, 0.32 s on two).
    """
    from concurrent.futures import ThreadPoolExecutor

    def touch(a):
        np.copyto(a, np.zeros((), a.dtype))   # releases the GIL; a typed zero for bool outputs too
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(touch, sorted(arrays, key=lambda a: -a.nbytes)))


_DESCRIPTOR_TYPES: Dict[int, type] = {}


def _descriptor_type(rank: int):
    if rank not in _DESCRIPTOR_TYPES:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTOR_TYPES[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTOR_TYPES[rank]


def descriptor(array: np.ndarray):
    """A memref descriptor viewing `array` (which must stay alive)."""
    desc = _descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = array.shape
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


class Library:
    """A loaded compiled module."""

    def __init__(self, path):
        self.path = str(path)
        self._lib = ctypes.CDLL(self.path)

    @property
    def cdll(self) -> ctypes.CDLL:
        return self._lib

    def has(self, name: str) -> bool:
        return hasattr(self._lib, f"_mlir_ciface_{name}")

    def function(self, name: str, inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec]):
        take_error = getattr(self._lib, "cuvil_runtime_take_error", None)
        if take_error is not None:
            take_error.restype, take_error.argtypes = ctypes.c_int32, []
        return Function(getattr(self._lib, f"_mlir_ciface_{name}"), name, inputs, outputs, take_error, self._lib)


#: cuvil_runtime_error codes (runtime_support.c, lib/Transforms/RuntimeErrors.h)
#: -> what the user is told, and the error raised.
RUNTIME_ERRORS = {1: ("integer division by zero (eager PyTorch raises ZeroDivisionError)", "ExecutionError"),
                  2: ("an index is out of range in a gather / scatter / embedding / indexing op (eager PyTorch "
                      "raises IndexError)", "ExecutionIndexError")}


class Function:
    """Calls one entry point on numpy arrays; allocates its outputs."""

    def __init__(self, fn, name, inputs, outputs, take_error=None, cdll=None):
        self._fn, self.name, self._take_error, self._cdll = fn, name, take_error, cdll
        self.inputs, self.outputs = list(inputs), list(outputs)
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p] * (len(self.inputs) + len(self.outputs))

    def __call__(self, *arrays: np.ndarray, out_shapes=None, touch_threads=1) -> List[np.ndarray]:
        """`out_shapes` gives the output sizes when some are dynamic;
        `touch_threads` > 1 first-touches the outputs on that many threads
        (see first_touch)."""
        return self.bind({})(*arrays, out_shapes=out_shapes, touch_threads=touch_threads)

    def library_function(self):
        """A new ctypes function object for this entry point (its own
        argtypes: cuvil.static_call passes c_void_p values, not ints)."""
        if self._cdll is None:
            raise RuntimeError(f"{self.name} was not loaded from a Library")
        return self._cdll[f"_mlir_ciface_{self.name}"]

    def raise_reported_error(self) -> None:
        """Raises ExecutionError if the call reported one (cuvil_runtime_error)."""
        code = self._take_error() if self._take_error is not None else 0
        if code:
            from . import errors
            what, error = RUNTIME_ERRORS.get(code, (f"runtime error {code}", "ExecutionError"))
            raise getattr(errors, error)(f"{self.name}: {what}; the outputs of this call are discarded")

    def bind(self, fixed: Dict[int, np.ndarray]) -> "BoundFunction":
        """This function with the arrays at `fixed` positions (weights) passed
        on every call: their descriptors are built once, not per call."""
        return BoundFunction(self, fixed)


class BoundFunction:
    """A Function whose constant arguments are bound; call it with the rest."""

    def __init__(self, function: Function, fixed: Dict[int, np.ndarray]):
        self.function = function
        self._keep = {i: as_aligned(a) for i, a in fixed.items()}
        self._fixed = {i: descriptor(a) for i, a in self._keep.items()}
        self._free = [i for i in range(len(function.inputs)) if i not in fixed]
        # The call's argument list with the fixed descriptors' addresses in
        # place (a model passes ~100 weights: their addresses are not looked
        # up again on every call); the free inputs' slots are filled per call.
        self._args = [ctypes.addressof(self._fixed[i]) if i in self._fixed else 0
                      for i in range(len(function.inputs))]

    @property
    def free_positions(self) -> List[int]:
        """The positions of the inputs a call passes (the unbound ones)."""
        return self._free

    @property
    def argument_addresses(self) -> List[int]:
        """The inputs' descriptor addresses: the bound ones', 0 at the free positions."""
        return self._args

    def __call__(self, *arrays: np.ndarray, out_shapes=None, touch_threads=1) -> List[np.ndarray]:
        f = self.function
        if len(arrays) != len(self._free):
            raise ValueError(f"{f.name} takes {len(self._free)} arrays, got {len(arrays)}")
        shapes = out_shapes or [tuple(s.shape) for s in f.outputs]
        outs = [aligned_empty(shape, s.np_dtype) for shape, s in zip(shapes, f.outputs)]
        if touch_threads > 1:
            first_touch(outs, touch_threads)
        keep = [as_aligned(a) for a in arrays]
        descs = [descriptor(a) for a in keep] + [descriptor(a) for a in outs]   # alive until the call returns
        args = list(self._args)
        for i, d in zip(self._free, descs):
            args[i] = ctypes.addressof(d)
        f._fn(*args, *[ctypes.addressof(d) for d in descs[len(keep):]])
        f.raise_reported_error()
        return outs
