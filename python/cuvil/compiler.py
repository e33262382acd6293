"""`cuvil.compile`: a torch.nn.Module in, a callable running native code out.

    fast = cuvil.compile(model)                  # compiles at the first call
    fast = cuvil.compile(model, example_inputs=(x,))
    y = fast(x)                                  # same outputs (tensors, tuples, dicts)

The stages run in the order the package's modules are named after:
importer -> raising -> scheduling -> lowering -> artifact -> execution.
A new input shape or dtype compiles again (one library per signature).
"""
import logging
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import artifact, execution, lowering, raising, scheduling
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
    from .ir import UnitAttr
    with module.context:
        for op in module.body.operations:
            if op.operation.name == "func.func":
                op.attributes["llvm.emit_c_interface"] = UnitAttr.get()


class CompiledModule:
    """What `cuvil.compile` returns. Call it like the model."""

    def __init__(self, model, example_inputs=None, target="host", opt_level=3,
                 num_threads=None, schedule=scheduling.DEFAULT_SCHEDULE, use_cache=True):
        if target != "host":
            raise ValueError(f"target {target!r} is not supported; use target='host'")
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0..3, got {opt_level!r}")
        self.model = model.eval()
        self.opt_level = opt_level
        self.schedule = schedule if opt_level > 0 else ()
        self._num_threads = num_threads
        self.use_cache = use_cache
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

    def export_ir(self, path: str, stage: str = "cuvil") -> None:
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        if self._last is None:
            raise RuntimeError("nothing compiled yet: call the module or pass example_inputs")
        if stage not in self._last.ir:
            raise KeyError(f"stage {stage!r} was not run for this signature "
                           f"(the library came from the cache); have: {sorted(self._last.ir)}")
        with open(path, "w") as f:
            f.write(self._last.ir[stage])

    def __call__(self, *args):
        import torch
        from torch.utils import _pytree as pytree
        sig = self._signature_for(args)
        arrays = [a.detach().contiguous().numpy() for a in args]
        call = []
        for role, key in sig.main_args:
            call.append(sig.weights[key] if role == "weight" else
                        arrays[key] if role == "input" else sig.packed[key])
        outs = sig.main(*call)
        return pytree.tree_unflatten([torch.from_numpy(o) for o in outs], sig.out_spec)

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
        return tuple((tuple(a.shape), str(a.dtype)) for a in args)

    def _signature_for(self, args) -> _Signature:
        key = self._key_of(args)
        if key not in self._compiled:
            if self._compiled:
                log.info("cuvil: new input signature %s: compiling again", key)
            self._compiled[key] = self._compile(args)
        self._last = self._compiled[key]
        return self._last

    def _compile(self, args) -> _Signature:
        from . import importer
        from .ir import Context

        stats, ir_text = {}, {}
        t = time.perf_counter()
        # Asserts (embedding bounds, BatchNorm's empty check) block elementwise
        # fusion; LayerNorm stays in the model's dtype; cumsum avoids tm_tensor.
        try:
            imported = importer.import_model(
                self.model, args, strip_asserts=True,
                extra_decompositions={**importer.F32_LAYERNORM_DECOMPS,
                                      **importer.NO_TM_TENSOR_DECOMPS})
        except CuvilError:
            raise
        except Exception as err:  # torch.export's own failures: name them, keep the cause
            raise CompileError("import", f"torch.export could not capture "
                               f"{type(self.model).__name__}: {type(err).__name__}: "
                               f"{str(err).splitlines()[0] if str(err) else ''}") from err
        ir_text["linalg"] = imported.text
        if importer.last_torch_ir():
            ir_text["torch"] = importer.last_torch_ir()
        stats["import"] = time.perf_counter() - t
        weights = {a["name"]: execution.as_aligned(w.contiguous().numpy())
                   for a, w in zip([a for a in imported.manifest["args"] if a["kind"] != "user_input"],
                                   imported.weights())}
        threads = _num_threads(self._num_threads)
        schedule_text = "".join(s + e for s, e in self.schedule)
        key = artifact.cache_key(imported.text, schedule_text, f"threads={threads}",
                                 f"opt={self.opt_level}")

        with Context() as ctx:
            t = time.perf_counter()
            module = raising.parse(imported.text, ctx)
            weight_positions = {i for i, a in enumerate(imported.manifest["args"])
                                if a["kind"] != "user_input"}
            raising.mark_weights(module, weight_positions)
            raising.raise_and_prepack(module)
            _set_c_interface(module)
            ir_text["cuvil"] = str(module)
            stats["raise"] = time.perf_counter() - t
            main = raising.lookup_func(module, "main")
            prepack = raising.lookup_func(module, "main_prepack")
            roles = _arg_roles(main)
            main_specs = _func_specs(main)
            prepack_specs = _func_specs(prepack) if prepack is not None else None
            # main_prepack takes every weight, in the importer's order.
            weight_order = [a["name"] for a in imported.manifest["args"] if a["kind"] != "user_input"]

            lib_path = artifact.lookup(key) if self.use_cache else None
            stats["cache_hit"] = float(lib_path is not None)
            if lib_path is None:
                t = time.perf_counter()
                scheduling.apply_schedule(module, self.schedule)
                ir_text["scheduled"] = str(module)
                stats["schedule"] = time.perf_counter() - t
                t = time.perf_counter()
                lowering.to_llvm_dialect(module, threads)
                ir_text["llvm"] = str(module)
                llvm_ir = ir_text["llvm_ir"] = lowering.translate_to_llvm_ir(ir_text["llvm"])
                stats["lower"] = time.perf_counter() - t
                t = time.perf_counter()
                lib_path = artifact.build_shared_library(llvm_ir, key, threads)
                stats["codegen"] = time.perf_counter() - t

        t = time.perf_counter()
        lib = execution.Library(lib_path)
        main_fn = lib.function("main", *main_specs)
        packed = []
        if prepack_specs is not None:
            pre = lib.function("main_prepack", *prepack_specs)
            packed = pre(*[weights[n] for n in weight_order])
        stats["load"] = time.perf_counter() - t
        log.debug("cuvil: compiled %s in %s", self.model.__class__.__name__,
                  {k: round(v, 3) for k, v in stats.items()})
        return _Signature(lib, main_fn, roles, packed, weights, imported.out_spec, stats, ir_text,
                          weight_order, prepack_specs)


def compile(model, example_inputs=None, target="host", opt_level=3, num_threads=None):
    """Compiles `model` (torch.nn.Module) to native code; see CompiledModule."""
    return CompiledModule(model, example_inputs, target=target, opt_level=opt_level,
                          num_threads=num_threads)
