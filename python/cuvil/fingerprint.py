"""A structural fingerprint of (model, inputs, options) that is cheap to
compute — no torch.export — so a warm start can find its compiled library
without re-importing the model.

It covers what decides the generated code: the source file of every
submodule's class (hashed whole: `inspect.getsource` parses the file, 0.4 s
for BERT's 18 classes; the bytecode of its methods when it has no file; the
generated code of an FX GraphModule, e.g. a Dynamo graph), its
type and extra_repr (layer sizes, eps, ...), its plain attributes (ints,
floats, strings, flags) and small tensor attributes (inlined into the IR),
every HF config, the names, shapes and dtypes of parameters and buffers
(not their values: weights are runtime arguments), input shapes and dtypes,
and the options (library versions, host CPU, dynamic dims). Code paths
steered by state outside the model (globals, environment) are not seen; set
CUVIL_CACHE_STRUCTURAL=0 to always re-import and key on the IR instead.
"""
import hashlib
import os
from typing import Dict


_FILE_DIGESTS: Dict[tuple, str] = {}   # (path, mtime_ns, size) -> sha256 of the file


def _class_bytecode(cls) -> str:
    """A digest of the bytecode of `cls`'s own functions (and those of its
    bases outside torch): for classes with no source file, e.g. defined in a
    notebook or `python -c`."""
    import inspect
    import marshal
    h = hashlib.sha256()
    for klass in inspect.getmro(cls):
        if klass.__module__.split(".")[0] in ("torch", "builtins"):
            continue
        for attr in sorted(vars(klass)):
            code = getattr(vars(klass)[attr], "__code__", None)
            if code is not None:
                h.update(attr.encode() + marshal.dumps(code))
    return h.hexdigest()


def _class_source(cls) -> str:
    """Identifies the code of `cls`: a digest of the file defining it."""
    import sys
    name = f"{cls.__module__}.{cls.__qualname__}"
    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not path:
        return f"{name}:bytecode:{_class_bytecode(cls)}"
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _FILE_DIGESTS:
            with open(path, "rb") as f:
                _FILE_DIGESTS[key] = hashlib.sha256(f.read()).hexdigest()
        return f"{name}:{_FILE_DIGESTS[key]}"
    except OSError:
        return f"{name}:bytecode:{_class_bytecode(cls)}"


_PLAIN = (int, float, bool, str, type(None))
# Tensor attributes up to this size are inlined into the IR by the importer
# (the default of importer.import_model's inline_max_bytes); larger ones
# become arguments, which a warm start cannot bind, so it re-imports. Defined
# here: the importer module loads torch-mlir, which a warm start must not.
INLINE_MAX_BYTES = 65536


def _attributes(module):
    """What torch.export bakes into the IR from `module`'s own state besides
    its parameters and buffers: plain values (head counts, eps, flags; tuples
    and lists of them) and small tensor attributes (their contents)."""
    import torch
    parts = []
    for key, value in sorted(vars(module).items()):
        if key.startswith("_"):
            continue
        if isinstance(value, _PLAIN) or (isinstance(value, (tuple, list))
                                         and all(isinstance(v, _PLAIN) for v in value)):
            parts.append(f"{key}={value!r}")
        elif isinstance(value, torch.Tensor):
            t = value.detach()
            data = t.cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes() \
                if t.numel() * t.element_size() <= INLINE_MAX_BYTES else b""
            parts.append(f"{key}:{tuple(t.shape)}:{t.dtype}:{hashlib.sha256(data).hexdigest()}")
    return parts


def enabled() -> bool:
    from .options import environment
    return environment().structural_cache


def structural_key(model, signature, options) -> str:
    """`signature`: ((shape, dtype), ...) of the inputs, None for dynamic dims."""
    import torch

    h = hashlib.sha256()

    def feed(*parts):
        for part in parts:
            h.update(str(part).encode())
            h.update(b"\0")

    feed(torch.__version__, model.training)
    classes, configs = {}, set()
    for name, module in model.named_modules():
        cls = type(module)
        classes[f"{cls.__module__}.{cls.__qualname__}"] = cls
        feed(name, cls.__qualname__, module.extra_repr())
        if isinstance(module, torch.fx.GraphModule):
            # Its class is the same for every graph (torch.fx's file): the
            # code is in the graph (each Dynamo graph of a model is one).
            feed(module.code)
        feed(*_attributes(module))
        config = getattr(module, "config", None)
        if config is not None and hasattr(config, "to_json_string") and id(config) not in configs:
            configs.add(id(config))
            feed(config.to_json_string())
    for qualname in sorted(classes):
        feed(qualname, _class_source(classes[qualname]))
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        feed(name, tuple(tensor.shape), tensor.dtype)
    for shape, dtype in signature:
        feed(shape, dtype)
    feed(*options)
    return h.hexdigest()[:32]
