"""One compiled specialisation of a model (`Signature`), how to call its
library (`CallContract`, stored beside it in the cache index), and the checks
that map a call's inputs to a signature key."""
import functools
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import execution

# Element types Cuvil takes at its boundary, MLIR name -> torch dtype name.
MLIR_TO_TORCH = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i64": "int64",
                 "i32": "int32", "i16": "int16", "i8": "int8", "i1": "bool"}
# Torch dtypes a call takes: uint8 crosses as i8 (same bits; torch-mlir's ops
# know it is unsigned from the model's types).
INPUT_DTYPES = set(MLIR_TO_TORCH.values()) | {"uint8"}
# Complex results cross as (re, im) pairs in a trailing dim (cuvil.importer_complex).
PAIR_DTYPES = {"complex64": "float32", "complex128": "float64"}


@dataclass
class CallContract:
    """How to call a compiled library; stored beside it in the cache index."""
    main_args: List[tuple]            # per @main argument: ("weight", name) | ("input", i) | ("packed", i)
    main_specs: tuple
    prepack_specs: Optional[tuple]    # (inputs, outputs) of @main_prepack, or None
    weight_order: List[str]           # main_prepack's inputs
    out_spec: Any                     # pytree TreeSpec of the outputs
    input_dims: list = field(default_factory=list)    # per user input: int | symbol name
    output_dims: list = field(default_factory=list)   # per output: int | sympy expression
    kernels: dict = field(default_factory=dict)       # profile=True: {kernel: {"id": N, "what": ...}}
    # Identifies main_prepack's code (its IR and the options that lower it):
    # signatures with the same one pack the same weights the same way.
    prepack_key: str = ""
    # What @main's leading results write back, as eager's in-place ops do
    # (torch.export returns mutated values first): ("input", i) the caller's
    # i-th input, ("buffer", name) a buffer of the model. The user outputs follow.
    mutations: List[tuple] = field(default_factory=list)
    # [api_name, is_matrix] per raising linalg op (linalg.inv, linalg.cholesky ...):
    # its LAPACK-style info is a result after the mutated values, checked after
    # the call as eager checks it (importer._linalg_checks_as_outputs).
    linalg_checks: List[list] = field(default_factory=list)
    # Per user output leaf: ["tensor"] | ["constant", value] | ["scalar", "int"|"float"|"bool"]
    # (the library returns the tensors; numbers come back as eager returns them).
    output_slots: List[list] = field(default_factory=list)
    # Per @main result: eager's torch dtype where MLIR's type does not say it (uint8 is i8).
    output_dtypes: List[str] = field(default_factory=list)
    # The graph draws random numbers (cuvil.importer_random): @main's last
    # input is a seed, taken from torch's default generator on every call.
    random_seed: bool = False

    def to_json(self) -> dict:
        from torch.utils import _pytree as pytree

        def specs(pair):
            return None if pair is None else [[[list(s.shape), s.dtype] for s in side] for side in pair]
        return dict(main_args=[list(r) for r in self.main_args], main_specs=specs(self.main_specs),
                    prepack_specs=specs(self.prepack_specs), weight_order=self.weight_order,
                    out_spec=pytree.treespec_dumps(self.out_spec), input_dims=self.input_dims,
                    output_dims=self.output_dims, kernels=self.kernels, prepack_key=self.prepack_key,
                    mutations=[list(m) for m in self.mutations], linalg_checks=self.linalg_checks,
                    output_slots=self.output_slots,
                    output_dtypes=self.output_dtypes, random_seed=self.random_seed)

    @classmethod
    def from_json(cls, d) -> "CallContract":
        from torch.utils import _pytree as pytree
        register_hf_cache_pytrees()   # an out_spec may hold a DynamicCache

        def specs(pair):
            return None if pair is None else tuple(
                [execution.TensorSpec(tuple(shape), dtype) for shape, dtype in side] for side in pair)
        return cls(main_args=[tuple(r) for r in d["main_args"]], main_specs=specs(d["main_specs"]),
                   prepack_specs=specs(d["prepack_specs"]), weight_order=d["weight_order"],
                   out_spec=pytree.treespec_loads(d["out_spec"]), input_dims=d["input_dims"],
                   output_dims=d["output_dims"], kernels=d.get("kernels", {}),
                   prepack_key=d.get("prepack_key", ""),
                   # required: entries older Cuvils wrote lack them
                   mutations=[tuple(m) for m in d["mutations"]], linalg_checks=d["linalg_checks"],
                   output_slots=d["output_slots"],
                   output_dtypes=d["output_dtypes"], random_seed=d["random_seed"])

    @classmethod
    def from_module(cls, module, weight_order, out_spec, manifest, kernels, prepack_key_of) -> "CallContract":
        """Read from the raised module: @main's arguments (their cuvil.*
        attributes say which is an input, a weight or a packed weight) and
        @main_prepack's signature."""
        from . import raising
        main = raising.lookup_func(module, "main")
        prepack = raising.lookup_func(module, "main_prepack")
        return cls(main_args=_arg_roles(main), main_specs=_func_specs(main),
                   prepack_specs=_func_specs(prepack) if prepack is not None else None,
                   weight_order=weight_order, out_spec=out_spec,
                   input_dims=manifest.get("input_dims", []), output_dims=manifest.get("output_dims", []),
                   kernels=kernels, prepack_key="" if prepack is None else prepack_key_of(str(prepack)),
                   mutations=_mutations(manifest),
                   linalg_checks=[[o["target"], o["is_matrix"]] for o in manifest["outputs"]
                                  if o["kind"] == "linalg_check"],
                   output_slots=manifest.get("output_slots", []),
                   output_dtypes=manifest.get("output_dtypes", []),
                   random_seed=bool(manifest.get("random_seed")))

    def check_output_dtypes(self) -> None:
        """Every result's element type is eager's dtype: a lowering that
        changed one (torch-mlir has: threshold_backward of mixed dtypes) is an
        error, not a silently different result."""
        from .errors import CompileError
        for i, (spec, dtype) in enumerate(zip(self.main_specs[1], self.output_dtypes)):
            got = MLIR_TO_TORCH.get(spec.dtype, spec.dtype)
            if got != dtype and not (dtype == "uint8" and got == "int8") and PAIR_DTYPES.get(dtype) != got:
                raise CompileError("import", f"result {i} of the lowered model is {got} where eager "
                                             f"returns {dtype} (a torch-mlir lowering changed it)")

    @functools.cached_property
    def input_keys(self) -> List[Any]:
        """Which user input each non-weight @main argument takes, in order
        (read on every call: not rebuilt from main_args each time)."""
        return [key for role, key in self.main_args if role == "input"]

    def seed_array(self) -> np.ndarray:
        """This call's seed for the random ops: the next number of torch's
        default generator (so torch.manual_seed makes a call repeat)."""
        import torch
        return np.array(torch.empty((), dtype=torch.int64).random_().item(), dtype=np.int64)

    @functools.cached_property
    def leading(self) -> int:
        """How many of @main's results come before the user outputs: the
        mutated values, then the linalg infos."""
        return len(self.mutations) + len(self.linalg_checks)

    def raise_linalg_errors(self, results: list) -> None:
        """Eager's own check (torch._linalg_check_errors) of each raising
        linalg op's info among @main's results: a singular matrix given to
        linalg.inv raises what eager raises, with eager's message."""
        import torch

        from . import errors
        infos = results[len(self.mutations):self.leading]
        for (api_name, is_matrix), info in zip(self.linalg_checks, infos):
            if bool(info.any()):
                try:
                    torch._linalg_check_errors(info, api_name, is_matrix=is_matrix)
                except torch.linalg.LinAlgError as err:
                    raise errors.ExecutionLinAlgError(f"{err} (the outputs of this call are discarded)") from None
                except RuntimeError as err:   # lu_factor's is a plain RuntimeError in eager too
                    raise errors.ExecutionError(f"{err} (the outputs of this call are discarded)") from None

    def user_outputs(self, results: list) -> list:
        """The leaves of the user outputs from @main's results (all of them:
        the mutated values and linalg infos lead): tensors in their eager
        dtypes, numbers as Python numbers."""
        import torch
        results, dtypes = results[self.leading:], self.output_dtypes[self.leading:]
        if "uint8" in dtypes:
            results = [r.view(torch.uint8) if d == "uint8" else r for r, d in zip(results, dtypes)]
        if any(d in PAIR_DTYPES for d in dtypes):   # (re, im) in a trailing dim: the same bytes
            results = [torch.view_as_complex(r) if d in PAIR_DTYPES else r for r, d in zip(results, dtypes)]
        if not self.output_slots:
            return results
        tensors, leaves = iter(results), []
        for slot in self.output_slots:
            if slot[0] == "tensor":
                leaves.append(next(tensors))
            elif slot[0] == "constant":
                leaves.append(slot[1])
            else:
                leaves.append({"int": int, "float": float, "bool": bool}[slot[1]](next(tensors).item()))
        return leaves

    def output_shapes(self, arrays) -> Optional[list]:
        """Concrete output shapes for these inputs, when some are symbolic."""
        if all(isinstance(d, int) for dims in self.output_dims for d in dims):
            # All known; the library's own types may still leave some open
            # (ONNX shape inference knew sizes the lowering did not).
            if not self.main_specs or all(None not in s.shape for s in self.main_specs[1]):
                return None
            return [tuple(dims) for dims in self.output_dims]
        import sympy
        env = {}
        for dims, array in zip(self.input_dims, arrays):
            for d, size in zip(dims, array.shape):
                if isinstance(d, str):
                    env[sympy.Symbol(d)] = size
        # The input dims' names are symbols (not sympy's own N, E, S ...).
        names = {str(k): k for k in env}
        return [tuple(d if isinstance(d, int) else int(sympy.sympify(d, locals=names).subs(env)) for d in dims)
                for dims in self.output_dims]


def _mutations(manifest) -> List[tuple]:
    """The write-backs of the import manifest's mutation outputs, in order."""
    user_inputs = [a["name"] for a in manifest["args"] if a["kind"] == "user_input"]
    found: List[tuple] = []
    for out in manifest["outputs"]:
        if out["kind"] == "user_input_mutation":
            found.append(("input", user_inputs.index(out["target"])))
        elif out["kind"] == "buffer_mutation":
            found.append(("buffer", out["target"]))
    return found


def _spec_of(type_) -> execution.TensorSpec:
    from .ir import RankedTensorType
    t = RankedTensorType(type_)
    shape = tuple(None if t.is_dynamic_dim(i) else t.get_dim_size(i) for i in range(t.rank))
    return execution.TensorSpec(shape, str(t.element_type))


def _func_specs(func):
    from .ir import FunctionType
    ft = FunctionType(func.attributes["function_type"].value)
    return [_spec_of(t) for t in ft.inputs], [_spec_of(t) for t in ft.results]


def _arg_roles(func) -> List[Tuple[str, Union[int, str]]]:
    from .ir import DictAttr, IntegerAttr, StringAttr
    roles: List[Tuple[str, Union[int, str]]] = []
    n_inputs = 0
    for attrs in func.arg_attrs:
        dict_attr = DictAttr(attrs)
        # Indexing, not iteration: the binding has __getitem__/__len__, no __iter__.
        d = {named.name: named.attr for named in (dict_attr[i] for i in range(len(dict_attr)))}
        if "cuvil.packed" in d:
            roles.append(("packed", IntegerAttr(d["cuvil.packed"]).value))
        elif str(d.get("cuvil.kind", "")).strip('"') == "user_input":
            roles.append(("input", n_inputs))
            n_inputs += 1
        else:
            roles.append(("weight", StringAttr(d["cuvil.arg"]).value))
    return roles


@dataclass
class Signature:
    """One compiled specialisation: its library, how to call it, the weights
    bound to it, and what the compile produced.

    library / main: the loaded library and its @main entry point; contract:
    how to call it; weights: the unpacked weight arrays by name (bound by
    reference); packed: main_prepack's outputs; ir: the IR text of every stage
    that ran ({"torch", "linalg", "cuvil", "scheduled", "llvm", "llvm_ir"},
    empty on a cache hit); stats: seconds per stage; pipeline: what built it."""
    library: execution.Library
    main: execution.Function
    contract: CallContract
    stats: Dict[str, float]
    ir: Dict[str, str] = field(default_factory=dict)
    pipeline: Any = None                             # the cuvil.pipeline.Pipeline that built it
    weights: Dict[str, np.ndarray] = field(default_factory=dict)
    packed: List[np.ndarray] = field(default_factory=list)
    run: Optional[execution.BoundFunction] = None   # main with the weights bound
    prepacked: object = None                         # owns `packed`, maybe shared (cuvil.weights)
    weight_tensors: Dict[str, object] = field(default_factory=dict)   # the model's, by name
    weight_state: tuple = ()                         # their versions and addresses when bound
    weight_layout: tuple = ()                        # their (name, shape, dtype) as compiled
    # The weights are Cuvil's own copy, fixed when compiled (a model Cuvil
    # quantized itself): calls do not check them for changes (weights.py).
    weights_fixed: bool = False
    # Its short call path (cuvil.static_call): None until the first call,
    # False where the signature cannot take one.
    static_call: Any = None

    # What the AOT export reads (cuvil.aot).
    @property
    def main_args(self) -> List[tuple]:
        return self.contract.main_args

    @property
    def prepack_specs(self) -> Optional[tuple]:
        return self.contract.prepack_specs

    @property
    def weight_order(self) -> List[str]:
        return self.contract.weight_order


def signature_key(args, dynamic: Dict[int, Dict[int, str]], compiled: Mapping[tuple, object],
                  model_name: str) -> tuple:
    """The signature `args` run under: per input its shape (dynamic dims as
    None) and dtype. Raises TypeError / ValueError for inputs that cannot run
    (not tensors, another device, an unsupported dtype, another input count,
    a mismatch with a dynamic build)."""
    import torch
    if compiled:
        expected = len(next(iter(compiled)))
        if len(args) != expected:
            raise ValueError(f"{model_name} was compiled for {expected} input(s), got {len(args)}")
    for i, a in enumerate(args):
        if isinstance(a, NUMBER_TYPES):
            if i in dynamic:
                raise ValueError(f"dynamic_dims: input {i} is a {type(a).__name__}, not a tensor")
            continue
        if not isinstance(a, torch.Tensor):
            raise TypeError(f"input {i} is a {type(a).__name__}; cuvil.compile takes tensors "
                            f"and Python numbers (bool, int, float)")
        if a.device.type != "cpu":
            raise ValueError(f"input {i} is on {a.device}; Cuvil compiles for the host CPU: "
                             f"pass it with .cpu()")
        if str(a.dtype).removeprefix("torch.") not in INPUT_DTYPES:
            raise TypeError(f"input {i} has dtype {a.dtype}, which Cuvil does not support; "
                            f"supported: {', '.join(sorted(INPUT_DTYPES))} "
                            f"(e.g. convert with .float())")
    _check_shared_dims(args, dynamic)
    # A Python number is a constant of the build (torch.export specializes
    # it): its value is part of the key, as (("number", value), type).
    key = tuple((("number", a), type(a).__name__) if isinstance(a, NUMBER_TYPES) else
                (tuple(None if d in dynamic.get(i, ()) else s for d, s in enumerate(a.shape)), str(a.dtype))
                for i, a in enumerate(args))
    if dynamic and compiled and key not in compiled:
        # A dynamic build serves its dynamic dims only: say which dim differs.
        (built,) = list(compiled)[:1]
        for i, ((shape, dtype), (want_shape, want_dtype)) in enumerate(zip(key, built)):
            if shape[:1] == ("number",) and (shape, dtype) != (want_shape, want_dtype):
                raise ValueError(f"input {i} is {shape[1]!r}, the build was compiled for {want_shape[1]!r}: "
                                 f"a number input is a constant of a dynamic build")
            if dtype != want_dtype:
                raise TypeError(f"input {i} has dtype {dtype}, compiled for {want_dtype}")
            if len(shape) != len(want_shape):
                raise ValueError(f"input {i} has rank {len(shape)}, compiled for {len(want_shape)}")
            for d, (got, want) in enumerate(zip(shape, want_shape)):
                if got != want:
                    raise ValueError(f"input {i} dim {d} is {got} but the model was compiled for {want}; "
                                     f"dynamic dims are {dynamic or 'none'}")
    return key


NUMBER_TYPES = (bool, int, float)


_HF_CACHES_REGISTERED = False


def register_hf_cache_pytrees() -> None:
    """Hugging Face's cache objects (DynamicCache: what a causal LM returns by
    default, and takes back for the next step) as pytrees of their tensors, so
    that torch.export flattens them in the inputs and outputs and the call
    rebuilds them. transformers' own registration; only when the model's
    process has transformers loaded (Cuvil does not import it otherwise), and
    once: it runs on every decode step's call, and transformers' own repeat
    raises and catches "already registered" each time."""
    global _HF_CACHES_REGISTERED
    import sys
    if _HF_CACHES_REGISTERED or "transformers" not in sys.modules:
        return
    _HF_CACHES_REGISTERED = True
    try:
        from transformers.integrations.executorch import register_dynamic_cache_export_support
    except ImportError:   # a transformers without it: its caches stay unknown to export
        return
    register_dynamic_cache_export_support()


def is_flat_input(a) -> bool:
    """A tensor or a Python number: what a call passes to the library as is
    (anything else, and keyword inputs, are flattened first: pytree)."""
    import torch
    return isinstance(a, (torch.Tensor, *NUMBER_TYPES))


def tensor_inputs(args) -> list:
    """The tensors among a call's inputs, in order: numbers are constants of
    the build and do not reach the library."""
    return [a for a in args if not isinstance(a, NUMBER_TYPES)]


def _check_shared_dims(args, dynamic) -> None:
    """Dynamic dims with one name are one size (the library assumes it)."""
    sizes: Dict[str, tuple] = {}
    for i, dims in dynamic.items():
        if i >= len(args):
            continue
        for d, name in dims.items():
            if d >= args[i].dim():
                continue   # reported by export_inputs when compiling
            size = args[i].shape[d]
            if size < 1:
                raise ValueError(f"input {i} dim {d} ({name!r}) is {size}; dynamic dims must be >= 1")
            first = sizes.setdefault(name, (i, d, size))
            if first[2] != size:
                raise ValueError(f"dynamic dim {name!r} is {first[2]} in input {first[0]} dim {first[1]} "
                                 f"but {size} in input {i} dim {d}: dims sharing a name must be equal")


def export_inputs(args, dynamic):
    """Example inputs and torch.export dynamic_shapes. A dynamic dim whose
    example size is 0 or 1 would be specialised by torch.export, so the
    export sees size 2 there."""
    if not dynamic:
        return args, None
    import torch
    shapes, examples, symbols = [], [], {}
    for i, a in enumerate(args):
        if isinstance(a, NUMBER_TYPES):
            shapes.append(None)
            examples.append(a)
            continue
        dims = dynamic.get(i, {})
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
