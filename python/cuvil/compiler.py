"""`cuvil.compile`: a torch.nn.Module in, a callable running native code out.

    fast = cuvil.compile(model)                  # compiles at the first call
    fast = cuvil.compile(model, example_inputs=(x,))
    y = fast(x)                                  # same outputs (tensors, tuples, dicts)

The stages run in the order the package's modules are named after:
importer -> raising -> scheduling -> lowering -> artifact -> execution.
A new input shape or dtype compiles again (one library per signature).
"""
import hashlib
import logging
import time
import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import artifact, execution, lowering, pipeline, profiling, raising, scheduling
from .errors import CompileError, CuvilError

log = logging.getLogger("cuvil")

STAGES = ("torch", "linalg", "cuvil", "scheduled", "llvm")

_MLIR_TO_TORCH = {"f32": "float32", "f64": "float64", "f16": "float16", "i64": "int64",
                  "i32": "int32", "i8": "int8", "i1": "bool"}


def _num_threads(explicit: Optional[int]) -> int:
    from . import threads
    return explicit or threads.get_num_threads()


@dataclass
class _Signature:
    """One compiled specialisation: a library and how to call it."""
    library: execution.Library
    main: execution.Function
    main_args: List[tuple]            # ("weight", name) | ("input", i) | ("packed", i)
    packed: List[np.ndarray]
    weights: Dict[str, np.ndarray]
    out_spec: object
    stats: Dict[str, float]
    ir: Dict[str, str] = field(default_factory=dict)
    weight_order: List[str] = field(default_factory=list)   # main_prepack's inputs
    prepack_specs: Optional[tuple] = None                    # (inputs, outputs) or None
    meta: Optional["_Meta"] = None
    run: Optional[execution.BoundFunction] = None   # main with weights bound
    prepacked: Optional["_PackedWeights"] = None    # owns `packed`, maybe shared
    weight_tensors: Dict[str, object] = field(default_factory=dict)   # the model's, by name
    weight_state: tuple = ()                         # their versions and addresses when bound


def _dim_names(i, dims) -> Dict[int, str]:
    """dynamic_dims entry -> {dim: symbol name}: an int, a list, or a dict."""
    if isinstance(dims, int):
        dims = [dims]
    if isinstance(dims, dict):
        return {int(d): str(n) for d, n in dims.items()}
    return {int(d): f"in{i}_dim{d}" for d in dims}


@dataclass
class _Meta:
    """How to call a compiled library; stored beside it in the cache index."""
    main_args: List[tuple]
    main_specs: tuple
    prepack_specs: Optional[tuple]
    weight_order: List[str]
    out_spec: object
    input_dims: list = field(default_factory=list)    # per user input: int | symbol name
    output_dims: list = field(default_factory=list)   # per output: int | sympy expression
    kernels: dict = field(default_factory=dict)       # profile=True: {kernel: what it computes}
    # Identifies main_prepack's code (its IR and the options that lower it):
    # signatures with the same one pack the same weights the same way.
    prepack_key: str = ""

    def to_json(self) -> dict:
        from torch.utils import _pytree as pytree

        def specs(pair):
            return None if pair is None else [[[list(s.shape), s.dtype] for s in side] for side in pair]
        return dict(main_args=[list(r) for r in self.main_args], main_specs=specs(self.main_specs),
                    prepack_specs=specs(self.prepack_specs), weight_order=self.weight_order,
                    out_spec=pytree.treespec_dumps(self.out_spec), input_dims=self.input_dims,
                    output_dims=self.output_dims, kernels=self.kernels, prepack_key=self.prepack_key)

    @classmethod
    def from_json(cls, d) -> "_Meta":
        from torch.utils import _pytree as pytree

        def specs(pair):
            return None if pair is None else tuple(
                [execution.TensorSpec(tuple(shape), dtype) for shape, dtype in side] for side in pair)
        return cls(main_args=[tuple(r) for r in d["main_args"]], main_specs=specs(d["main_specs"]),
                   prepack_specs=specs(d["prepack_specs"]), weight_order=d["weight_order"],
                   out_spec=pytree.treespec_loads(d["out_spec"]), input_dims=d["input_dims"],
                   output_dims=d["output_dims"], kernels=d.get("kernels", {}),
                   prepack_key=d.get("prepack_key", ""))

    def output_shapes(self, arrays) -> Optional[list]:
        """Concrete output shapes for these inputs, when some are symbolic."""
        if all(isinstance(d, int) for dims in self.output_dims for d in dims):
            return None
        import sympy
        env = {}
        for dims, array in zip(self.input_dims, arrays):
            for d, size in zip(dims, array.shape):
                if isinstance(d, str):
                    env[sympy.Symbol(d)] = size
        return [tuple(d if isinstance(d, int) else int(sympy.sympify(d).subs(env)) for d in dims)
                for dims in self.output_dims]


def _spec_of(type_) -> execution.TensorSpec:
    from .ir import RankedTensorType
    t = RankedTensorType(type_)
    shape = tuple(None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank))
    return execution.TensorSpec(shape, str(t.element_type))


def _func_specs(func):
    from .ir import FunctionType
    ft = FunctionType(func.attributes["function_type"].value)
    return [_spec_of(t) for t in ft.inputs], [_spec_of(t) for t in ft.results]


def _arg_roles(func) -> List[tuple]:
    from .ir import DictAttr
    roles, n_inputs = [], 0
    for attrs in func.arg_attrs:
        d = {a.name: a.attr for a in DictAttr(attrs)}
        if "cuvil.packed" in d:
            roles.append(("packed", int(d["cuvil.packed"].value)))
        elif str(d.get("cuvil.kind", "")).strip('"') == "user_input":
            roles.append(("input", n_inputs))
            n_inputs += 1
        else:
            roles.append(("weight", d["cuvil.arg"].value))
    return roles


def _set_c_interface(module):
    """C wrappers for the entry points (main, main_prepack), not the kernels."""
    from .ir import UnitAttr
    with module.context:
        for op in module.body.operations:
            if op.operation.name == "func.func" and "sym_visibility" not in op.attributes:
                op.attributes["llvm.emit_c_interface"] = UnitAttr.get()


class _PackedWeights:
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
_PREPACKED: "weakref.WeakValueDictionary[tuple, _PackedWeights]" = weakref.WeakValueDictionary()


def _prepack(lib, meta, weights, versions) -> Optional[_PackedWeights]:
    if meta.prepack_specs is None:
        return None
    sources = [weights[n] for n in meta.weight_order]
    code = meta.prepack_key or f"library:{lib.path}"
    key = (code, tuple((a.ctypes.data, a.shape, a.dtype.str, versions.get(n))
                       for n, a in zip(meta.weight_order, sources)))
    hit = _PREPACKED.get(key)
    if hit is not None:
        return hit
    pre = lib.function("main_prepack", *meta.prepack_specs)
    # Compile-time work, like codegen: the page faults of the packed weights
    # are taken on every core this process may use, whatever `num_threads` says.
    from . import threads
    packed = _PackedWeights(pre(*sources, touch_threads=threads.available_cores()), sources)
    _PREPACKED[key] = packed
    return packed


def _weight_state(tensors: Dict[str, object]) -> tuple:
    """Changes when a weight is modified in place (torch's version counter)
    or given other memory (`param.data = ...`)."""
    return tuple((t._version, t.data_ptr()) for t in tensors.values())


class CompiledModule:
    """What `cuvil.compile` returns. Call it like the model."""

    def __init__(self, model, example_inputs=None, target="host", opt_level=3,
                 num_threads=None, schedule=scheduling.DEFAULT_SCHEDULE, use_cache=True,
                 dynamic_dims=None, profile=False):
        if target != "host":
            raise ValueError(f"target {target!r} is not supported; use target='host'")
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0..3, got {opt_level!r}")
        self.model = model.eval()
        self.opt_level = opt_level
        self.schedule = tuple(schedule)
        self._num_threads = num_threads
        self.use_cache = use_cache
        self.profiled = bool(profile)   # kernel timers compiled in (see profile())
        # {input index: {dim: symbol name}}: one build serves every size of
        # these dims; dims sharing a name are the same size.
        self.dynamic_dims = {int(i): _dim_names(i, d) for i, d in (dynamic_dims or {}).items()}
        self._compiled: Dict[tuple, _Signature] = {}
        self._last: Optional[_Signature] = None
        if example_inputs is not None:
            self._signature_for(tuple(example_inputs))

    # -- public ---------------------------------------------------------------
    @property
    def stats(self) -> Dict[str, float]:
        """Seconds per stage of the most recent compile (import, raise,
        schedule, lower, codegen, load) and whether the cache was hit."""
        return dict(self._last.stats) if self._last else {}

    def stage_ir(self, stage: str = "cuvil") -> str:
        """The IR text after `stage` (one of STAGES) of the most recent compile."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        if self._last is None:
            raise RuntimeError("nothing compiled yet: call the module or pass example_inputs")
        if stage not in self._last.ir:
            raise KeyError(f"stage {stage!r} was not run for this signature "
                           f"(the library came from the cache); have: {sorted(self._last.ir)}")
        return self._last.ir[stage]

    def export_ir(self, path: str, stage: str = "cuvil") -> None:
        """Writes stage_ir(stage) to `path`."""
        text = self.stage_ir(stage)
        with open(path, "w") as f:
            f.write(text)

    @property
    def num_signatures(self) -> int:
        """How many input signatures (shapes, dtypes) have been compiled."""
        return len(self._compiled)

    def signature_key(self, args) -> tuple:
        """The signature `args` would run under (shapes with dynamic dims as
        None, dtypes); raises TypeError / ValueError for inputs that cannot
        be run (not tensors, another device, an unsupported dtype, a
        mismatch with a dynamic build)."""
        return self._key_of(tuple(args))

    def is_compiled_for(self, key: tuple) -> bool:
        return key in self._compiled

    @property
    def library_path(self) -> str:
        """The shared library of the most recent compile (in the cache)."""
        if self._last is None:
            raise RuntimeError("nothing compiled yet: call the module or pass example_inputs")
        return self._last.library.path

    def __call__(self, *args):
        import torch
        from torch.utils import _pytree as pytree
        sig = self._signature_for(args)
        if sig.weight_tensors and _weight_state(sig.weight_tensors) != sig.weight_state:
            self._bind_weights(sig)   # the model's weights changed since: use the new ones
        arrays = [a.detach().contiguous().numpy() for a in args]
        inputs = [arrays[key] for role, key in sig.main_args if role == "input"]
        outs = sig.run(*inputs, out_shapes=sig.meta.output_shapes(arrays))
        return pytree.tree_unflatten([torch.from_numpy(o) for o in outs], sig.out_spec)

    def profile(self, *args, runs: int = 10, warmup: int = 2) -> "profiling.KernelProfile":
        """Runs the model `runs` times on `args` (after `warmup` calls) and
        returns the time of each kernel per run; needs `profile=True`."""
        if not self.profiled:
            raise ValueError("this module was compiled without kernel timers: "
                             "use cuvil.compile(model, ..., profile=True)")
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        for _ in range(warmup + 1):   # the first call compiles
            self(*args)
        sig = self._last
        counters = profiling.Counters(sig.library.cdll)
        counters.reset()
        t = time.perf_counter()
        for _ in range(runs):
            self(*args)
        wall = time.perf_counter() - t
        return profiling.summarize(counters, sig.meta.kernels, runs, wall)

    # -- compile ----------------------------------------------------------------
    def _key_of(self, args) -> tuple:
        import torch
        if self._compiled:
            expected = len(next(iter(self._compiled)))
            if len(args) != expected:
                raise ValueError(f"{type(self.model).__name__} was compiled for {expected} "
                                 f"input(s), got {len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"input {i} is a {type(a).__name__}; cuvil.compile takes tensors")
            if a.device.type != "cpu":
                raise ValueError(f"input {i} is on {a.device}; Cuvil compiles for the host CPU: "
                                 f"pass it with .cpu()")
            if str(a.dtype).removeprefix("torch.") not in _MLIR_TO_TORCH.values():
                raise TypeError(f"input {i} has dtype {a.dtype}, which Cuvil does not support; "
                                f"supported: {', '.join(sorted(set(_MLIR_TO_TORCH.values())))} "
                                f"(e.g. convert with .float())")
        self._check_shared_dims(args)
        key = tuple((tuple(None if d in self.dynamic_dims.get(i, ()) else s
                           for d, s in enumerate(a.shape)), str(a.dtype))
                    for i, a in enumerate(args))
        if self.dynamic_dims and self._compiled and key not in self._compiled:
            # A dynamic build serves its dynamic dims only: say which dim differs.
            (built,) = list(self._compiled)[:1]
            for i, ((shape, dtype), (want_shape, want_dtype)) in enumerate(zip(key, built)):
                if dtype != want_dtype:
                    raise TypeError(f"input {i} has dtype {dtype}, compiled for {want_dtype}")
                if len(shape) != len(want_shape):
                    raise ValueError(f"input {i} has rank {len(shape)}, compiled for {len(want_shape)}")
                for d, (got, want) in enumerate(zip(shape, want_shape)):
                    if got != want:
                        raise ValueError(
                            f"input {i} dim {d} is {got} but the model was compiled for {want}; "
                            f"dynamic dims are {self.dynamic_dims or 'none'}")
        return key

    def _check_shared_dims(self, args) -> None:
        """Dynamic dims with one name are one size (the library assumes it)."""
        sizes = {}
        for i, dims in self.dynamic_dims.items():
            if i >= len(args):
                continue
            for d, name in dims.items():
                if d >= args[i].dim():
                    continue   # reported by _export_inputs when compiling
                size = args[i].shape[d]
                if size < 1:
                    raise ValueError(f"input {i} dim {d} ({name!r}) is {size}; dynamic dims must be >= 1")
                first = sizes.setdefault(name, (i, d, size))
                if first[2] != size:
                    raise ValueError(f"dynamic dim {name!r} is {first[2]} in input {first[0]} dim {first[1]} "
                                     f"but {size} in input {i} dim {d}: dims sharing a name must be equal")

    def _signature_for(self, args) -> _Signature:
        key = self._key_of(args)
        if key not in self._compiled:
            if self._compiled:
                log.info("cuvil: new input signature %s: compiling again", key)
            self._compiled[key] = self._compile(args, key)
        self._last = self._compiled[key]
        return self._last

    def _pipeline(self, threads) -> "pipeline.Pipeline":
        return pipeline.compile_pipeline(threads, opt_level=self.opt_level, profile=self.profiled,
                                         schedule=self.schedule)

    def _options(self, pipe) -> tuple:
        """Everything besides the model that changes the generated code: the
        pipeline (passes, script texts), the dynamic dims, the C runtime linked
        into every library, the build of the passes themselves, the host."""
        dynamic = sorted((i, sorted(dims.items())) for i, dims in self.dynamic_dims.items())
        return (pipe.fingerprint(), f"dynamic={dynamic}",
                artifact.runtime_sources(), artifact.compiler_build(), artifact.host_cpu())

    def _compile(self, args, key) -> _Signature:
        from . import fingerprint

        threads = _num_threads(self._num_threads)
        pipe = self._pipeline(threads)
        options = self._options(pipe)
        index_key = None
        if self.use_cache and fingerprint.enabled():
            index_key = fingerprint.structural_key(self.model, key, options)
            warm = self._warm_start(artifact.load_index(index_key))
            if warm is not None:
                return warm
        return self._compile_from_source(args, pipe, options, index_key)

    def _warm_start(self, entry) -> Optional[_Signature]:
        """The signature from a warm-start index entry, or None when there is
        none or it cannot be used (weights not the model's, library gone, an
        entry this version of Cuvil did not write): then compile from source."""
        if entry is None:
            return None
        t = time.perf_counter()
        try:
            tensors = self._weights_from_model(entry["weights"])
            lib_path = artifact.lookup(entry["library"]) if tensors is not None else None
            meta = _Meta.from_json(entry) if lib_path is not None else None
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            log.debug("cuvil: ignoring a malformed warm-start index entry: %r", err)
            return None
        if meta is None:
            return None
        return self._load(lib_path, meta, tensors, {"cache_hit": 1.0}, {}, t)

    def _export_inputs(self, args):
        """Example inputs and torch.export dynamic_shapes. A dynamic dim whose
        example size is 0 or 1 would be specialised by torch.export, so the
        export sees size 2 there."""
        if not self.dynamic_dims:
            return args, None
        import torch
        shapes, examples, symbols = [], [], {}
        for i, a in enumerate(args):
            dims = self.dynamic_dims.get(i, {})
            bad = [d for d in dims if not 0 <= d < a.dim()]
            if bad:
                raise ValueError(f"dynamic_dims: input {i} has rank {a.dim()}, no dim {bad[0]}")
            shapes.append({d: symbols.setdefault(name, torch.export.Dim(name, min=1, max=2 ** 31 - 2))
                           for d, name in dims.items()} or None)
            if any(a.shape[d] < 2 for d in dims):
                size = [2 if d in dims and s < 2 else s for d, s in enumerate(a.shape)]
                a = torch.zeros(size, dtype=a.dtype) if not a.is_floating_point() \
                    else torch.randn(size, dtype=a.dtype)
            examples.append(a)
        return tuple(examples), tuple(shapes)

    def _weights_from_model(self, specs):
        """The model's weight tensors (the Parameter / buffer objects, which
        see `.data = ...`) by export name, or None when one is not a
        parameter/buffer (e.g. a tensor constant made in forward)."""
        weights = {}
        for spec in specs:
            if spec["kind"] not in ("parameter", "buffer", "buffer_nonpersistent"):
                return None
            getter = self.model.get_parameter if spec["kind"] == "parameter" else self.model.get_buffer
            try:
                tensor = getter(spec["name"])
            except AttributeError:
                return None
            weights[spec["name"]] = tensor
        return weights

    def _compile_from_source(self, args, pipe, options, index_key) -> _Signature:
        from . import importer
        from .ir import Context

        stats, ir_text = {}, {}
        t = time.perf_counter()
        # Asserts (embedding bounds, BatchNorm's empty check) block elementwise
        # fusion; LayerNorm stays in the model's dtype; cumsum avoids tm_tensor.
        args, dynamic_shapes = self._export_inputs(args)
        try:
            imported = importer.import_model(
                self.model, args, strip_asserts=True, dynamic_shapes=dynamic_shapes,
                extra_decompositions={**importer.F32_LAYERNORM_DECOMPS,
                                      **importer.NO_TM_TENSOR_DECOMPS})
        except CuvilError:
            raise
        except Exception as err:  # torch.export's own failures: name them, keep the cause
            raise CompileError("import", f"torch.export could not capture "
                               f"{type(self.model).__name__}: {type(err).__name__}: "
                               f"{str(err).splitlines()[0] if str(err) else ''}") from err
        ir_text["linalg"] = pipeline.as_printed(imported.text)
        if importer.last_torch_ir():
            ir_text["torch"] = pipeline.as_printed(importer.last_torch_ir())
        stats["import"] = time.perf_counter() - t
        weight_args = [a for a in imported.manifest["args"] if a["kind"] != "user_input"]
        # The model's own tensors where they are parameters/buffers, so that
        # later changes to them are seen (see __call__); else the export's.
        tensors = self._weights_from_model(weight_args) or \
            {a["name"]: w for a, w in zip(weight_args, imported.weights())}
        key = artifact.cache_key(imported.text, *options)

        with Context() as ctx:
            module = raising.parse(imported.text, ctx)
            weight_positions = {i for i, a in enumerate(imported.manifest["args"])
                                if a["kind"] != "user_input"}
            raising.mark_weights(module, weight_positions)
            raise_step, *later_steps = pipe.steps
            self._run_step(raise_step, module, stats, ir_text)
            main = raising.lookup_func(module, "main")
            prepack = raising.lookup_func(module, "main_prepack")
            meta = _Meta(main_args=_arg_roles(main), main_specs=_func_specs(main),
                         prepack_specs=_func_specs(prepack) if prepack is not None else None,
                         # main_prepack takes every weight, in the importer's order.
                         weight_order=[a["name"] for a in weight_args],
                         out_spec=imported.out_spec,
                         input_dims=imported.manifest.get("input_dims", []),
                         output_dims=imported.manifest.get("output_dims", []),
                         kernels=profiling.describe_kernels(module) if self.profiled else {},
                         prepack_key="" if prepack is None else hashlib.sha256(
                             "\0".join((str(prepack), *options)).encode()).hexdigest()[:32])

            lib_path = artifact.lookup(key) if self.use_cache else None
            stats["cache_hit"] = float(lib_path is not None)
            if lib_path is None:
                payload = module
                for step in later_steps:
                    if step.name == "lower":
                        _set_c_interface(module)
                        lowering.read_only_entry_arguments(module)
                    payload = self._run_step(step, payload, stats, ir_text, key=key)
                lib_path = payload
        if index_key is not None:
            try:
                entry = dict(meta.to_json(), library=key,
                             weights=[{"name": a["name"], "kind": a["kind"]} for a in weight_args])
            except Exception as err:  # e.g. an output type pytree cannot serialize
                log.debug("cuvil: no warm-start index for this model: %s", err)
            else:
                artifact.store_index(index_key, entry)
        return self._load(lib_path, meta, tensors, stats, ir_text, time.perf_counter())

    @staticmethod
    def _run_step(step, payload, stats, ir_text, key=None):
        """Runs one pipeline step, timing it and keeping the IR it leaves
        (as the command-line tools print it, so that replay.sh reproduces it)."""
        t = time.perf_counter()
        if isinstance(step, pipeline.Translate):
            payload = step.run(ir_text["llvm"])
        elif isinstance(step, pipeline.Codegen):
            payload = step.run(payload, key)
        else:
            payload = step.run(payload)
        stats[step.name] = time.perf_counter() - t
        if step.produces in STAGES or step.produces == "llvm_ir":
            ir_text[step.produces] = payload if step.produces == "llvm_ir" else pipeline.as_printed(payload)
        log.debug("cuvil: %s -> %s in %.3f s", step.name, step.produces, stats[step.name])
        return payload

    def _load(self, lib_path, meta, tensors, stats, ir_text, t0) -> _Signature:
        lib = execution.Library(lib_path)
        sig = _Signature(lib, lib.function("main", *meta.main_specs), meta.main_args, [], {},
                         meta.out_spec, stats, ir_text, meta.weight_order, meta.prepack_specs, meta,
                         weight_tensors=tensors)
        self._bind_weights(sig)
        stats["load"] = time.perf_counter() - t0
        log.debug("cuvil: compiled %s in %s", self.model.__class__.__name__,
                  {k: round(v, 3) for k, v in stats.items()})
        return sig

    @staticmethod
    def _bind_weights(sig: _Signature) -> None:
        """Binds the weights as they are now: unpacked ones by reference
        (no copy when 64-byte aligned), packed ones by running main_prepack
        (or reusing another signature's packing of these very tensors).
        A parameter replaced by a new object (`layer.weight = Parameter(..)`)
        is not seen: compile again."""
        tensors = sig.weight_tensors
        sig.weight_state = _weight_state(tensors)
        sig.weights = {n: execution.as_aligned(t.detach().contiguous().numpy()) for n, t in tensors.items()}
        versions = {n: t._version for n, t in tensors.items()}
        sig.prepacked = _prepack(sig.library, sig.meta, sig.weights, versions)
        sig.packed = sig.prepacked.arrays if sig.prepacked is not None else []
        sig.run = sig.main.bind({i: sig.weights[key] if role == "weight" else sig.packed[key]
                                 for i, (role, key) in enumerate(sig.meta.main_args) if role != "input"})


def compile(model, example_inputs=None, target="host", opt_level=3, num_threads=None,
            dynamic_dims=None, profile=False):
    """Compiles `model` (torch.nn.Module) to native code; see CompiledModule.

    dynamic_dims: {input index: dim or [dims]} compiled as symbolic sizes
    (e.g. {0: 0} for a dynamic batch): one build serves all their sizes.
    profile: compile kernel timers in; `.profile(*inputs)` then reports the
    time of each kernel (cuvil.profiling)."""
    return CompiledModule(model, example_inputs, target=target, opt_level=opt_level,
                          num_threads=num_threads, dynamic_dims=dynamic_dims, profile=profile)
