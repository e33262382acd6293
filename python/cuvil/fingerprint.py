"""A structural fingerprint of (model, inputs, options) that is cheap to
compute — no torch.export — so a warm start can find its compiled library
without re-importing the model.

It covers what decides the generated code: the source file of every
submodule's class (hashed whole: `inspect.getsource` parses the file, 0.4 s
for BERT's 18 classes), its type and extra_repr (layer sizes, eps, ...), the names, shapes and dtypes of
parameters and buffers (not their values: weights are runtime arguments),
input shapes and dtypes, HF configs, and the library versions. Code paths
steered by state outside the model (globals, environment) are not seen; set
CUVIL_CACHE_STRUCTURAL=0 to always re-import and key on the IR instead.
"""
import hashlib
import os


_FILE_DIGESTS = {}   # (path, mtime_ns, size) -> sha256 of the file


def _class_source(cls) -> str:
    """Identifies the code of `cls`: a digest of the file defining it."""
    import sys
    name = f"{cls.__module__}.{cls.__qualname__}"
    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if not path:
        return name
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _FILE_DIGESTS:
            with open(path, "rb") as f:
                _FILE_DIGESTS[key] = hashlib.sha256(f.read()).hexdigest()
        return f"{name}:{_FILE_DIGESTS[key]}"
    except OSError:
        return name


def enabled() -> bool:
    return os.environ.get("CUVIL_CACHE_STRUCTURAL", "1") != "0"


def structural_key(model, signature, options) -> str:
    """`signature`: ((shape, dtype), ...) of the inputs, None for dynamic dims."""
    import torch

    h = hashlib.sha256()

    def feed(*parts):
        for part in parts:
            h.update(str(part).encode())
            h.update(b"\0")

    feed(torch.__version__, model.training)
    classes = {}
    for name, module in model.named_modules():
        cls = type(module)
        classes[f"{cls.__module__}.{cls.__qualname__}"] = cls
        feed(name, cls.__qualname__, module.extra_repr())
        config = getattr(module, "config", None)
        if config is not None and hasattr(config, "to_json_string") and name == "":
            feed(config.to_json_string())
    for qualname in sorted(classes):
        feed(qualname, _class_source(classes[qualname]))
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        feed(name, tuple(tensor.shape), tensor.dtype)
    for shape, dtype in signature:
        feed(shape, dtype)
    feed(*options)
    return h.hexdigest()[:32]
