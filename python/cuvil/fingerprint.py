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
and the options (library versions, host CPU, dynamic dims). Functions a
module holds (`self.act = F.gelu`, a lambda, a partial) and the variables
the methods of a class defined inside a function close over are keyed by
their code and values (see _describe): two modules of one class that differ
only there compile to different code. The module-level globals the
classes' methods read (constants, flags, helper functions and the globals
those read) are keyed by value (see _globals_of). Other state outside the
model (the environment, attributes of imported modules) is not seen; set
CUVIL_CACHE_STRUCTURAL=0 to always re-import and key on the IR instead.
"""
import hashlib
import os
from typing import Any, Dict


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
    and lists of them), small tensor attributes (their contents), and what
    else it holds as _describe writes it (functions, dtypes, configs)."""
    import torch
    parts = []
    for key, value in sorted(vars(module).items()):
        if key.startswith("_"):
            continue
        if isinstance(value, _PLAIN) or (isinstance(value, (tuple, list))
                                         and all(isinstance(v, _PLAIN) for v in value)):
            parts.append(f"{key}={value!r}")
        elif isinstance(value, torch.Tensor):
            parts.append(f"{key}:{_tensor_digest(value)}")
        else:   # functions (self.act = F.gelu), dtypes, configs, other objects
            parts.append(f"{key}={_describe(value)}")
    return parts


def _tensor_digest(value) -> str:
    """Shape, dtype and (up to INLINE_MAX_BYTES, what the importer inlines) contents."""
    import torch
    t = value.detach()
    # A sparse tensor (e.g. an op's CSR argument held by a model) by its
    # dense contents and its layout: it has no contiguous form to hash.
    layout = "" if t.layout == torch.strided else f":{t.layout}"
    if layout:
        t = t.to_dense()
    data = t.cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes() \
        if t.numel() * t.element_size() <= INLINE_MAX_BYTES else b""
    return f"{tuple(t.shape)}:{t.dtype}{layout}:{hashlib.sha256(data).hexdigest()}"


def _describe(value, depth: int = 0) -> str:
    """A text that differs when `value` would make torch.export trace other
    code: a function by its code, defaults and the values it closes over, a
    builtin or torch op by its name, a partial by its function and arguments,
    containers by their items. Anything else by its type and repr: when that
    repr holds an address the key is only good within this process (a
    cold build in the next one, never a wrong library)."""
    import functools
    import types
    import torch
    if depth > 6:
        return "..."
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, torch.Tensor):
        return f"tensor:{_tensor_digest(value)}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}(" + ",".join(_describe(v, depth + 1) for v in value) + ")"
    if isinstance(value, dict):
        return "dict(" + ",".join(f"{_describe(k, depth + 1)}:{_describe(v, depth + 1)}"
                                  for k, v in value.items()) + ")"
    if isinstance(value, functools.partial):
        return (f"partial({_describe(value.func, depth + 1)},{_describe(value.args, depth + 1)},"
                f"{_describe(value.keywords, depth + 1)})")
    if isinstance(value, types.MethodType):
        return f"method({type(value.__self__).__qualname__},{_describe(value.__func__, depth + 1)})"
    if isinstance(value, types.FunctionType):
        code = _code_digest(value.__code__)
        cells = [c.cell_contents if c.cell_contents is not value else "<self>"
                 for c in (value.__closure__ or ()) if _cell_is_set(c)]
        return (f"function({value.__module__}.{value.__qualname__},{code},"
                f"{_describe(value.__defaults__, depth + 1)},{_describe(value.__kwdefaults__, depth + 1)},"
                f"{_describe(cells, depth + 1)})")
    if isinstance(value, torch.nn.Module):
        return f"module({type(value).__qualname__}," + ",".join(_attributes(value)) + ")"
    if isinstance(value, type):
        return f"class({_class_source(value)})"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if name and module and callable(value):   # builtins (torch.amax), torch ops, ufuncs
        return f"{module}.{name}:{value!r}"
    return f"{type(value).__module__}.{type(value).__qualname__}:{value!r}"


def _code_digest(code) -> str:
    """A code object's instructions, constants and names, not where it sits
    in its file (line and column tables)."""
    import types
    h = hashlib.sha256(code.co_code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            text = _code_digest(const)
        elif isinstance(const, frozenset):   # `x in {"a", "b"}`: its repr's order follows the string hash seed
            text = "frozenset(" + ",".join(sorted(map(repr, const))) + ")"
        else:
            text = repr(const)
        h.update(text.encode())
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                   code.co_argcount, code.co_kwonlyargcount, code.co_flags)).encode())
    return h.hexdigest()


def _cell_is_set(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:   # a closure variable not yet assigned
        return False


def _closures(cls) -> str:
    """For a class defined inside a function: the values its methods close
    over (its source file is the same for every call of that function)."""
    if "<locals>" not in cls.__qualname__:
        return ""
    return ",".join(f"{attr}={_describe(fn)}" for attr, fn in sorted(vars(cls).items())
                    if callable(fn) and hasattr(fn, "__code__"))


#: Containers larger than this are keyed by their identity (this process
#: only: a cold build in the next one) instead of item by item.
_GLOBAL_ITEMS_MAX = 64


def _global_reads(code):
    """The names `code` (and the functions, lambdas and comprehensions nested
    in it) loads as globals."""
    import dis
    import types
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL":
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_reads(const)
    return names


def _global_value(value, seen, depth: int = 0) -> str:
    """A module-level value a method reads, as far as it can steer what
    torch.export traces: plain values, tensors and small containers by
    content, functions by their code and (in turn) the globals they read,
    classes by their source, modules and other callables by name. Objects
    whose repr is an address are keyed by identity: good within this
    process only (the next one builds again: never another model's library).
    Like _describe, it stops at a depth (here 4: a helper's helper's global's
    items): what lies deeper is not seen."""
    import collections.abc
    import types
    import torch
    if depth > 4:
        return "..."
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, torch.Tensor):
        return f"tensor:{_tensor_digest(value)}"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, type):
        return f"class({_class_source(value)})"
    if isinstance(value, types.FunctionType):
        if (value.__module__ or "").split(".")[0] == "torch":   # keyed by torch's version
            return f"function({value.__module__}.{value.__qualname__})"
        desc = f"function({value.__module__}.{value.__qualname__},{_code_digest(value.__code__)}"
        if value in seen:
            return desc + ")"
        seen.add(value)
        return desc + "," + _function_globals(value, seen, depth + 1) + ")"
    sized = isinstance(value, collections.abc.Sized)
    if sized and len(value) > _GLOBAL_ITEMS_MAX:
        return f"{type(value).__qualname__}:id{id(value)}"
    if isinstance(value, collections.abc.Mapping):
        return "map(" + ",".join(f"{k!r}:{_global_value(v, seen, depth + 1)}" for k, v in value.items()) + ")"
    if isinstance(value, (tuple, list, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return f"{type(value).__name__}(" + ",".join(_global_value(v, seen, depth + 1) for v in items) + ")"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name and callable(value):   # builtins, torch ops, wrapped functions
        return f"{getattr(value, '__module__', '')}.{name}"
    text = repr(value)
    if " at 0x" in text:
        return f"{type(value).__qualname__}:id{id(value)}"
    return f"{type(value).__module__}.{type(value).__qualname__}:{text}"


def _function_globals(fn, seen, depth: int = 0) -> str:
    """The globals `fn` reads, each as _global_value writes it."""
    import builtins
    scope = fn.__globals__
    parts = []
    for name in sorted(_global_reads(fn.__code__)):
        if name in scope:
            try:
                text = _global_value(scope[name], seen, depth)
            except Exception:  # noqa: BLE001 - a len() or repr() that raises: keyed by identity
                text = f"id{id(scope[name])}"
            parts.append(f"{name}={text}")
        elif not hasattr(builtins, name):
            parts.append(f"{name}=<unbound>")
    return ",".join(parts)


def _names(code):
    """Every name `code` and the code nested in it use (globals and attributes)."""
    import types
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _globals_of(cls) -> str:
    """What `forward` of `cls`, and the methods of `cls` it reaches by name
    (`self._helper(...)`), read from their modules' globals (a module-level
    constant, a flag, a helper function and what it reads): changing one
    changes the code torch.export traces, so it changes the key. Only those
    methods: the rest of a Hugging Face PreTrainedModel (loading, saving)
    reads locks and caches whose keys would hold only in this process."""
    import inspect
    methods: Dict[str, Any] = {}
    for klass in inspect.getmro(cls):
        if klass.__module__.split(".")[0] in ("torch", "builtins"):
            continue
        for attr, fn in vars(klass).items():
            fn = getattr(fn, "__func__", fn)   # staticmethod / classmethod
            if inspect.isfunction(fn):
                methods.setdefault(attr, fn)
    seen: set = set()
    parts: list = []
    done: set = set()
    todo = ["forward"]
    while todo:
        name = todo.pop()
        if name in done or name not in methods:
            continue
        done.add(name)
        fn = methods[name]
        parts.append(f"{name}:{_function_globals(fn, seen)}")
        todo.extend(sorted(_names(fn.__code__) & methods.keys()))
    return ";".join(sorted(parts))


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
        feed(qualname, _class_source(classes[qualname]), _closures(classes[qualname]),
             _globals_of(classes[qualname]))
    for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
        feed(name, tuple(tensor.shape), tensor.dtype)
    for shape, dtype in signature:
        feed(shape, dtype)
    feed(*options)
    return h.hexdigest()[:32]
