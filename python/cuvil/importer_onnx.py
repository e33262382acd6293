"""Stage 1, import, for ONNX: an .onnx file (or onnx.ModelProto) -> linalg-on-tensors MLIR *text*.

torch-mlir's ONNX importer turns the graph into torch-dialect `onnx.*`
operators; `torch-onnx-to-torch-backend-pipeline` makes them the same aten
ops the PyTorch front end produces, and the same linalg lowering follows
(in torch-mlir's MLIR: only text crosses into Cuvil's context).

Weights are function arguments, as for PyTorch models: an initializer
larger than ONNX's own external-data threshold (1 KiB) becomes an argument
of @main, named after it, and is bound at run time from the model's memory
(or memory-mapped from its external-data file: models over 2 GB never load
into a protobuf). Smaller initializers, and any initializer an op needs as a
compile-time value (a Reshape's shape, a Slice's bounds, quantization
scales), stay constants of the IR.

Symbolic dims (`dim_param`) stay dynamic when every output's size follows
from the inputs' (ONNX shape inference names them): one build serves every
size. Otherwise each input shape is compiled for itself.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import isolation
from .errors import CompileError, CuvilError, UnsupportedOpError
from .pipeline import ONNX_TO_TORCH_BACKEND, TO_LINALG, module_pipeline

log = logging.getLogger("cuvil")

#: Initializers up to this size stay constants of the IR (ONNX writes
#: tensors above it to external data: the line between weights and constants).
INLINE_MAX_BYTES = 1024

#: Operands torch-mlir's ONNX conversion needs as compile-time values (it
#: reads them from the constant): never made function arguments.
IMMEDIATE_OPERANDS = {
    "Reshape": {1}, "Expand": {1}, "Slice": {1, 2, 3, 4}, "Pad": {1, 2, 3}, "Resize": {1, 2, 3},
    "Upsample": {1}, "Unsqueeze": {1}, "Squeeze": {1}, "Tile": {1}, "ConstantOfShape": {0},
    "TopK": {1}, "Split": {1}, "Range": {0, 1, 2}, "OneHot": {1}, "CumSum": {1}, "Clip": {1, 2},
    "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}, "ReduceMin": {1}, "ReduceProd": {1},
    "ReduceL1": {1}, "ReduceL2": {1}, "ReduceLogSum": {1}, "ReduceLogSumExp": {1},
    "ReduceSumSquare": {1}, "QuantizeLinear": {1, 2}, "DequantizeLinear": {1, 2},
    "DynamicQuantizeLinear": set(), "MatMulInteger": {2, 3}, "ConvInteger": {2, 3},
    "QLinearMatMul": {1, 2, 4, 5, 6, 7}, "QLinearConv": {1, 2, 4, 5, 6, 7},
    "QLinearAdd": {1, 2, 4, 5, 6, 7}, "NonMaxSuppression": {2, 3, 4}, "Trilu": {1},
    "Compress": {1},
}

#: Of those, the operands torch-mlir also takes as run-time tensors.
RUNTIME_OK_OPERANDS = {"Clip": {1, 2}}

# ONNX element type -> torch dtype name (the dtypes Cuvil takes at its boundary).
_TORCH_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
                 10: "float16", 11: "float64", 16: "bfloat16"}


def _numpy_dtype(elem_type: int):
    from onnx import helper
    if elem_type == 16:   # numpy has no bfloat16: its bits
        return np.dtype(np.uint16)
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def _dims(value_info) -> Optional[List[Any]]:
    """int sizes, dim_param names, None for an unknown size; None for an
    unknown rank (no shape at all)."""
    if not value_info.type.tensor_type.HasField("shape"):
        return None
    dims: List[Any] = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


@dataclasses.dataclass(frozen=True)
class ValueSpec:
    """A graph input or output: its name, torch dtype and dims."""
    name: str
    dtype: str
    dims: Optional[Tuple[Any, ...]]    # None: rank unknown


class OnnxModel:
    """An ONNX model as Cuvil compiles it: the graph with its large
    initializers taken out (they are @main's weight arguments), those
    initializers' data (in memory, or where they lie in external-data files),
    and a digest of everything that decides the code."""

    def __init__(self, source, name: Optional[str] = None):
        import onnx
        self.path: Optional[Path] = None
        self._proto_given: Optional[Any] = None
        if isinstance(source, onnx.ModelProto):
            proto, base_dir = copy.deepcopy(source), Path.cwd()
            default_name = source.graph.name or "onnx_model"
            self._proto_given = source
        else:
            path = Path(os.fspath(source))
            self.path = path
            if not path.is_file():
                raise FileNotFoundError(f"cuvil: no ONNX model at {path}")
            try:
                # External data stays on disk: it is memory-mapped when bound.
                proto = onnx.load(str(path), load_external_data=False)
            except Exception as err:   # a protobuf DecodeError for a file that is not ONNX
                raise CompileError("import", f"{path} is not an ONNX model: {type(err).__name__}: {err}") from None
            base_dir = path.resolve().parent
            default_name = path.stem
        self.name = _identifier(name or default_name)
        self.base_dir = base_dir
        if not proto.graph.output:
            raise CompileError("import", f"{self.path or 'the ModelProto'} is not an ONNX model: its graph has "
                                         f"no outputs (an empty or truncated file?)")
        if proto.functions:   # model-local functions: torch-mlir converts only ONNX's own ops
            from onnx import inliner
            proto = inliner.inline_local_functions(proto)
        graph = proto.graph
        _name_nodes(graph)
        self.opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
        initialized = {t.name for t in graph.initializer}
        self.inputs = [ValueSpec(v.name, _torch_dtype(v), _tuple(_dims(v)))
                       for v in graph.input if v.name not in initialized]
        self.outputs = [ValueSpec(v.name, _torch_dtype(v), _tuple(_dims(v))) for v in graph.output]
        # Inputs with an initializer (old exporters' defaults): constants.
        for v in [v for v in graph.input if v.name in initialized]:
            graph.input.remove(v)
        self.weights = _take_weights(graph)   # {name: TensorProto holding where its data is}
        _load_constants(proto, base_dir)
        self.proto = proto
        self.digest = hashlib.sha256(proto.SerializeToString(deterministic=True)).hexdigest()
        self._tensors: Optional[Dict[str, Any]] = None

    def original(self):
        """The model as given: its file's path, or the ModelProto's bytes
        (what onnxruntime.InferenceSession takes)."""
        return str(self.path) if self.path is not None else self._proto_given.SerializeToString()

    # -- what a compile asks -------------------------------------------------
    def weight_tensors(self) -> Dict[str, Any]:
        """The weights as torch tensors, by initializer name (made once: the
        same tensors on every call, so bound weights are not packed twice)."""
        if self._tensors is None:
            files: Dict[Path, np.memmap] = {}   # one map per external-data file (not one per tensor)
            self._tensors = {name: _tensor(t, self.base_dir, files) for name, t in self.weights.items()}
            for t in self.weights.values():   # the tensors own the data now
                t.ClearField("raw_data")
        return self._tensors

    def value_inputs(self) -> Dict[int, str]:
        """{input index: what reads it} for the graph inputs whose values
        torch-mlir needs at compile time (IMMEDIATE_OPERANDS: a Slice's
        bounds, a reduction's axes, a Reshape's shape, CumSum's axis), read
        directly or through the ops computing such an operand (a Pad's pads
        computed from a `shape` input: integer inputs of a few elements
        only). Each call's values of these are constants of its build
        (CompiledOnnxModule: one build per distinct value, as torch.compile
        specializes on an int)."""
        index = {v.name: i for i, v in enumerate(self.inputs)}
        producer = {o: node for node in self.proto.graph.node for o in node.output}
        found: Dict[int, str] = {}
        for node in _all_nodes(self.proto.graph):
            positions = IMMEDIATE_OPERANDS.get(node.op_type, set()) - RUNTIME_OK_OPERANDS.get(node.op_type, set())
            reader = f"{node.op_type} '{node.name}' operand"
            for pos, name in enumerate(node.input):
                if pos not in positions:
                    continue
                if name in index:
                    found.setdefault(index[name], f"{reader} {pos}")
                    continue
                for source in _computed_from(name, producer):
                    spec = self.inputs[index[source]] if source in index else None
                    if spec is not None and spec.dtype in ("int64", "int32") and spec.dims is not None \
                            and all(isinstance(d, int) for d in spec.dims) and int(np.prod(spec.dims)) <= 64:
                        found.setdefault(index[source], f"{reader} {pos} (computed from it)")
        return found

    def with_values(self, values: Dict[str, Any]) -> "OnnxModel":
        """This model with these inputs made constants of the graph (numpy
        arrays by input name): no longer inputs; the weights are shared."""
        from onnx import numpy_helper
        self.weight_tensors()   # made before the copy: both hold the same tensors (loading clears the protos)
        model = copy.copy(self)
        proto = copy.deepcopy(self.proto)
        kept = [v for v in proto.graph.input if v.name not in values]
        del proto.graph.input[:]
        proto.graph.input.extend(kept)
        proto.graph.initializer.extend(numpy_helper.from_array(np.asarray(a), name) for name, a in values.items())
        model.proto = proto
        model.inputs = [v for v in self.inputs if v.name not in values]
        model.digest = hashlib.sha256(proto.SerializeToString(deterministic=True)).hexdigest()
        return model

    def dynamic_dims(self) -> Dict[int, Dict[int, str]]:
        """{input: {dim: name}} for the symbolic dims one build can serve:
        every output size must follow from the inputs' (else {})."""
        if any(v.dims is None or None in v.dims for v in self.inputs):
            log.info("cuvil: %s has inputs of unknown rank or size: compiling each input shape", self.name)
            return {}
        dynamic = {i: {d: str(s) for d, s in enumerate(v.dims or ()) if not isinstance(s, int)}
                   for i, v in enumerate(self.inputs)}
        dynamic = {i: dims for i, dims in dynamic.items() if dims}
        if not dynamic:
            return {}
        names = {s for dims in dynamic.values() for s in dims.values()}
        for out in _inferred_outputs(self.proto):
            for d in (out.dims if out.dims is not None else [None]):
                if not isinstance(d, int) and _expression(d, names) is None:
                    log.info("cuvil: %s: the size %r of output %r does not follow from the input "
                             "sizes: compiling each input shape", self.name, d, out.name)
                    return {}
        return dynamic


def _tuple(dims) -> Optional[tuple]:
    return None if dims is None else tuple(dims)


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name) or "onnx_model"


def _torch_dtype(value_info) -> str:
    elem = value_info.type.tensor_type.elem_type
    if elem not in _TORCH_DTYPES:
        from onnx import helper
        what = helper.tensor_dtype_to_string(elem) if elem else "a non-tensor type"
        raise UnsupportedOpError(f"an ONNX graph value of type {what}", f"value {value_info.name!r}", "import",
                                 f"Cuvil takes tensors of {', '.join(sorted(set(_TORCH_DTYPES.values())))}")
    return _TORCH_DTYPES[elem]


def _name_nodes(graph) -> None:
    """Every node gets a name (locations and errors name nodes by it)."""
    seen = set()
    for i, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{i}"
        while name in seen:
            name = f"{name}_{i}"
        seen.add(name)
        node.name = name


def _take_weights(graph) -> Dict[str, Any]:
    """Removes the initializers that become weight arguments from `graph`
    (and makes them graph inputs); returns them by name."""
    from onnx import helper
    pinned: set = set()
    nodes = list(_all_nodes(graph))   # If / Loop / Scan bodies read outer initializers too
    for node in nodes:
        positions = IMMEDIATE_OPERANDS.get(node.op_type, set())
        pinned.update(name for i, name in enumerate(node.input) if i in positions)
    used = {name for node in nodes for name in node.input}
    taken: Dict[str, Any] = {}
    kept = []
    for init in graph.initializer:
        if init.name not in pinned and init.name in used and _nbytes(init) > INLINE_MAX_BYTES \
                and init.data_type in _TORCH_DTYPES:
            taken[init.name] = init
        else:
            kept.append(init)
    if taken:
        del graph.initializer[:]
        graph.initializer.extend(kept)
        for name, init in taken.items():
            graph.input.append(helper.make_tensor_value_info(name, init.data_type, list(init.dims)))
    return taken


def _computed_from(name: str, producer: Dict[str, Any]) -> set:
    """The values `name` is computed from, through the main graph's nodes
    (not through Shape / Size: they read a shape, not values)."""
    seen, todo = set(), [name]
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        node = producer.get(value)
        if node is not None and node.op_type not in ("Shape", "Size"):
            todo.extend(n for n in node.input if n)
    return seen


def _all_nodes(graph):
    """The graph's nodes and those of its subgraphs (If / Loop / Scan bodies)."""
    from onnx import AttributeProto
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _all_nodes(g)


def _load_constants(proto, base_dir: Path) -> None:
    """Reads the data of the tensors that stay constants: initializers (also
    of subgraphs) and Constant nodes a model keeps in external data (ONNX
    writes every tensor over 1 KiB there when asked to)."""
    from onnx import external_data_helper
    for tensor in external_data_helper._get_all_tensors(proto):
        if tensor.data_location == 1:
            try:
                external_data_helper.load_external_data_for_tensor(tensor, str(base_dir))
            except Exception as err:   # OSError, onnx's ValidationError (a path outside the model's folder)
                raise CompileError("import", f"cannot read the data of constant {tensor.name!r} "
                                             f"(external data, looked up in {base_dir}): {err}") from None
            tensor.data_location = 0  # type: ignore[assignment]  # DEFAULT (an int enum)
            del tensor.external_data[:]


def _nbytes(init) -> int:
    return int(np.prod(init.dims, dtype=np.int64)) * _numpy_dtype(init.data_type).itemsize \
        if init.data_type in _TORCH_DTYPES else 0


def _tensor(init, base_dir: Path, files: Dict[Path, np.memmap]):
    """A torch tensor over an initializer's data: external data is
    memory-mapped (copy-on-write, one map per file), inline data copied out of the proto."""
    import torch
    from onnx import numpy_helper
    dtype, shape = _numpy_dtype(init.data_type), tuple(init.dims)
    array: np.ndarray
    if init.data_location == 1:   # EXTERNAL
        info = {e.key: e.value for e in init.external_data}
        location = Path(info.get("location", ""))
        if not info.get("location") or location.is_absolute() or ".." in location.parts:
            raise CompileError("import", f"weight {init.name!r} has external data at {str(location)!r}: ONNX "
                                         f"requires a path relative to the model's folder, inside it")
        path = base_dir / location
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        offset, length = int(info.get("offset", 0)), int(info.get("length", nbytes))
        try:
            if path not in files:
                files[path] = np.memmap(path, dtype=np.uint8, mode="c")
            data = files[path]
        except (OSError, ValueError) as err:
            raise CompileError("import", f"cannot map the data of weight {init.name!r} from {path}: {err} "
                                         f"(external data is looked up beside the model file)") from None
        if length != nbytes or offset + nbytes > data.size:
            raise CompileError("import", f"the external data of weight {init.name!r} ({path}, offset {offset}, "
                                         f"length {length}) does not hold its {nbytes} bytes (a truncated or "
                                         f"foreign file?)")
        array = data[offset:offset + nbytes]
        if (array.ctypes.data % dtype.itemsize) != 0:   # an offset the dtype cannot be read at
            array = array.copy()
        array = array.view(dtype).reshape(shape)
    elif init.raw_data:
        array = np.frombuffer(init.raw_data, dtype=dtype).reshape(shape).copy()
    else:
        array = np.array(numpy_helper.to_array(init))
        if init.data_type == 16:
            array = array.view(np.uint16)
    tensor = torch.from_numpy(array)
    if init.data_type == 16:
        tensor = tensor.view(torch.bfloat16)
    return tensor


def _inferred_outputs(proto) -> List[ValueSpec]:
    """The graph's outputs with ONNX's inferred shapes."""
    import onnx
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except Exception as err:   # onnx's InferenceError for an inconsistent graph
        raise CompileError("import", f"ONNX shape inference failed: {err}") from None
    return [ValueSpec(v.name, "", _tuple(_dims(v))) for v in inferred.graph.output]


def _in_symbols(expr: str, symbols: Dict[str, str]) -> str:
    """A dim expression over the inputs' dim_params, over their safe symbols."""
    if expr in symbols:
        return symbols[expr]
    import sympy
    return str(sympy.sympify(expr, locals={n: sympy.Symbol(v) for n, v in symbols.items()}))


def _expression(dim, names) -> Optional[str]:
    """`dim` (a dim_param) as a sympy expression of the input dims' names, or
    None when it is something else (a fresh name shape inference made up)."""
    if dim is None:
        return None
    if dim in names:
        return dim
    tokens = set(re.findall(r"[A-Za-z_]\w*", dim))
    if not tokens or not tokens <= names:
        return None
    try:
        import sympy
        sympy.sympify(dim, locals={n: sympy.Symbol(n) for n in tokens})   # N, E, S: symbols, not sympy's
    except Exception:
        return None
    return dim


# --------------------------------------------------------------------------
# Import
# --------------------------------------------------------------------------
#: Default of the pass pipelines: torch-onnx -> torch backend, then to linalg.
ONNX_PIPELINE = module_pipeline(ONNX_TO_TORCH_BACKEND)
LINALG_PIPELINE = module_pipeline(TO_LINALG)


#: ONNX ops defined by an ONNX function that torch-mlir has no conversion
#: for (Attention, FlexAttention, CausalConvWithState, Swish), or one that
#: fails on some forms (NegativeLogLikelihoodLoss with weights or reductions
#: it cannot lower) or computes wrong (SpaceToDepth's CRD mode): the importer
#: expands them into their function bodies, ops it converts. (The ONNX
#: conformance run finds them: the op's case fails, its `_expanded` twin
#: passes. torch-mlir's own list is kept: MeanVarianceNormalization.)
EXPANDED_FUNCTIONS = {"Attention", "FlexAttention", "CausalConvWithState", "Swish",
                      "NegativeLogLikelihoodLoss", "SpaceToDepth"}


def _importer_config(onnx_importer):
    config = onnx_importer.Config()
    allow = config.function_expansion_allowlists_by_domain
    config.function_expansion_allowlists_by_domain = {**allow, "": set(allow.get("", ())) | EXPANDED_FUNCTIONS}
    return config


def specialized(model: OnnxModel, shapes: List[tuple]):
    """A copy of the model's graph whose inputs have these static shapes."""
    proto = copy.deepcopy(model.proto)
    by_name = {v.name: v for v in proto.graph.input}
    for spec, shape in zip(model.inputs, shapes):
        tensor_type = by_name[spec.name].type.tensor_type
        tensor_type.shape.ClearField("dim")
        for size in shape:
            tensor_type.shape.dim.add().dim_value = int(size)
    return proto


def import_model(model: OnnxModel, shapes: Optional[List[tuple]] = None):
    """The model as linalg text with its weights as arguments. `shapes`:
    compile for these input shapes (None: the model's own dims, symbolic
    ones dynamic)."""
    import onnx
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras import onnx_importer

    from . import importer
    t0 = time.perf_counter()
    proto = specialized(model, shapes) if shapes is not None else copy.deepcopy(model.proto)
    proto.graph.name = "main"
    from . import importer_onnx_folding, importer_onnx_qdq, importer_onnx_rewrites
    try:
        proto = onnx.shape_inference.infer_shapes(proto, data_prop=True)
        expanded = importer_onnx_rewrites.expand_schema_functions(proto)
        if expanded is not proto:
            _name_nodes(expanded.graph)   # the bodies' nodes come unnamed: errors name nodes
            proto = onnx.shape_inference.infer_shapes(expanded, data_prop=True)
        # Shapes and axes computed from static shapes and constants (which
        # torch-mlir needs as constants); then ops torch-mlir lacks, in ops it has.
        changed = importer_onnx_folding.fold_constants(proto)
        changed = importer_onnx_qdq.int8_matmuls(proto) > 0 or changed   # QDQ matmuls on the int8 kernels
        if importer_onnx_rewrites.rewrite(proto) or changed:
            proto = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except Exception as err:   # onnx's InferenceError for an inconsistent graph
        raise CompileError("import", f"ONNX shape inference failed on {model.name}: {err}") from None
    nodes = {n.name: n for n in proto.graph.node}
    _refuse_what_torch_mlir_computes_wrong(proto, model)
    timings = {"shape_inference": time.perf_counter() - t0}

    ctx = ir.Context()
    torch_d.register_dialect(ctx)
    t1 = time.perf_counter()
    try:
        info = onnx_importer.ModelInfo(proto, config=_importer_config(onnx_importer))
        module = info.create_module(context=ctx).operation
        node_importer = onnx_importer.NodeImporter.define_function(info.main_graph, module)
        node_importer.import_all()
    except onnx_importer.OnnxImportError as err:
        raise CompileError("import", f"torch-mlir's ONNX importer cannot take {model.name}: {err}") from None
    except Exception as err:   # its own bugs (e.g. a TypeError expanding a function): named, not a traceback
        raise CompileError("import", f"torch-mlir's ONNX importer failed on {model.name}: "
                                     f"{type(err).__name__}: {err}") from None
    weight_names = list(model.weights)
    n_inputs = len(model.inputs)
    func = next(op.operation for op in module.regions[0].blocks[0].operations
                if op.operation.name == "func.func")
    with ctx:
        func.attributes["arg_attrs"] = ir.ArrayAttr.get([
            ir.DictAttr.get({"cuvil.arg": ir.StringAttr.get(name),
                             "cuvil.kind": ir.StringAttr.get("user_input" if i < n_inputs else "parameter")})
            for i, name in enumerate([v.name for v in model.inputs] + weight_names)])
    timings["import_torch"] = time.perf_counter() - t1

    explain = _OnnxErrors(model, nodes)
    names = {str(d) for v in model.inputs for d in (v.dims or ()) if not isinstance(d, int)} if shapes is None else set()
    symbols = {name: f"d{i}" for i, name in enumerate(sorted(names))}

    def lower():
        """Both torch-mlir pipelines and what is read from their result."""
        ctx.enable_multithreading(False)   # a fork has none of the parent's pool threads
        t1 = time.perf_counter()
        importer._run_pipeline(module, ONNX_PIPELINE, "onnx-to-torch", explain=explain)
        t2 = time.perf_counter()
        importer._run_pipeline(module, LINALG_PIPELINE, "linalg-on-tensors", explain=explain)
        t3 = time.perf_counter()
        foreign = importer.non_upstream_ops(module)
        bad = [b for b in foreign if b[0] not in importer.LOWERED_TM_TENSOR_OPS]
        if bad:
            name, loc = bad[0]
            raise explain.unsupported(name, loc, "upstream-dialect-check",
                                      f"non-upstream ops in linalg output: {sorted({b[0] for b in bad})}")
        return (importer.crossing_text(module, foreign=foreign), _output_dims(module, proto, symbols), dict(importer._LAST_TORCH_IR),
                {"torch_backend": t2 - t1, "to_linalg": t3 - t2})

    # torch-mlir's passes can crash on graphs they do not expect (a SIGFPE,
    # a segfault): they run in a forked child, and a crash is an error here.
    onnx_ir = module.get_asm(enable_debug_info=True)
    importer._LAST_TORCH_IR.update(text=onnx_ir, pipeline=ONNX_PIPELINE)
    try:
        text, output_dims, last_torch_ir, pipeline_timings = isolation.run(lower)
    except CuvilError:
        raise
    except Exception as err:   # a crash, or a failure outside the diagnostics (named, with a reproducer)
        from .diagnostics import save_reproducer
        from .tools import torch_mlir_opt
        path = save_reproducer(onnx_ir, "torch")
        both = module_pipeline(ONNX_TO_TORCH_BACKEND + TO_LINALG)
        if isinstance(err, isolation.Crashed) and err.killed:
            why = "the process lowering it was killed (SIGKILL: most often out of memory)"
        elif isinstance(err, isolation.Crashed):
            why = f"torch-mlir crashed ({err.signal_name}): a torch-mlir bug on this graph; Cuvil cannot compile it"
        else:
            why = f"{type(err).__name__}: {err}"
        raise CompileError("onnx-to-torch", f"lowering {model.name} to linalg failed: {why}",
                           reproducer=f"{torch_mlir_opt()} {path} --pass-pipeline='{both}'") from None
    importer._LAST_TORCH_IR.update(last_torch_ir)
    timings.update(pipeline_timings)
    timings["total"] = time.perf_counter() - t0

    weights = model.weight_tensors()
    # Each input's sizes: the shapes compiled for, or the model's dims (all
    # known: an input of unknown rank or size is compiled per shape), the
    # symbolic ones under safe names (sympy reads "N" or "E" as its own).
    given: List[Any] = list(shapes) if shapes else [v.dims for v in model.inputs]
    input_dims = [[d if isinstance(d, int) else symbols[str(d)] for d in dims] for dims in given]
    args = [dict(name=v.name, kind="user_input", shape=dims, dtype=v.dtype) for v, dims in zip(model.inputs, input_dims)]
    args += [dict(name=n, kind="parameter", shape=list(weights[n].shape), dtype=str(weights[n].dtype),
                  bytes=weights[n].numel() * weights[n].element_size()) for n in weight_names]
    manifest = dict(func="main", args=args, outputs=[dict(kind="user_output", name=v.name, target=None)
                                                     for v in model.outputs],
                    out_spec=None, inlined_constants=[],
                    input_dims=input_dims,
                    output_dims=output_dims,
                    output_slots=[["tensor"] for _ in model.outputs],
                    output_dtypes=[v.dtype for v in model.outputs])
    from torch.utils import _pytree as pytree
    out_spec = pytree.tree_structure(tuple(range(len(model.outputs))))
    return importer.ImportResult(text=text, manifest=manifest, timings=timings,
                                 _arg_tensors=[None] * n_inputs + [weights[n] for n in weight_names],
                                 out_spec=out_spec)


def _refuse_what_torch_mlir_computes_wrong(proto, model: OnnxModel) -> None:
    """Node forms torch-mlir's ONNX conversion gets wrong silently (found by
    the conformance run), or lowers to what Cuvil cannot run (random
    numbers): refused by name rather than computed wrong."""
    from onnx import numpy_helper
    types = {v.name: v.type.tensor_type for v in [*proto.graph.value_info, *proto.graph.input, *proto.graph.output]}
    types.update({t.name: None for t in proto.graph.initializer})
    consts = {t.name: t for t in proto.graph.initializer}

    def size(name):
        if name in consts:
            return int(np.prod(consts[name].dims, dtype=np.int64))
        t = types.get(name)
        if t is None or not t.HasField("shape") or not all(d.HasField("dim_value") for d in t.shape.dim):
            return None
        return int(np.prod([d.dim_value for d in t.shape.dim], dtype=np.int64))

    def elem(name):
        if name in consts:
            return consts[name].data_type
        t = types.get(name)
        return t.elem_type if t is not None else 0

    for node in proto.graph.node:
        why = ""
        if node.op_type == "DequantizeLinear" and len(node.input) > 2 and node.input[2] \
                and elem(node.input[2]) == 2 and (size(node.input[2]) or 2) > 1:
            why = ("torch-mlir reads a per-axis uint8 zero point as signed int8 (wrong results); "
                   "quantize per axis to int8 (onnxruntime: QuantType.QInt8 weights) or per tensor")
        elif node.op_type == "Dropout" and len(node.input) > 2 and node.input[2] and (
                node.input[2] not in consts or bool(np.asarray(numpy_helper.to_array(consts[node.input[2]])).any())):
            why = ("dropout in training mode draws random numbers: Cuvil has no generator state; export "
                   "the model in eval mode (model.eval() before torch.onnx.export)")
        elif node.op_type == "Resize" and _align_corners_inexact_scales(node, consts, types):
            why = ("torch-mlir's conversion of Resize with coordinate_transformation_mode='align_corners' "
                   "and scales whose output size is not input size x scale exactly computes wrong results; "
                   "give the output sizes (Resize's 'sizes' input) instead")
        elif node.op_type == "GridSample" and any(a.name == "mode" and a.s == b"nearest" for a in node.attribute):
            why = ("torch-mlir's conversion of GridSample mode='nearest' rounds sample points differently "
                   "from ONNX (wrong results); use mode='linear'")
        elif node.op_type in ("AveragePool", "LpPool", "MaxPool") and _dilated_same_pooling(node):
            why = ("pooling with dilations and auto_pad SAME_*: ONNX's reference and onnxruntime disagree on "
                   "its output size, and torch-mlir computes a third result; give explicit pads instead")
        elif node.op_type == "Pad" and any(a.name == "mode" and a.s == b"wrap" for a in node.attribute):
            why = ("torch-mlir's conversion of Pad mode='wrap' does not terminate; pad with Slice + Concat "
                   "(or torch.nn.functional.pad(mode='circular') before export)")
        if why:
            raise UnsupportedOpError(f"ONNX {node.op_type} (node {node.name!r}, opset {model.opset})",
                                     f"node {node.name!r} of {model.name}", "import", why)


def _dilated_same_pooling(node) -> bool:
    from onnx import helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return attrs.get("auto_pad", b"NOTSET") in (b"SAME_UPPER", b"SAME_LOWER") and \
        any(d != 1 for d in attrs.get("dilations", []))


def _align_corners_inexact_scales(node, consts, types) -> bool:
    """A Resize in align_corners mode by constant scales some size of which
    is rounded down (torch-mlir maps the corners with the scale, not with
    the rounded size: found by the conformance run)."""
    from onnx import numpy_helper
    if not any(a.name == "coordinate_transformation_mode" and a.s == b"align_corners" for a in node.attribute):
        return False
    if len(node.input) < 3 or node.input[2] not in consts:
        return False
    scales = numpy_helper.to_array(consts[node.input[2]]).astype(np.float64)
    t = types.get(node.input[0])
    if t is None or not t.HasField("shape") or not all(d.HasField("dim_value") for d in t.shape.dim) \
            or len(t.shape.dim) != len(scales):
        return scales.size > 0   # not knowable here: refused rather than risked
    dims = np.array([d.dim_value for d in t.shape.dim], dtype=np.float64)
    return bool(np.any(np.floor(dims * scales) != dims * scales))


def _output_dims(module, proto, symbols: Dict[str, str]) -> List[List[Any]]:
    """Each output's sizes: the lowered function's static ones, and for its
    dynamic ones the expression of the input dims that ONNX shape inference
    gives, written in their `symbols` (the caller allocates outputs before
    the call)."""
    names = set(symbols)
    from torch_mlir import ir
    func = next(op.operation for op in module.regions[0].blocks[0].operations
                if op.operation.name == "func.func")
    results = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results
    dims = []
    for value, type_ in zip(proto.graph.output, results):
        t = ir.RankedTensorType(type_)
        inferred = _dims(value)
        sizes: List[Any] = []
        for d in range(t.rank):
            if not t.is_dynamic_dim(d):
                sizes.append(t.get_dim_size(d))
                continue
            guess = inferred[d] if inferred is not None and d < len(inferred) else None
            if isinstance(guess, int):   # ONNX knows it (e.g. a Split's sizes from a constant)
                sizes.append(guess)
                continue
            expr = _expression(guess, names) if isinstance(guess, str) else None
            if expr is not None:
                expr = _in_symbols(expr, symbols)
            if expr is None:
                raise CompileError("import", f"the size of dim {d} of output {value.name!r} depends on the "
                                             f"values of the inputs, not only their sizes (ONNX infers "
                                             f"{guess if guess is not None else 'nothing'} there): Cuvil "
                                             f"allocates outputs before the call and cannot compile this model")
            sizes.append(expr)
        dims.append(sizes)
    return dims


class _OnnxErrors:
    """Turns a failed torch-mlir pass into an error naming the ONNX node:
    its op type, name and opset, and a command replaying the failing step."""

    def __init__(self, model: OnnxModel, nodes: Dict[str, Any]):
        self.model, self.nodes = model, nodes

    def node_of(self, loc: str):
        for name in re.findall(r'"([^"]*)"', loc):
            if name in self.nodes:
                return self.nodes[name]
        return None

    def unsupported(self, op: str, loc: str, stage: str, detail: str) -> UnsupportedOpError:
        from . import importer
        node = self.node_of(loc)
        where = f"{self.model.name} (opset {self.model.opset})"
        if node is not None:
            domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
            what = f"ONNX {domain}{node.op_type} (node {node.name!r}, opset {self.model.opset}" \
                   + (f", lowered to {op}" if not op.startswith("onnx.") else "") + ")"
            where = f"node {node.name!r} of {self.model.name}"
        else:
            what = op
        return UnsupportedOpError(what, where, stage, detail, reproducer=importer._reproducer())

    def __call__(self, records, stage, err):
        from . import importer
        for sev, loc, msg, notes in [r for r in records if "Error" in r[0]] or records:
            m = importer._LEGALIZE_RE.search(msg)
            if not m:
                continue
            op = m.group(1)
            if op == "torch.operator":
                m2 = importer._OPERATOR_NAME_RE.search(msg)
                op = m2.group(1) if m2 else op
            op = op[len("torch."):] if op.startswith("torch.") else op
            raise self.unsupported(op, loc, stage, f"{loc}: {msg.splitlines()[0]}")
        for sev, loc, msg, notes in records:
            node = self.node_of(loc)
            if node is not None:
                raise self.unsupported(f"onnx.{node.op_type}", loc, stage, f"{loc}: {msg.splitlines()[0]}")
        detail = "\n".join(f"{loc}: {msg}" for _, loc, msg, _ in records[:10])
        raise CompileError(stage, f"{err}\n{detail}", reproducer=importer._reproducer())
