"""The model's weights as a compiled library sees them: bound by reference
(unpacked ones), packed once by @main_prepack (shared in-process between
signatures over the same, unchanged tensors), rebound when the model's
tensors change."""
import weakref
from typing import Any, Dict, List, Optional

import numpy as np

from . import execution


class PackedWeights:
    """main_prepack's outputs for one set of weight tensors. Holding the
    weights' arrays keeps their memory, and so the addresses in the key
    below, from being reused by other tensors while the entry lives."""

    def __init__(self, arrays: List[np.ndarray], sources: List[np.ndarray]):
        self.arrays = arrays
        self._sources = sources


# Packed weights shared by every signature (and every CompiledModule) in this
# process whose main_prepack is the same code over the same weight tensors,
# unchanged since (torch's version counter): recompiling a model, or compiling
# it for another input shape, reuses them instead of packing (and holding)
# the weights again. Entries go away with the last signature using them.
_PREPACKED: "weakref.WeakValueDictionary[tuple, PackedWeights]" = weakref.WeakValueDictionary()


def _prepack(lib, contract, weights, versions) -> Optional[PackedWeights]:
    if contract.prepack_specs is None:
        return None
    sources = [weights[n] for n in contract.weight_order]
    code = contract.prepack_key or f"library:{lib.path}"
    key = (code, tuple((a.ctypes.data, a.shape, a.dtype.str, versions.get(n))
                       for n, a in zip(contract.weight_order, sources)))
    hit = _PREPACKED.get(key)
    if hit is not None:
        return hit
    pre = lib.function("main_prepack", *contract.prepack_specs)
    # Compile-time work, like codegen: the page faults of the packed weights
    # are taken on every core this process may use, whatever `num_threads` says.
    from . import threads
    packed = PackedWeights(pre(*sources, touch_threads=threads.available_cores()), sources)
    _PREPACKED[key] = packed
    return packed


def state(tensors: Dict[str, Any]) -> tuple:
    """Changes when a weight is modified in place (torch's version counter)
    or given other memory (`param.data = ...`)."""
    # Two flat list comprehensions: read before every call of a model with
    # ~100 weights, a generator of pairs cost twice the time.
    ts = list(tensors.values())
    return tuple([t._version for t in ts]), tuple([t.data_ptr() for t in ts])


def bind(sig) -> None:
    """Binds a Signature's weights as they are now: unpacked ones by reference
    (no copy when 64-byte aligned), packed ones by running main_prepack (or
    reusing another signature's packing of these very tensors). A parameter
    replaced by a new object (`layer.weight = Parameter(..)`) is not seen:
    compile again."""
    tensors = sig.weight_tensors
    _check_layout(sig, tensors)
    sig.weight_state = state(tensors)
    sig.weights = {n: execution.as_aligned(execution.to_array(t)) for n, t in tensors.items()}
    versions = {n: t._version for n, t in tensors.items()}
    sig.prepacked = _prepack(sig.library, sig.contract, sig.weights, versions)
    sig.packed = sig.prepacked.arrays if sig.prepacked is not None else []
    sig.run = sig.main.bind({i: sig.weights[key] if role == "weight" else sig.packed[key]
                             for i, (role, key) in enumerate(sig.contract.main_args) if role != "input"})


def _check_layout(sig, tensors) -> None:
    """The weights still have the shapes and dtypes the library was compiled
    for (recorded at the first bind): main and main_prepack read their
    memory as those, so another dtype would be read as garbage, or past its
    end."""
    layout = tuple([(n, tuple(t.shape), t.dtype) for n, t in tensors.items()])
    if not sig.weight_layout:
        sig.weight_layout = layout
        return
    for (name, shape, dtype), (_, new_shape, new_dtype) in zip(sig.weight_layout, layout):
        if (shape, dtype) != (new_shape, new_dtype):
            from .errors import WeightsChangedError
            raise WeightsChangedError(
                f"cuvil: weight '{name}' is now {new_dtype} {list(new_shape)}, but the model was compiled "
                f"with it as {dtype} {list(shape)} (a .to(dtype) / .half() / resize after cuvil.compile "
                f"changes the parameters in place); compile the model again: cuvil.compile(model, ...)")


def rebind_if_changed(sig) -> None:
    """Before a call: the model's weights changed since binding -> use the new ones.

    Not for fixed weights (Signature.weights_fixed): the check reads each
    weight's version and address, which the previous call's kernels have
    evicted from the caches by then: 0.12-0.16 ms a call for ResNet-18
    int8's 84 weights (~1.8 us each, against 0.2 us warm), 5% of a 2-thread
    call, spent on tensors only Cuvil holds."""
    if sig.weight_tensors and not sig.weights_fixed and state(sig.weight_tensors) != sig.weight_state:
        bind(sig)


def from_model(model, specs) -> Optional[Dict[str, object]]:
    """The model's weight tensors (the Parameter / buffer objects, which see
    `.data = ...`) by export name, or None when one is not a parameter/buffer
    (e.g. a tensor constant made in forward)."""
    tensors = {}
    for spec in specs:
        if spec["kind"] not in ("parameter", "buffer", "buffer_nonpersistent"):
            return None
        getter = model.get_parameter if spec["kind"] == "parameter" else model.get_buffer
        try:
            tensors[spec["name"]] = getter(spec["name"])
        except AttributeError:
            return None
    return tensors


def write_back(sig, args, mutations, values) -> None:
    """Applies a call's in-place updates as eager would: each mutated input
    of the caller, or buffer of the model, takes its new value (the compiled
    function itself is pure: it returns them)."""
    import torch
    with torch.no_grad():
        for (where, which), value in zip(mutations, values):
            target = args[which] if where == "input" else sig.weight_tensors[which]
            target.copy_(value)   # a buffer's new version: the next call binds it again
