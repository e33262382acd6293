"""`cuvil.compile("model.onnx")`: an ONNX model in, a callable running native code out.

    fast = cuvil.compile("model.onnx")            # or an onnx.ModelProto
    y = fast(x)                                   # one output alone, several as a tuple
    y1, y2 = fast(input_ids=ids, mask=m)          # inputs also by name

Inputs are numpy arrays or torch tensors, outputs the same kind. The same
compile as for PyTorch models (cuvil.compiler: pipeline, cache, weights as
arguments) behind another import (cuvil.importer_onnx); the warm-start index
is keyed by the model's content, so a second process finds its library
without importing the model again.
"""
import hashlib
import logging
from collections import OrderedDict
from typing import Dict, Optional, Tuple

from .compiler import CompiledModule
from .importer_onnx import OnnxModel

log = logging.getLogger("cuvil")


def is_onnx_model(model) -> bool:
    """A path (str / os.PathLike) or an onnx.ModelProto, without importing onnx."""
    import os
    if isinstance(model, (str, os.PathLike, OnnxModel)):
        return True
    cls = type(model)
    return cls.__name__ == "ModelProto" and cls.__module__.split(".")[0] in ("onnx", "google")


class CompiledOnnxModule(CompiledModule):
    """What `cuvil.compile` returns for an ONNX model."""

    #: Builds kept for distinct values of the value inputs; beyond it the
    #: least recently used one is dropped (its library stays in the disk
    #: cache: a return of that value loads it again). Each holds its packed
    #: weights: inputs whose values change on every call would otherwise
    #: keep one copy of the model per call.
    max_value_builds = 16

    def _quantize(self, example_inputs, calibration):
        raise ValueError(f"precision={self.options.precision!r} quantizes PyTorch models (PT2E); an ONNX "
                         "model's int8 form is a QDQ file (onnxruntime.quantization.quantize_static)")

    def __init__(self, model, example_inputs=None, dynamic_dims="auto", **options):
        onnx_model = model if isinstance(model, OnnxModel) else OnnxModel(model)
        # The model's symbolic dims ("auto"), or none: every input shape built for itself ({}).
        if dynamic_dims == "auto":
            dims = onnx_model.dynamic_dims()
        elif not dynamic_dims:
            dims = {}
        else:
            raise ValueError("dynamic_dims: an ONNX model's dynamic dims are its symbolic dims (dim_param); "
                             "pass dynamic_dims={} to compile each input shape for itself")
        super().__init__(onnx_model, None, dynamic_dims=dims, **options)
        # Inputs whose values are compile-time constants (a Slice's bounds
        # given as a graph input): one module per distinct value.
        self._value_inputs = onnx_model.value_inputs()
        self._by_value: "OrderedDict[tuple, CompiledOnnxModule]" = OrderedDict()
        self._init_args = (dynamic_dims, options)
        if example_inputs is not None:
            module, tensors = self._for_values(self._as_tensors(self._positional(tuple(example_inputs), {}))[0])
            module._signature_for(tensors)
            self._last = module._last

    @property
    def input_names(self):
        return [v.name for v in self.model.inputs]

    @property
    def output_names(self):
        return [v.name for v in self.model.outputs]

    def __call__(self, *args, **kwargs):
        tensors, as_numpy = self._as_tensors(self._positional(args, kwargs))
        module, tensors = self._for_values(tensors)
        outputs = CompiledModule.__call__(module, *tensors)
        self._last = module._last
        if as_numpy:
            outputs = tuple(_numpy(o) for o in outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _for_values(self, tensors: tuple) -> Tuple["CompiledOnnxModule", tuple]:
        """The module that runs a call (this one, or the one built for the
        call's values of the value inputs) and the inputs it takes."""
        if not self._value_inputs:
            return self, tensors
        self._check_inputs(tensors)
        values = {self.input_names[i]: _numpy(tensors[i].detach()) for i in sorted(self._value_inputs)}
        key = tuple((name, str(a.dtype), a.shape, a.tobytes()) for name, a in values.items())
        module = self._by_value.get(key)
        if module is not None:
            self._by_value.move_to_end(key)
        else:
            log.info("cuvil: %s: building for %s", self.model_name, ", ".join(
                f"{name} = {a.tolist()} (read by {self._value_inputs[i]} at compile time)"
                for i, (name, a) in zip(sorted(self._value_inputs), values.items())))
            dynamic_dims, options = self._init_args
            module = CompiledOnnxModule(self.model.with_values(values), dynamic_dims=dynamic_dims, **options)
            self._by_value[key] = module
            if len(self._by_value) > self.max_value_builds:
                self._by_value.popitem(last=False)
                log.info("cuvil: %s: more than %d builds for values of %s: dropped the least recently used",
                         self.model_name, self.max_value_builds, ", ".join(values))
        return module, tuple(t for i, t in enumerate(tensors) if i not in self._value_inputs)

    @property
    def num_signatures(self) -> int:
        return len(self._compiled) + sum(m.num_signatures for m in self._by_value.values())

    def signature_key(self, args) -> tuple:
        self._check_inputs(args)
        return super().signature_key(args)

    # -- the front end ---------------------------------------------------------
    @staticmethod
    def _prepare(model):
        return model

    @staticmethod
    def _weight_count(model):
        return None   # not read here: the AMX kernels prefetch (scheduling.prefetch_weights)

    @property
    def model_name(self) -> str:
        return self.model.name

    def _structural_key(self, key, options) -> str:
        h = hashlib.sha256()
        for part in ("onnx", self.model.digest, repr(key), *options, *_import_code()):
            h.update(str(part).encode() + b"\0")
        return h.hexdigest()[:32]

    def _weights_of(self, specs) -> Optional[Dict[str, object]]:
        tensors = self.model.weight_tensors()
        if any(s["name"] not in tensors for s in specs):
            return None
        return {s["name"]: tensors[s["name"]] for s in specs}

    def _import_model(self, args):
        from . import importer_onnx
        shapes = None if self.options.dynamic else [tuple(a.shape) for a in args]
        return importer_onnx.import_model(self.model, shapes)

    # -- inputs ------------------------------------------------------------------
    def _positional(self, args, kwargs) -> tuple:
        names = self.input_names
        if not kwargs:
            if len(args) != len(names):
                raise TypeError(f"{self.model_name} takes {len(names)} input(s) ({', '.join(names)}), "
                                f"got {len(args)}")
            return tuple(args)
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(f"{self.model_name} has no input {unknown[0]!r}; its inputs: {', '.join(names)}")
        given = dict(zip(names, args), **kwargs)
        missing = [n for n in names if n not in given]
        if missing or len(args) + len(kwargs) != len(given):
            raise TypeError(f"{self.model_name}: " + (f"input {missing[0]!r} is missing" if missing else
                                                      "an input was given both by position and by name"))
        return tuple(given[n] for n in names)

    @staticmethod
    def _as_tensors(args):
        """torch tensors over the inputs (numpy arrays viewed, not copied);
        and whether the outputs go back as numpy arrays."""
        import numpy as np
        import torch
        as_numpy = any(isinstance(a, (np.ndarray, np.generic)) for a in args)
        tensors = []
        for a in args:
            if isinstance(a, (np.ndarray, np.generic)):
                a = np.asarray(a, order="C")   # (np.ascontiguousarray makes rank 0 rank 1)
                a = torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16) if a.dtype.name == "bfloat16" \
                    else torch.from_numpy(a)
            tensors.append(a)
        return tuple(tensors), as_numpy

    def _check_inputs(self, args) -> None:
        """Each input has the dtype and the static sizes the graph declares."""
        import torch
        for spec, a in zip(self.model.inputs, args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"input {spec.name!r} is a {type(a).__name__}; pass a numpy array or a torch tensor")
            dtype = str(a.dtype).removeprefix("torch.")
            if dtype != spec.dtype:
                raise TypeError(f"input {spec.name!r} has dtype {dtype}; the model takes {spec.dtype}")
            if spec.dims is None:   # any shape: each is compiled for itself
                continue
            if a.dim() != len(spec.dims):
                raise ValueError(f"input {spec.name!r} has rank {a.dim()} (shape {tuple(a.shape)}); "
                                 f"the model takes rank {len(spec.dims)} {_shape(spec.dims)}")
            for d, (size, want) in enumerate(zip(a.shape, spec.dims)):
                if isinstance(want, int) and size != want:
                    raise ValueError(f"input {spec.name!r} dim {d} is {size}; the model takes "
                                     f"{_shape(spec.dims)}")


def _import_code() -> tuple:
    """What decides the imported IR besides the model: torch-mlir and onnx
    (its shape inference sizes the outputs), and Cuvil's ONNX import rules."""
    import importlib.metadata
    from pathlib import Path
    here = Path(__file__).parent
    versions = []
    for dist in ("torch-mlir", "onnx"):
        try:
            versions.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist}=?")
    sources = hashlib.sha256(b"".join((here / f).read_bytes() for f in ("importer_onnx.py", "importer_onnx_rewrites.py",
                                                                          "importer_onnx_folding.py",
                                                                          "importer_onnx_qdq.py")))
    return (*versions, sources.hexdigest())


def _shape(dims) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def _numpy(tensor):
    """A numpy array over an output (bfloat16 as ml_dtypes' bfloat16, which onnx brings)."""
    import torch
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()
