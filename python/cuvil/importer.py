"""Stage 1, import: a torch.nn.Module -> linalg-on-tensors MLIR *text*.

torch.export captures the graph; torch-mlir's FX importer and its backend
pipelines lower it to linalg in torch-mlir's own MLIR (a newer LLVM than
Cuvil's). Only text crosses over to Cuvil's context. Weights are not inlined:
parameters and buffers become function arguments (`cuvil.arg` / `cuvil.kind`
argument attributes name them), so the IR stays small and weights are
runtime buffers. Ops torch-mlir cannot lower raise UnsupportedOpError naming
the aten op and the model source line.
"""
from __future__ import annotations

import collections
import dataclasses
import operator
import os
import re
import time
import traceback
import warnings
from typing import Any, Dict, List, Optional, Sequence

import torch
import torch.nn as nn
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras.fx_decomp_util import get_decomposition_table
from torch_mlir.extras.fx_importer import ContextCache, FxImporter
from torch_mlir.passmanager import PassManager

from . import importer_complex, importer_linalg, importer_random
from .errors import CompileError, UnsupportedOpError
from .fingerprint import INLINE_MAX_BYTES
from .pipeline import TO_LINALG, TORCH_BACKEND, module_pipeline



def _with_stack(detail: str, stack: str) -> str:
    return detail + (f"\n  model stack (innermost last):\n{stack}" if stack else "")


def _reproducer(graph=None) -> str:
    """Saves the torch-dialect IR of the failing module; returns a command
    replaying the failing lowering with torch-mlir's own opt tool."""
    module = _LAST_TORCH_IR.get("text")
    if not module:
        return ""
    from .diagnostics import save_reproducer
    path = save_reproducer(module, "torch")
    from .tools import torch_mlir_opt
    tool = torch_mlir_opt()
    return f"{tool} {path} --pass-pipeline='{_LAST_TORCH_IR['pipeline']}'"


_LAST_TORCH_IR: Dict[str, str] = {}


def last_torch_ir() -> str:
    """Torch-backend IR of the last import, as fed to the linalg lowering."""
    return _LAST_TORCH_IR.get("text", "")

# The two torch-mlir pass pipelines of the import (data in cuvil.pipeline).
TORCH_BACKEND_PIPELINE = module_pipeline(TORCH_BACKEND)
LINALG_PIPELINE = module_pipeline(TO_LINALG)


# --------------------------------------------------------------------------
# Locations: NameLoc(<fx node name>) wrapped around the file:line callsite so a
# diagnostic can be mapped back to the FX node (target + stack_trace).
# --------------------------------------------------------------------------
class _NamedLocCache(ContextCache):
    def get_node_location(self, node):  # noqa: D401
        loc = super().get_node_location(node)
        if loc is None:
            loc = ir.Location.unknown(context=self._c)
        return ir.Location.name(f"fx:{node.name}", childLoc=loc, context=self._c)


_FILE_LINE_RE = re.compile(r'"([^"]+)":(\d+):\d+')
_FX_NAME_RE = re.compile(r'"fx:([^"]+)"')


def _user_frames(stack_trace: str) -> List[str]:
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', stack_trace or "")
    return [f"    {f}:{l} in {fn}: {src.strip()}" for f, l, fn, src in frames]


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------
def native_layer_norm_f32(x, normalized_shape, weight, bias, eps):
    """PyTorch's own decomposition goes through aten.var_mean.correction, which torch-mlir
    decomposes in f64 (extf -> f64 sums -> truncf). This keeps LayerNorm in the input dtype,
    but computes bf16 / fp16 ones in f32 as eager does (sums of 768 values in bf16 lose
    most of their bits); mean and rstd are returned in the input dtype, as on CPU."""
    dtype = x.dtype
    wide = dtype in (torch.bfloat16, torch.float16)
    if wide:
        x = x.float()
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    mean = torch.mean(x, dims, keepdim=True)
    xc = x - mean
    var = torch.mean(xc * xc, dims, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = xc * rstd
    if weight is not None:
        out = out * (weight.float() if wide else weight)
    if bias is not None:
        out = out + (bias.float() if wide else bias)
    if wide:
        return out.to(dtype), mean.to(dtype), rstd.to(dtype)
    return out, mean, rstd


F32_LAYERNORM_DECOMPS = {torch.ops.aten.native_layer_norm.default: native_layer_norm_f32}


def _has_static_zero(*tensors) -> bool:
    return any(isinstance(d, int) and d == 0 for t in tensors for d in t.shape)


def bmm_of_empty_operands(a, b):
    """aten.bmm over an empty batch or K = 0 is zeros of the result's shape.
    torch-mlir's lowering of such a bmm divides by zero (SIGFPE in the
    importer: the process dies); other bmms are left as they are."""
    if _has_static_zero(a, b):
        return a.new_zeros((a.shape[0], a.shape[1], b.shape[2]))
    return NotImplemented


EMPTY_CONTRACTION_DECOMPS = {torch.ops.aten.bmm.default: bmm_of_empty_operands}


def logcumsumexp_shifted(x, dim):
    """aten.logcumsumexp as log(cumsum(exp(x - max))) + max in float64.
    torch-mlir's own is log(cumsum(exp(x))), which overflows to inf for x >
    88 in float32; shifted by the line's max, in float64, it neither
    overflows nor (for spreads up to ~700) underflows to -inf."""
    if x.dim() == 0 or x.numel() == 0 or not x.is_floating_point():
        return NotImplemented
    wide = x.double()
    top = torch.amax(wide, dim, keepdim=True)
    # Lines all -inf (or with an inf) shift by 0 (torch-mlir has no aten.isfinite).
    top = torch.where(top.abs() < float("inf"), top, torch.zeros_like(top))
    return (torch.log(torch.cumsum(torch.exp(wide - top), dim)) + top).to(x.dtype)


def sort_stable(x, *, stable=None, dim=-1, descending=False):
    """aten.sort.stable (sort(stable=True)), which torch-mlir does not lower, as
    aten.sort: Cuvil's sort (cuvil-lower-tm-tensor) is stable either way."""
    return torch.ops.aten.sort.default(x, dim, descending)


SCAN_AND_SORT_DECOMPS = {torch.ops.aten.sort.stable: sort_stable,
                         torch.ops.aten.logcumsumexp.default: logcumsumexp_shifted}

_NARROW_FLOATS = (torch.float16, torch.bfloat16)


def _sum_in_f32(x, dim=None, keepdim=False, dtype=None):
    """aten.sum of fp16 / bf16 in f32, rounded once, as eager's CPU kernels
    accumulate: torch-mlir sums in the narrow type (a bf16 sum of 2^20 ones
    loses ~99%). Other dtypes are left as they are."""
    if x.dtype not in _NARROW_FLOATS or dtype is not None:
        return NotImplemented
    wide = x.float()
    total = torch.sum(wide, dim, keepdim) if dim is not None else torch.sum(wide)
    return total.to(x.dtype)


def _mean_in_f32(x, dim=None, keepdim=False, dtype=None):
    """aten.mean of fp16 / bf16 in f32 (see _sum_in_f32)."""
    if x.dtype not in _NARROW_FLOATS or dtype is not None:
        return NotImplemented
    dims = list(range(x.dim())) if not dim else [d % x.dim() for d in dim]
    count = 1
    for d in dims:
        count *= x.shape[d]
    total = torch.sum(x.float(), dims, keepdim)
    if x.dtype == torch.float16:   # divided first: the sum may not fit fp16's range
        return (total / count).to(x.dtype)
    # bf16 has f32's range: the sum is rounded, then divided, one rounding
    # more than eager's, because a fused f32 divide + truncation to bf16
    # vectorizes to a <64 x bfloat> fptrunc that LLVM 22's x86 backend
    # cannot legalize (an llc assertion).
    return total.to(x.dtype) / count


F32_REDUCTION_DECOMPS = {
    torch.ops.aten.sum.dim_IntList: _sum_in_f32, torch.ops.aten.sum.default: _sum_in_f32,
    torch.ops.aten.mean.dim: _mean_in_f32, torch.ops.aten.mean.default: _mean_in_f32,
}


def export_program(model: nn.Module, args: Sequence[Any], kwargs: Optional[dict] = None,
                   dynamic_shapes=None, strict: bool = False, decompose: bool = True,
                   extra_decompositions: Optional[dict] = None, in_spec=None):
    """`in_spec`: `args` are the leaves of the call's (args, kwargs) of that
    pytree structure (keyword inputs, a Hugging Face cache): the model is
    exported taking them flat."""
    from . import importer_export_kernels, importer_quantized
    from .signature import register_hf_cache_pytrees
    register_hf_cache_pytrees()
    model = importer_quantized.in_eval_mode(model)
    if importer_quantized.is_quantized_graph(model):
        # PT2E's quantize / dequantize pairs as integer matmuls (the rest in
        # float: the decompositions give PyTorch's own float meaning).
        model = importer_quantized.rewrite(model)
        extra_decompositions = {**importer_quantized.decompositions(), **(extra_decompositions or {})}
    # Composite ops whose C++ kernels branch on values (torch.cov) traced
    # through Python kernels that do not; until the decompositions are done.
    with importer_export_kernels.export_kernels():
        prog = _export(model, args, kwargs, dynamic_shapes, strict, in_spec)
        out_spec = prog.call_spec.out_spec
        if decompose and _holds_hf_cache(out_spec):
            prog = _export(model, args, kwargs, dynamic_shapes, strict, in_spec, flat_outputs=True)
        if decompose:
            table = dict(get_decomposition_table())
            for op, decomposition in (extra_decompositions or {}).items():
                table[op] = _first_of(decomposition, table[op]) if op in table else decomposition
            with warnings.catch_warnings():
                # torch 2.13's run_decompositions deep-copies the program's pytree
                # specs, which trips torch's own deprecation of LeafSpec checks:
                # a FutureWarning about torch internals on every compile.
                warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)", category=FutureWarning)
                prog = prog.run_decompositions(table)
    if prog.call_spec.out_spec != out_spec:   # flattened for the decompositions: rebuilt by the call
        prog.module_call_graph[0].signature.out_spec = out_spec
    return prog


def _first_of(decomposition, fallback):
    """`decomposition`, or `fallback` (torch-mlir's own for that op) where it
    returns NotImplemented: Cuvil's cover some forms of an op only."""
    def either(*args, **kwargs):
        result = decomposition(*args, **kwargs)
        return fallback(*args, **kwargs) if result is NotImplemented else result
    return either


def _holds_hf_cache(spec) -> bool:
    """Whether a Hugging Face cache object (DynamicCache ...) is in the outputs."""
    if spec is None:
        return False
    if getattr(spec.type, "__module__", "").startswith("transformers.cache_utils"):
        return True
    return any(_holds_hf_cache(child) for child in spec.children())


def _export(model, args, kwargs, dynamic_shapes, strict, in_spec=None, flat_outputs=False):
    """torch.export of the model, taking its inputs flat when `in_spec` is
    given, returning its outputs' tensors as a flat tuple when `flat_outputs`.
    The latter because run_decompositions retraces the program together with
    its output pytree: rebuilding a DynamicCache there creates tensors that end
    up as constants it does not register ("Constant tensor lifted_tensor_0 is
    not in the constants dictionary", torch 2.13); export_program puts the real
    output spec back, and the call rebuilds the cache. `forward` is overridden
    on the instance, so the parameters keep their names."""
    from torch.utils import _pytree as pytree
    forward, own = model.forward, "forward" in vars(model)
    override = in_spec is not None or flat_outputs

    def flat_forward(*a, **kw):
        if in_spec is not None:
            a, kw = pytree.tree_unflatten(list(a), in_spec)
        out = forward(*a, **kw)
        return tuple(pytree.tree_leaves(out)) if flat_outputs else out

    if override:
        model.forward = flat_forward
    try:
        with torch.no_grad():
            return torch.export.export(model, tuple(args), kwargs or {}, dynamic_shapes=dynamic_shapes, strict=strict)
    finally:
        if override and own:   # the instance had a forward of its own (a hook): put it back
            model.forward = forward
        elif override:
            del model.forward


# --------------------------------------------------------------------------
# Import with weights as arguments
# --------------------------------------------------------------------------
@dataclasses.dataclass
class ImportResult:
    text: str                      # linalg (or torch) MLIR text
    manifest: dict
    timings: Dict[str, float]
    _arg_tensors: List[Optional[torch.Tensor]]
    out_spec: Any = None            # pytree TreeSpec of the user outputs

    def weights(self) -> List[Optional[torch.Tensor]]:
        return [t for a, t in zip(self.manifest["args"], self._arg_tensors) if a["kind"] != "user_input"]

    def call_args(self, *user_inputs) -> List[Optional[torch.Tensor]]:
        """Full argument list for the MLIR func: weights and user inputs interleaved in
        func-argument order (user inputs in the order of prog.graph_signature.user_inputs)."""
        it = iter(user_inputs)
        return [t if a["kind"] != "user_input" else next(it)
                for a, t in zip(self.manifest["args"], self._arg_tensors)]


def _run_pipeline(module: ir.Module, pipeline: str, stage: str, graph=None, explain=None):
    """Runs a torch-mlir pass pipeline; on failure `explain(records, stage,
    err)` raises the error (default: naming the FX node of `graph`)."""
    _LAST_TORCH_IR.update(text=module.operation.get_asm(enable_debug_info=True), pipeline=pipeline)
    records = []

    def handler(d):
        records.append((str(d.severity), str(d.location), str(d.message),
                        [str(n.message) for n in d.notes]))
        return True  # handled -> do not print to stderr

    ctx = module.context
    h = ctx.attach_diagnostic_handler(handler)
    try:
        with ctx:
            pm = PassManager.parse(pipeline)
            try:
                pm.run(module.operation)
                err = None
            except Exception as e:  # ir.MLIRError carries the error diagnostics
                err = e
                for d in getattr(e, "error_diagnostics", []) or []:
                    records.append(("DiagnosticSeverity.ERROR", str(d.location), str(d.message),
                                    [str(n.message) for n in d.notes]))
    finally:
        h.detach()
    if err is None:
        return
    if explain is not None:
        explain(records, stage, err)
    _raise_from_diagnostics(records, stage, err, graph)


_LEGALIZE_RE = re.compile(r"failed to legalize operation '([^']+)'")
_OPERATOR_NAME_RE = re.compile(r'name = "([^"]+)"')


def _raise_from_diagnostics(records, stage, err, graph):
    nodes = {n.name: n for n in graph.nodes} if graph is not None else {}
    errs = [r for r in records if "Error" in r[0]] or records
    for sev, loc, msg, notes in errs:
        m = _LEGALIZE_RE.search(msg)
        if not m:
            continue
        op = m.group(1)
        if op == "torch.operator":
            m2 = _OPERATOR_NAME_RE.search(msg)
            if m2:
                op = m2.group(1)
        op = op[len("torch."):] if op.startswith("torch.") else op
        where, stack = "<unknown>", ""
        mname = _FX_NAME_RE.search(loc)
        node = nodes.get(mname.group(1)) if mname else None
        if node is not None:
            tgt = getattr(node.target, "name", lambda: str(node.target))
            if op.startswith("constant.") and isinstance(node.target, torch._ops.OpOverload):
                # A constant operand (torch.constant.int) of an op that did not
                # lower is what fails to legalize first: name that op.
                op = "aten." + node.target.name().split("::", 1)[-1]
            op = f"{op} (fx node '{node.name}', target {tgt() if callable(tgt) else tgt})"
            frames = _user_frames(node.meta.get("stack_trace", ""))
            stack = "\n".join(frames[-4:])
        fl = _FILE_LINE_RE.findall(loc)
        if fl:
            # Innermost frame is the first file:line inside callsite(...)
            where = f"{os.path.basename(fl[0][0])}:{fl[0][1]} ({fl[0][0]})"
        raise UnsupportedOpError(op, where, stage, _with_stack(f"{loc}: {msg.splitlines()[0]}", stack),
                                 reproducer=_reproducer(graph))
    detail = "\n".join(f"{loc}: {msg}" for _, loc, msg, _ in errs[:10])
    raise CompileError(stage, f"{err}\n{detail}")


#: The tm_tensor ops Cuvil takes (cuvil-lower-tm-tensor, first in the raise step).
LOWERED_TM_TENSOR_OPS = ("tm_tensor.scatter", "tm_tensor.sort", "tm_tensor.topk", "tm_tensor.scan",
                         "tm_tensor.yield")

# Dialects an upstream MLIR (22.1.8) build knows; torch-mlir can also emit `tm_tensor.*`
# (TMTensor: scan/cumsum, scatter, sort, topk, attention...) and `ml_program` (globals).
UPSTREAM_DIALECTS = ("builtin", "func", "linalg", "tensor", "arith", "math", "cf", "scf",
                     "complex", "affine", "bufferization", "memref", "sparse_tensor")


def non_upstream_ops(module, allowed=UPSTREAM_DIALECTS) -> List[tuple]:
    """(op name, location) of each op outside `allowed` dialects, the
    first not a terminator first."""
    bad = []

    def visit(op):
        name = op.operation.name
        if name.split(".", 1)[0] not in allowed:
            bad.append((name, str(op.operation.location)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return sorted(bad, key=lambda b: b[0].endswith(".yield"))


def crossing_text(module, debug_info: bool = False, foreign: Optional[List[tuple]] = None) -> str:
    """The linalg module as the text Cuvil parses. Cuvil's MLIR has no
    tm_tensor dialect (torch-mlir's scatter, sort, scan), only a stand-in that
    holds such ops unverified until `cuvil-lower-tm-tensor` rewrites them (first
    in the raise step); it parses them in the generic form only, so a module
    with any crosses in the generic form (every op: the printer has no per-op
    switch). `foreign`: non_upstream_ops(module), when the caller has it."""
    foreign = non_upstream_ops(module) if foreign is None else foreign
    generic = any(name.startswith("tm_tensor.") for name, _ in foreign)
    return module.operation.get_asm(enable_debug_info=debug_info, print_generic_op_form=generic)


def _check_upstream_dialects(module, graph, allowed) -> List[tuple]:
    """The module's ops outside `allowed` (for crossing_text), after refusing
    any that Cuvil does not lower."""
    foreign = non_upstream_ops(module, allowed)
    bad = [b for b in foreign if b[0] not in LOWERED_TM_TENSOR_OPS]
    if not bad:
        return foreign
    nodes = {n.name: n for n in graph.nodes}
    name, loc = next((b for b in bad if not b[0].endswith(".yield")), bad[0])
    mname = _FX_NAME_RE.search(loc)
    node = nodes.get(mname.group(1)) if mname else None
    op, stack = name, ""
    if node is not None:
        op = f"{name} (from fx node '{node.name}', target {node.target})"
        stack = "\n".join(_user_frames(node.meta.get("stack_trace", ""))[-4:])
    fl = _FILE_LINE_RE.findall(loc)
    where = f"{os.path.basename(fl[0][0])}:{fl[0][1]} ({fl[0][0]})" if fl else "<unknown>"
    others = sorted(collections.Counter(b[0] for b in bad).items())
    raise UnsupportedOpError(op, where, "upstream-dialect-check",
                             _with_stack(f"non-upstream ops in linalg output: {others}", stack))


def _dim(d) -> Any:
    """An int, or the sympy expression (as text) of a symbolic size."""
    return d if isinstance(d, int) else str(d.node.expr)


def _graph_output(g):
    """The graph's output node and its results as a list."""
    output = next(n for n in g.nodes if n.op == "output")
    results = output.args[0]
    return output, list(results) if isinstance(results, (tuple, list)) else [results]


def _output_dims(graph) -> List[List[Any]]:
    """Sizes of each user output, symbolic ones as expressions of the input
    size symbols (e.g. 's77'), so callers can size output buffers."""
    dims = []
    for value in _graph_output(graph)[1]:
        val = value.meta.get("val") if hasattr(value, "meta") else None
        dims.append([_dim(d) for d in val.shape] if val is not None and hasattr(val, "shape") else [])
    return dims


_SCALAR_DTYPES = {"int": torch.int64, "float": torch.float64, "bool": torch.bool}


def _fake_mode(g):
    """The FakeTensorMode of the graph's fake values (the importer types a
    node from its fake value: new nodes need one from the same mode)."""
    from torch._subclasses.fake_tensor import FakeTensor
    return next(n.meta["val"].fake_mode for n in g.nodes if isinstance(n.meta.get("val"), FakeTensor))


def _fake_rank0(g, dtype):
    """A rank-0 fake tensor of the graph's fake mode."""
    with _fake_mode(g):
        return torch.empty((), dtype=dtype)


def _tensor_outputs_only(g, leading: int) -> List[list]:
    """Makes every result of the graph a tensor: torch-mlir gives a Python
    number result (`x.numel()`, a shape) an MLIR scalar type, which has no
    buffer to return in. A constant leaves the graph; a symbolic number is
    returned as a rank-0 tensor. Returns what each result was, in order:
    ["tensor"] | ["constant", value] | ["scalar", "int" | "float" | "bool"],
    so that the call gives back what eager does. The `leading` results (the
    mutated inputs and buffers) are tensors and stay as they are."""
    output, results = _graph_output(g)
    slots: List[list] = []
    kept = results[:leading]
    for r in results[leading:]:
        val = r.meta.get("val") if isinstance(r, torch.fx.Node) else None
        if isinstance(val, torch.Tensor):
            slots.append(["tensor"])
            kept.append(r)
        elif isinstance(r, torch.fx.Node):
            kind = {torch.SymInt: "int", torch.SymFloat: "float", torch.SymBool: "bool"}.get(type(val)) \
                or type(val).__name__
            if kind not in _SCALAR_DTYPES:
                raise UnsupportedOpError(f"a model output of type {kind}", stage="import",
                                         detail=f"output {r.name}: Cuvil returns tensors, ints, floats and bools")
            with g.inserting_before(output):
                t = g.call_function(torch.ops.aten.scalar_tensor.default, (r,), {"dtype": _SCALAR_DTYPES[kind]})
            t.meta["val"] = _fake_rank0(g, _SCALAR_DTYPES[kind])
            slots.append(["scalar", kind])
            kept.append(t)
        else:
            slots.append(["constant", r])
    if any(slot[0] != "tensor" for slot in slots):
        output.args = (tuple(kept),)
    return slots


# torch-mlir lowers uint8 tensors to MLIR's signless i8 and then uses signed
# ops for some of them: comparisons come out wrong silently, floor division
# and max crash its pipeline. These ops keep their meaning on the same bits
# (wrap-around arithmetic, equality, data movement, conversions); any other
# op (and arithmetic with a Python number, which crashes torch-mlir) takes
# its uint8 operands widened to int32 (see _widen_unsigned_operands).
_UINT8_SAFE_OPS = {
    "_to_copy", "to", "convert_element_type", "clone", "copy", "copy_", "contiguous", "alias",
    "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "unsqueeze", "squeeze",
    "flatten", "slice", "select", "cat", "stack", "index", "embedding", "gather", "index_select",
    "add", "sub", "mul", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "eq", "ne", "where", "fill", "zeros_like", "ones_like", "full_like", "empty_like", "lift_fresh_copy",
    "scalar_tensor", "constant_pad_nd", "repeat", "roll", "flip", "split", "split_with_sizes", "chunk",
    "unbind", "narrow", "masked_fill", "sym_size", "sym_numel", "sym_stride", "_assert_tensor_metadata",
}


_UINT8_TENSOR_ONLY_OPS = {"add", "sub", "mul", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne"}


def _widen_unsigned_operands(g) -> None:
    """Gives every op torch-mlir would get wrong on uint8 its uint8 operands
    as int32 (exact: they are 0..255), and converts each result whose dtype
    that changes back to eager's dtype (uint8 wrap-around included: int32
    arithmetic modulo 256 is uint8 arithmetic). What `x.to(torch.int32)`
    in the model would do, without the user writing it."""
    # aten._to_copy: what `x.to(dtype)` exports to.
    convert = torch.ops.aten._to_copy.default
    mode: Any = None   # the graph's FakeTensorMode, found at the first widened op

    def converted(value: torch.fx.Node, dtype, meta_from: torch.fx.Node) -> torch.fx.Node:
        node = g.call_function(convert, (value,), {"dtype": dtype})
        with mode:
            node.meta["val"] = convert(value.meta["val"], dtype=dtype)
        node.meta.update({k: meta_from.meta[k] for k in ("stack_trace", "nn_module_stack") if k in meta_from.meta})
        return node

    def restore_dtype(node: torch.fx.Node, dtype) -> None:
        if node.meta["val"].dtype == dtype:
            return
        users = list(node.users)
        with g.inserting_after(node):
            back = converted(node, dtype, node)
        for user in users:
            user.replace_input_with(node, back)

    for node in list(g.nodes):
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        operands = [a for a in node.all_input_nodes
                    if isinstance(a.meta.get("val"), torch.Tensor) and a.meta["val"].dtype == torch.uint8]
        short = _aten_name(node).split(".")[-1]
        scalar_arithmetic = short in _UINT8_TENSOR_ONLY_OPS and not all(
            isinstance(a, torch.fx.Node) for a in node.args)
        if not operands or (short in _UINT8_SAFE_OPS and not scalar_arithmetic):
            continue
        if node.target.namespace != "aten":   # e.g. a quantized op: its dtype is part of its meaning
            raise _unsupported_node(node, f"{_aten_name(node)} on uint8",
                                    "torch-mlir computes uint8 as signed int8 here (a wrong result or "
                                    "a crash); convert the operand first, e.g. .to(torch.int32)")
        mode = mode or _fake_mode(g)
        with g.inserting_before(node):
            for a in operands:
                node.replace_input_with(a, converted(a, torch.int32, node))
        before = node.meta["val"]
        fake = torch.fx.node.map_aggregate(node.args, lambda a: a.meta["val"] if isinstance(a, torch.fx.Node) else a)
        fake_kwargs = torch.fx.node.map_aggregate(
            node.kwargs, lambda a: a.meta["val"] if isinstance(a, torch.fx.Node) else a)
        with mode:
            node.meta["val"] = node.target(*fake, **fake_kwargs)
        node.meta.pop("tensor_meta", None)   # the importer would type the result from it
        if isinstance(before, torch.Tensor):
            restore_dtype(node, before.dtype)
            continue
        for user in list(node.users):   # a tuple result: its getitems
            if user.target is operator.getitem and isinstance(before[user.args[1]], torch.Tensor):
                user.meta["val"] = node.meta["val"][user.args[1]]
                user.meta.pop("tensor_meta", None)
                restore_dtype(user, before[user.args[1]].dtype)


def _inline_cond(prog) -> None:
    """torch.cond(pred, true_fn, false_fn, operands) as both branches and a
    select: torch-mlir's importer has no lowering for the higher-order op.
    Both branches run (cond requires them to be pure and to return the same
    shapes and dtypes), and `where(pred, ...)` keeps the taken branch's
    values, exactly, NaNs of the other branch included."""
    g, gm = prog.graph, prog.graph_module
    for node in [n for n in g.nodes if n.op == "call_function" and n.target is torch.ops.higher_order.cond]:
        pred, true_attr, false_attr, operands = node.args[:4]
        branches = []
        for attr in (true_attr, false_attr):
            sub = getattr(gm, attr.target).graph
            inputs = [n for n in sub.nodes if n.op == "placeholder"]
            with g.inserting_before(node):
                out = g.graph_copy(sub, dict(zip(inputs, operands)))
            branches.append(list(out) if isinstance(out, (tuple, list)) else [out])
        selected = []
        with g.inserting_before(node):
            for t, f in zip(*branches):
                w = g.call_function(torch.ops.aten.where.self, (pred, t, f))
                w.meta = dict(t.meta)
                selected.append(w)
        for user in list(node.users):
            if user.target is not operator.getitem:
                raise _unsupported_node(node, "torch.cond", f"its result used as {user.target}, not indexed")
            user.replace_all_uses_with(selected[user.args[1]])
            g.erase_node(user)
        g.erase_node(node)
        for attr in (true_attr, false_attr):
            if not attr.users:
                g.erase_node(attr)


def _while_loops(graph) -> list:
    """The graph's torch.while_loop nodes (args: cond, body, carries, additional inputs)."""
    return [n for n in graph.nodes
            if n.op == "call_function" and n.target is torch.ops.higher_order.while_loop]


def _while_loop_graphs(prog) -> list:
    """The cond and body graphs of the program's while loops (torch-mlir
    imports them as functions of their own): the value-preserving rewrites
    of the main graph apply to them too."""
    return [getattr(prog.graph_module, attr.target).graph
            for node in _while_loops(prog.graph) for attr in node.args[:2]]


def _runtime_true(prog, before):
    """A 0-d bool `true` that torch-mlir cannot fold: computed from the
    smallest tensor input (s == s or s != s of its sum: true with a NaN too),
    a user input or a weight (not a lifted constant, which the import
    inlines and torch-mlir folds); None in a program without one."""
    from torch.export.graph_signature import InputKind
    g = prog.graph
    runtime = {spec.arg.name for spec in prog.graph_signature.input_specs
               if spec.kind in (InputKind.USER_INPUT, InputKind.PARAMETER)
               or (spec.kind == InputKind.BUFFER and spec.persistent)}
    inputs = [n for n in g.nodes if n.op == "placeholder" and n.name in runtime
              and isinstance(n.meta.get("val"), torch.Tensor)]
    if not inputs:
        return None
    source = min(inputs, key=lambda n: n.meta["val"].numel())
    aten = torch.ops.aten
    with g.inserting_before(before):
        total = g.call_function(aten.sum.default, (source,))
        same = g.call_function(aten.eq.Tensor, (total, total))
        differs = g.call_function(aten.ne.Tensor, (total, total))
        token = g.call_function(aten.logical_or.default, (same, differs))
    # (the importer types nodes from fake tensors: computed on the input's)
    total.meta["val"] = source.meta["val"].sum()
    same.meta["val"] = total.meta["val"] == total.meta["val"]
    differs.meta["val"] = total.meta["val"] != total.meta["val"]
    token.meta["val"] = torch.logical_or(same.meta["val"], differs.meta["val"])
    return token


def _add_input(graph, name: str, val):
    """A placeholder after the graph's last one."""
    last = [n for n in graph.nodes if n.op == "placeholder"][-1]
    with graph.inserting_after(last):
        node = graph.placeholder(name)
    node.meta["val"] = val
    return node


def _carry_while_loop_inputs(prog) -> None:
    """Two rewrites of each while_loop for torch-mlir's importer and loop
    lowering. Its additional inputs (the tensors cond / body close over,
    which torch.export lifts into a second operand tuple) become carries the
    body returns unchanged: the importer passes both tuples into
    torch.prim.Loop but types its region with the carries only, and the op
    fails to verify. And the condition is and-ed with a runtime `true`
    (_runtime_true), carried too: torch-mlir lowers a prim.Loop whose
    initial condition folds to true (`i < 3` from i = 0) as a for loop of
    2^63 - 1 steps, never checking the condition again (TorchScript's for
    loops), and the program never ends."""
    g, gm = prog.graph, prog.graph_module
    for node in _while_loops(g):
        cond_attr, body_attr, carries, extra = node.args[:4]
        extra = tuple(extra)
        token = _runtime_true(prog, node)
        cond, body = getattr(gm, cond_attr.target), getattr(gm, body_attr.target)
        if token is not None:
            extra = extra + (token,)
            cond_token = _add_input(cond.graph, "cuvil_runtime_true", token.meta["val"])
            _add_input(body.graph, "cuvil_runtime_true", token.meta["val"])
            output = cond.graph.output_node()
            (result,) = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
            with cond.graph.inserting_before(output):
                both = cond.graph.call_function(torch.ops.aten.logical_and.default, (result, cond_token))
            both.meta["val"] = torch.logical_and(result.meta["val"], cond_token.meta["val"])
            output.args = ((both,) if isinstance(output.args[0], (tuple, list)) else both,)
            cond.recompile()
        if not extra:
            continue
        inputs = [n for n in body.graph.nodes if n.op == "placeholder"]
        output = body.graph.output_node()
        returned = output.args[0]
        output.args = (tuple(returned) + tuple(inputs[len(carries):]),)
        body.recompile()
        node.args = (cond_attr, body_attr, tuple(carries) + extra, ())
        node.meta["val"] = tuple(node.meta["val"]) + tuple(e.meta["val"] for e in extra)


def _empty_results_as_empty_tensors(g) -> None:
    """An op on tensors whose result has no element (static shape) becomes a
    fresh empty tensor of that shape and dtype: its value is the same, and
    torch-mlir's lowerings divide by a zero extent (a view or flatten of an
    empty tensor is a SIGFPE in its passes). Ops left without users go.
    (`aten.empty`: torch-mlir folds a `zeros` of no element into a literal
    whose uint8 type it then rejects.)"""
    changed = False
    for node in list(g.nodes):
        val = node.meta.get("val")
        if (node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload)
                or not isinstance(val, torch.Tensor) or val.layout != torch.strided
                or not all(isinstance(d, int) for d in val.shape)
                or val.numel() != 0 or not any(isinstance(a, torch.fx.Node) for a in node.all_input_nodes)):
            continue
        with g.inserting_before(node):
            empty = g.call_function(torch.ops.aten.empty.memory_format, (list(val.shape),),
                                    {"dtype": val.dtype, "device": torch.device("cpu")})
        empty.meta = dict(node.meta)
        node.replace_all_uses_with(empty)
        changed = True
    if changed:
        g.eliminate_dead_code()


_INT_EXPONENT_OPS = {"pow", "float_power"}   # an int exponent lowers to multiplies, a float one to powf


def _float_scalars_for_float_operands(g) -> None:
    """Writes the Python int scalars of an op on float tensors as floats
    (`x < 0` as `x < 0.0`): the same value under PyTorch's type promotion,
    but torch-mlir's folders get an int scalar against a constant float
    tensor wrong, silently (`full_like(x, 5.7) < 0` folded to all-true,
    `sign` and `trunc` of constants with it), and some lowerings refuse it
    (`fmod(x, 2)`)."""
    for node in g.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload) \
                or _aten_name(node) in _INT_EXPONENT_OPS:
            continue
        vals = [a.meta.get("val") for a in node.all_input_nodes]
        out = node.meta.get("val")
        # Results in float (or comparisons of floats): an int result (new_full(x, 2**60 + 1,
        # dtype=int64)) keeps its exact int.
        if not any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in vals) or not (
                isinstance(out, torch.Tensor) and (out.is_floating_point() or out.dtype == torch.bool)):
            continue
        schema = node.target._schema.arguments

        def scalar_position(i=None, name=None) -> bool:
            arg = schema[i] if i is not None else next((a for a in schema if a.name == name), None)
            return arg is not None and str(arg.type) in ("number", "Optional[number]", "Tensor")

        def as_float(v):
            return float(v) if isinstance(v, int) and not isinstance(v, bool) else v

        args = tuple(as_float(a) if i < len(schema) and scalar_position(i) else a for i, a in enumerate(node.args))
        kwargs = {k: as_float(v) if scalar_position(name=k) else v for k, v in node.kwargs.items()}
        node.args, node.kwargs = args, kwargs   # (2.0 == 2: no point comparing)


def _node_location(node) -> str:
    """file.py:LINE (path) of the model line that made `node`."""
    calls = re.findall(r'File "([^"]+)", line (\d+)', node.meta.get("stack_trace", "") or "")
    return f"{os.path.basename(calls[-1][0])}:{calls[-1][1]} ({calls[-1][0]})" if calls else "<unknown>"


def _unsupported_node(node, op: str, detail: str) -> UnsupportedOpError:
    """The error for an FX node Cuvil refuses: the op, its model line, why."""
    frames = _user_frames(node.meta.get("stack_trace", ""))
    return UnsupportedOpError(op, _node_location(node), "import",
                              _with_stack(f"fx node '{node.name}': {detail}", "\n".join(frames[-4:])))


# torch's fake-tensor errors that name the op export could not trace, and why.
_EXPORT_OP_FAILURES = {
    "DynamicOutputShapeException": "its output's shape depends on the input's values",
    "DataDependentOutputException": "its result (a Python number or bool) depends on the input's values",
    "UnsupportedOperatorException": "torch.export has no fake-tensor implementation of it",
}


def unsupported_from_export_error(err: BaseException) -> Optional[UnsupportedOpError]:
    """torch.export stopped at an op it cannot trace (linalg.lstsq's
    data-dependent shapes, torch.equal's data-dependent bool): the
    UnsupportedOpError naming that op and the model line that called it
    (the innermost frame of the traceback outside torch and Cuvil); None
    for other failures."""
    why = _EXPORT_OP_FAILURES.get(type(err).__name__)
    func = getattr(err, "func", None)
    if why is None or func is None:
        return None
    op = f"aten.{getattr(getattr(func, '_overloadpacket', None), '__name__', func)}"
    library = (os.path.dirname(torch.__file__), os.path.dirname(os.path.abspath(__file__)))
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not os.path.abspath(f.filename).startswith(library)]
    location = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno} ({frames[-1].filename})" \
        if frames else "<unknown>"
    stack = "\n".join(f"    {f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-4:])
    return UnsupportedOpError(op, location, "import", _with_stack(
        f"torch.export cannot trace it: {why}; torch.compile(model, backend=\"cuvil\") runs such ops "
        f"eagerly and compiles the graphs around them", stack))


def _aten_name(node) -> str:
    return getattr(getattr(node.target, "_overloadpacket", None), "__name__", str(node.target))


_EMBEDDING_BAGS = (torch.ops.aten._embedding_bag.default, torch.ops.aten._embedding_bag_forward_only.default)


def _refuse_what_cannot_lower(g) -> None:
    """Ops whose lowering leaves upstream MLIR: random numbers that
    cuvil.importer_random did not replace (torch-mlir keeps the generator
    state in ml_program globals) and complex tensors
    (FFTs: the linalg lowering fails on complex<f32> deep inside); and one
    torch-mlir lowers wrong: embedding_bag with per_sample_weights. Named,
    with the model line, before torch-mlir sees them."""
    for node in g.nodes:
        if node.op != "call_function":
            continue
        detail = ""
        if torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()):
            detail = f"random numbers: {importer_random.why_not_lowered(node)}"
        elif node.target in _EMBEDDING_BAGS and len(node.args) > 6 and node.args[6] is not None:
            detail = ("per_sample_weights: torch-mlir's lowering of embedding_bag ignores them (a wrong "
                      "result); weight the embeddings and sum them in the model instead")
        else:
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor) and val.dtype.is_complex:
                # A transform's result (cuvil.importer_fft) used by an op that
                # has no real-pair form: that op is the one to name.
                if node.target == torch.ops.aten.view_as_complex.default and node.users:
                    node = next(iter(node.users))
                detail = f"it computes on a {val.dtype} tensor: Cuvil computes real dtypes only"
        if detail:
            raise _unsupported_node(node, f"aten.{_aten_name(node)}", detail)


def _linalg_checks_as_outputs(prog) -> List[dict]:
    """Eager's LAPACK error checks become results of the compiled function.

    A raising linalg op (`linalg.inv`, `linalg.cholesky`, `linalg.solve`,
    `lu_factor`, and the `_ex` forms with check_errors=True; importer_linalg
    writes them as eager does) ends in `aten._linalg_check_errors(info,
    api_name, is_matrix=)`, which torch.export keeps as a side effect threaded
    by a token. Each such check leaves the graph: its `info` tensor is
    returned after the mutated values, and the caller runs eager's own check
    on it after the call (CallContract.raise_linalg_errors), raising what
    eager raises, with eager's message. The token goes once nothing else
    uses it. Returns the checks' manifest entries, in result order."""
    from torch.export.graph_signature import InputKind, OutputKind
    g, sig = prog.graph, prog.graph_signature
    check = torch.ops.aten._linalg_check_errors.default
    checks, infos = [], []
    for node in list(g.nodes):
        if node.op != "call_function":
            continue
        if node.target is torch.ops.higher_order.with_effects and node.args[1] is check:
            token, _, info, api_name = node.args[:4]
            for after in list(node.users):   # getitem(node, 0): the token after the check
                after.replace_all_uses_with(token)
                g.erase_node(after)
        elif node.target is check:   # as a decomposition of a non-composite op (inv_ex) leaves it: no token
            info, api_name = node.args[:2]
        else:
            continue
        _refuse_lapack_call(info)
        infos.append(info)
        checks.append(dict(kind="linalg_check", name=info.name, target=api_name,
                           is_matrix=bool(node.kwargs.get("is_matrix", True))))
        g.erase_node(node)
    if not checks:
        return checks
    _refuse_side_effects(g)   # another effect (a print) keeps the token: refused by name
    output, results = _graph_output(g)
    kinds = [spec.kind for spec in sig.output_specs]
    kept = [r for r, kind in zip(results, kinds) if kind != OutputKind.TOKEN]
    leading = sum(kind not in (OutputKind.TOKEN, OutputKind.USER_OUTPUT) for kind in kinds)
    output.args = (tuple(kept[:leading] + infos + kept[leading:]),)
    sig.output_specs[:] = [spec for spec in sig.output_specs if spec.kind != OutputKind.TOKEN]
    for spec in [spec for spec in sig.input_specs if spec.kind == InputKind.TOKEN]:
        g.erase_node(next(n for n in g.nodes if n.op == "placeholder" and n.name == spec.arg.name))
        sig.input_specs.remove(spec)
    return checks


def _refuse_lapack_call(info) -> None:
    """A checked info that a LAPACK op of the graph computes: one of
    importer_linalg's ops left to torch-mlir, which lowers none of them (the
    matrix is larger than its unrolled forms take). Named, with the model
    line, before torch-mlir fails on it."""
    producer = info
    while isinstance(producer, torch.fx.Node) and producer.target is operator.getitem:
        producer = producer.args[0]
    if isinstance(producer, torch.fx.Node) and producer.target in importer_linalg.DECOMPOSITIONS:
        raise _unsupported_node(producer, f"aten.{_aten_name(producer)}",
                                f"a LAPACK call in eager, which torch-mlir does not lower; Cuvil's own "
                                f"forms of the linalg ops take matrices up to "
                                f"{importer_linalg.MAX_SIZE} x {importer_linalg.MAX_SIZE}")


def _refuse_side_effects(g) -> None:
    """An op torch.export runs for its side effect (a print) threads a token
    through the program: compiled code makes no such effects. Named by the
    op whose result it reads where there is one, with the model line."""
    for node in g.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.with_effects:
            effect = node.args[1]
            checked = next((a for a in node.args[2:] if isinstance(a, torch.fx.Node)), None)
            while checked is not None and checked.target is operator.getitem and isinstance(checked.args[0], torch.fx.Node):
                checked = checked.args[0]
            culprit = checked if checked is not None and checked.op == "call_function" else node
            raise _unsupported_node(culprit, f"aten.{_aten_name(culprit)}" if culprit is not node else str(effect),
                                    f"the model runs {effect} on its result, a side effect compiled code does "
                                    f"not make")


def _refuse_data_dependent_output_sizes(g) -> None:
    """An output whose size depends on the input's values (nonzero, argwhere,
    bincount, masked_select: an unbacked symbol `u0` of torch.export) cannot
    be allocated by the caller before the call, which is how the compiled
    library returns results."""
    for value in _graph_output(g)[1]:
        val = value.meta.get("val") if hasattr(value, "meta") else None
        for d in getattr(val, "shape", ()):
            if isinstance(d, int):
                continue
            unbacked = sorted(str(s) for s in d.node.expr.free_symbols if str(s).startswith("u"))
            if unbacked:
                makers = [n for n in g.nodes if n.op == "call_function" and any(
                    str(x) in unbacked for x in getattr(n.meta.get("val"), "shape", ()))]
                op = f"aten.{_aten_name(makers[0])}" if makers else "a data-dependent op"
                raise _unsupported_node(makers[0] if makers else value, op,
                                        f"the size of output {value.name!r} ({d}) depends on the input's values, "
                                        "and Cuvil's callers allocate outputs before the call: use "
                                        "torch.compile(model, backend=\"cuvil\"), which runs such ops eagerly "
                                        "and compiles the graphs around them")


def _output_dtypes(g, complex_outputs: Optional[Dict[int, str]] = None) -> List[str]:
    """Each tensor result's torch dtype (MLIR's signless i8 is both int8 and
    uint8; a complex result crosses as its real pair, cuvil.importer_complex)."""
    paired = complex_outputs or {}
    return [paired.get(i) or str(r.meta["val"].dtype).removeprefix("torch.")
            for i, r in enumerate(_graph_output(g)[1])]


def input_dims(prog) -> List[List[Any]]:
    """Sizes of each user input placeholder (ints or symbol names)."""
    from torch.export.graph_signature import InputKind
    nodes = {n.name: n for n in prog.graph.nodes if n.op == "placeholder"}
    dims = []
    for spec in prog.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT and spec.arg.name in nodes:
            val = nodes[spec.arg.name].meta.get("val")
            if val is not None and hasattr(val, "shape"):
                dims.append([_dim(d) for d in val.shape])
    return dims


def import_program_weights_as_args(
    prog, *, func_name: str = "main", output_type: str = "linalg-on-tensors",
    inline_max_bytes: int = INLINE_MAX_BYTES, inline_nonpersistent_buffers: bool = False,
    debug_info: bool = False, check_dialects: bool = True, name_args: bool = True,
    allowed_dialects: Sequence[str] = UPSTREAM_DIALECTS,
) -> ImportResult:
    """prog: ExportedProgram (already decomposed). Mutates prog.graph.

    inline_max_bytes: lifted CONSTANT_TENSORs (tensors created in forward, e.g. torch.tensor(..))
        up to this size are inlined as torch.vtensor.literal; larger ones become args.
    inline_nonpersistent_buffers: also inline non-persistent buffers (e.g. BERT position_ids)
        when <= inline_max_bytes. Default False -> they become args like every other buffer.
    """
    from torch.export.graph_signature import ConstantArgument, InputKind

    timings: Dict[str, float] = {}
    t0 = time.perf_counter()
    sig = prog.graph_signature
    g = prog.graph
    linalg_checks = _linalg_checks_as_outputs(prog)
    _refuse_side_effects(g)
    _inline_cond(prog)
    _carry_while_loop_inputs(prog)
    random_seed = importer_random.lower_random_ops(prog)
    placeholders = {n.name: n for n in g.nodes if n.op == "placeholder"}

    args_manifest: List[dict] = []
    arg_tensors: List[Optional[torch.Tensor]] = []
    inlined: List[Any] = []
    replace: Dict[str, Any] = {}
    for spec in sig.input_specs:
        arg = spec.arg
        if spec.kind == InputKind.USER_INPUT:
            if isinstance(arg, ConstantArgument):
                replace[arg.name] = arg.value
                continue
            node = placeholders[arg.name]
            val = node.meta.get("val")
            args_manifest.append(dict(name=arg.name, kind="user_input",
                                      shape=[str(s) if not isinstance(s, int) else s for s in getattr(val, "shape", [])],
                                      dtype=str(getattr(val, "dtype", type(val).__name__))))
            arg_tensors.append(None)
            continue
        if spec.kind == InputKind.PARAMETER:
            t, kind = prog.state_dict[spec.target], "parameter"
        elif spec.kind == InputKind.BUFFER:
            if spec.persistent:
                t, kind = prog.state_dict[spec.target], "buffer"
            else:  # non-persistent buffers live in prog.constants (BERT position_ids)
                t, kind = prog.constants[spec.target], "buffer_nonpersistent"
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            t, kind = prog.constants[spec.target], "constant"
        else:
            raise NotImplementedError(f"input spec kind {spec.kind} ({spec})")
        t = t.detach()
        nbytes = t.numel() * t.element_size()
        inline = (kind == "constant" or (kind == "buffer_nonpersistent" and inline_nonpersistent_buffers)) \
            and nbytes <= inline_max_bytes
        if inline:
            replace[arg.name] = t
            inlined.append(dict(name=spec.target, kind=kind, shape=list(t.shape), dtype=str(t.dtype), bytes=nbytes))
        else:
            args_manifest.append(dict(name=spec.target, kind=kind, shape=list(t.shape),
                                      dtype=str(t.dtype), bytes=nbytes))
            arg_tensors.append(t)

    for node in list(g.nodes):
        if node.op == "placeholder" and node.name in replace:
            node.replace_all_uses_with(replace[node.name])  # literal import, like import_frozen_program
            g.erase_node(node)

    # Besides the user outputs, e.g. BUFFER_MUTATION (BatchNorm in train mode): extra func results.
    outputs = [dict(kind=spec.kind.name.lower(), name=getattr(spec.arg, "name", None), target=spec.target)
               for spec in sig.output_specs]
    mutated = sum(o["kind"] != "user_output" for o in outputs)
    outputs[mutated:mutated] = linalg_checks   # the infos follow the mutated values
    output_slots = _tensor_outputs_only(g, leading=mutated + len(linalg_checks))
    for graph in [g] + _while_loop_graphs(prog):
        _empty_results_as_empty_tensors(graph)
        _float_scalars_for_float_operands(graph)
    _widen_unsigned_operands(g)
    complex_outputs = importer_complex.fold_real_pairs(g)
    _refuse_what_cannot_lower(g)
    _refuse_data_dependent_output_sizes(g)

    ctx = ir.Context()
    torch_d.register_dialect(ctx)
    imp = FxImporter(context=ctx)
    imp._cc = _NamedLocCache(ctx, py_attr_tracker=imp._py_attr_tracker)
    if _while_loops(g):
        # torch-mlir imports a while_loop's cond / body graphs as private
        # functions first (its import_program does), then the loop as
        # torch.prim.Loop calling them: scf.while after the torch pipelines.
        imp._import_all_child_modules(g.owning_module, func_name)
    func_op = imp.import_stateless_graph(g, func_name=func_name)
    module = imp.module
    if name_args:  # self-describing signature: {cuvil.arg = "l1.weight", cuvil.kind = "parameter"}
        assert len(func_op.arguments) == len(args_manifest), (len(func_op.arguments), len(args_manifest))
        with ctx:
            func_op.arg_attrs = ir.ArrayAttr.get([
                ir.DictAttr.get({"cuvil.arg": ir.StringAttr.get(a["name"]),
                                 "cuvil.kind": ir.StringAttr.get(a["kind"])})
                for a in args_manifest])
    timings["import_torch"] = time.perf_counter() - t0

    text, lowered_timings = _lower_isolated(module, g, output_type, check_dialects, allowed_dialects, debug_info)
    timings.update(lowered_timings)

    manifest = dict(func=func_name, args=args_manifest, outputs=outputs,
                    out_spec=str(prog.call_spec.out_spec), inlined_constants=inlined,
                    output_dims=_output_dims(g), output_slots=output_slots,
                    output_dtypes=_output_dtypes(g, complex_outputs), random_seed=random_seed)
    return ImportResult(text=text, manifest=manifest, timings=timings, _arg_tensors=arg_tensors,
                        out_spec=prog.call_spec.out_spec)


def _lower_isolated(module, g, output_type: str, check_dialects: bool, allowed_dialects, debug_info: bool):
    """torch-mlir's two pipelines on the imported module, and the text Cuvil
    parses. torch-mlir's passes can crash on graphs they do not expect (a
    segfault in max_pool1d's or nonzero's lowering, a SIGFPE in unfold's):
    they run in a forked child (cuvil.isolation), and a crash is an error
    naming the model's op here, with a reproducer."""
    from . import isolation

    def lower():
        module.context.enable_multithreading(False)   # a fork has none of the parent's pool threads
        timings = {}
        foreign = None   # the ops outside upstream's dialects, once walked
        if output_type != "raw":
            t1 = time.perf_counter()
            _run_pipeline(module, TORCH_BACKEND_PIPELINE, "torch-backend", g)
            timings["torch_backend"] = time.perf_counter() - t1
        if output_type == "linalg-on-tensors":
            t1 = time.perf_counter()
            _run_pipeline(module, LINALG_PIPELINE, "linalg-on-tensors", g)
            timings["to_linalg"] = time.perf_counter() - t1
            foreign = _check_upstream_dialects(module, g, allowed_dialects) if check_dialects else None
        t1 = time.perf_counter()
        text = crossing_text(module, debug_info, foreign)
        timings["print"] = time.perf_counter() - t1
        return text, timings, dict(_LAST_TORCH_IR)

    torch_ir = module.operation.get_asm(enable_debug_info=True)
    try:
        text, timings, last_torch_ir = isolation.run(lower)
    except isolation.Crashed as err:
        from .diagnostics import save_reproducer
        from .tools import torch_mlir_opt
        path = save_reproducer(torch_ir, "torch")
        both = module_pipeline(TORCH_BACKEND + TO_LINALG)
        ops = sorted({str(n.target) for n in g.nodes if n.op == "call_function"})
        why = ("the process lowering it was killed (SIGKILL: most often out of memory)" if err.killed else
               f"torch-mlir crashed ({err.signal_name}) lowering this graph (a torch-mlir bug; its ops: "
               f"{', '.join(ops[:12])}{' ...' if len(ops) > 12 else ''}); Cuvil cannot compile it")
        raise CompileError("torch-backend", why,
                           reproducer=f"{torch_mlir_opt()} {path} --pass-pipeline='{both}'") from None
    _LAST_TORCH_IR.update(last_torch_ir)
    return text, timings


def import_model(model: nn.Module, args: Sequence[Any], kwargs: Optional[dict] = None, *,
                 dynamic_shapes=None, strict: bool = False,
                 extra_decompositions: Optional[dict] = None, in_spec=None, **kw) -> ImportResult:
    t0 = time.perf_counter()
    prog = export_program(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                          extra_decompositions=extra_decompositions, in_spec=in_spec)
    t_export = time.perf_counter() - t0
    user_input_dims = input_dims(prog)
    res = import_program_weights_as_args(prog, **kw)
    res.manifest["input_dims"] = user_input_dims
    res.timings = {"export+decompose": t_export, **res.timings}
    res.timings["total"] = time.perf_counter() - t0
    return res
