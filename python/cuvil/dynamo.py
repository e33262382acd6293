"""`torch.compile(model, backend="cuvil")`.

Registered through the `torch_dynamo_backends` entry point, so no import of
cuvil is needed. Each graph Dynamo captures is compiled with cuvil.compile
(same cache). A graph Cuvil cannot lower, or inputs it cannot take (dtype,
device, more than max_recompiles signatures), run eagerly after one warning
naming the op or the reason (signatures compiled before stay compiled),
unless `options={"strict": True}`, which raises instead.
Options: target, opt_level, num_threads, precision, strict, max_recompiles, schedule;
torch.compile's `mode=` is accepted (every mode builds the same code).
"""
import logging
import warnings

from .errors import CuvilError

log = logging.getLogger("cuvil")

_KNOWN_OPTIONS = {"target", "opt_level", "num_threads", "precision", "strict", "max_recompiles", "schedule"}
# torch.compile(mode=...) passes its mode to the backend as a keyword. Cuvil
# builds the same code for each of them (its schedules take no search yet);
# "reduce-overhead" and the no-cudagraphs variant are about CUDA graphs.
_TORCH_MODES = {None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}


def cuvil_backend(gm, example_inputs, options=None, mode=None, **kwargs):
    from .compiler import CompiledModule

    if mode not in _TORCH_MODES:
        raise ValueError(f"unknown torch.compile mode {mode!r} for the cuvil backend; "
                         f"known: {sorted(m for m in _TORCH_MODES if m)}")
    options = dict(options or {}, **kwargs)
    unknown = set(options) - _KNOWN_OPTIONS
    if unknown:
        raise ValueError(f"unknown cuvil backend option(s) {sorted(unknown)}; "
                         f"known: {sorted(_KNOWN_OPTIONS)}")
    strict = bool(options.pop("strict", False))
    max_recompiles = int(options.pop("max_recompiles", 8))
    schedule = options.pop("schedule", None)
    if schedule is not None:
        options["schedule"] = tuple(schedule)

    def eager(err):
        if strict:
            raise err
        op = getattr(err, "op", None)
        what = f"unsupported op {op}" if op else str(err).splitlines()[0]
        warnings.warn(f"cuvil: running a graph eagerly: {what}", RuntimeWarning, stacklevel=3)

    if options.get("precision") == "int8":
        raise ValueError("precision='int8' (static) needs calibration batches, which a torch.compile "
                         "backend does not get: use precision='int8-dynamic', or quantize with PT2E "
                         "first (cuvil.compile(convert_pt2e(...)))")
    if options.get("precision") in ("int8-weight", "int4-weight"):
        raise ValueError(f"precision={options['precision']!r} rewrites the model's nn.Linear layers, which a "
                         "torch.compile backend sees only as graph ops: quantize the model first, "
                         "torch.compile(cuvil.quantize_weights(model, bits=8), backend='cuvil')")
    try:
        graph, tensor_positions, dynamic_dims = _tensor_only(gm)
        if options.get("precision") == "int8-dynamic":   # quantized from this graph's inputs
            import torch
            options["example_inputs"] = [a for a in example_inputs if isinstance(a, torch.Tensor)]
        compiled = CompiledModule(graph, dynamic_dims=dynamic_dims, **options)
    except CuvilError as err:   # a graph Cuvil cannot take: Dynamo runs it as is
        eager(err)
        return gm
    if dynamic_dims:
        log.info("cuvil: graph compiled with dynamic dims %s", dynamic_dims)
    eager_signatures = set()   # inputs this graph runs eagerly for (each warned about once)

    def run(*args):
        tensors = [args[i] for i in tensor_positions]
        try:
            key = compiled.signature_key(tensors)
        except (TypeError, ValueError) as err:   # inputs Cuvil cannot take (dtype, device)
            eager(err)
            return gm(*args)
        if key in eager_signatures:
            return gm(*args)
        try:
            if not compiled.is_compiled_for(key) and compiled.num_signatures >= max_recompiles:
                raise CuvilError(f"more than {max_recompiles} input signatures for one graph")
            # Dynamo graphs return a tuple/list; it keeps that structure.
            return compiled(*tensors)
        except CuvilError as err:
            eager(err)
            eager_signatures.add(key)   # the signatures compiled before keep running compiled
            return gm(*args)

    return run


def _tensor_only(gm):
    """With dynamic shapes Dynamo passes symbolic sizes as extra int inputs
    (`s0`, ...). Cuvil compiles a wrapper taking only the tensors, which reads
    each size from the tensor dim it names, and marks those dims dynamic."""
    import torch

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    values = [n.meta.get("example_value", n.meta.get("val")) for n in placeholders]
    tensor_positions = [i for i, v in enumerate(values) if isinstance(v, torch.Tensor)]
    if len(tensor_positions) == len(values):
        return gm, tensor_positions, None
    where, dynamic = {}, {}
    for t_index, pos in enumerate(tensor_positions):
        for d, size in enumerate(values[pos].shape):
            # Only sizes that are still a free symbol (Dynamo may have
            # specialised others to a number).
            if isinstance(size, torch.SymInt) and getattr(size.node.expr, "is_Symbol", False):
                where.setdefault(str(size), (t_index, d))
                dynamic.setdefault(t_index, {})[d] = _symbol_name(size)
    sources = {}
    for i, v in enumerate(values):
        if i in tensor_positions:
            continue
        if str(v) not in where:
            raise CuvilError(f"graph input {placeholders[i].name} = {v} is not the size of a tensor dim")
        sources[i] = where[str(v)]
    return _sizes_from_tensors(gm, sources, tensor_positions), tensor_positions, dynamic


def _symbol_name(size) -> str:
    """A valid torch.export Dim name for a Dynamo size symbol like s33."""
    import re
    return "dyn_" + re.sub(r"\W", "_", str(size))


def _sizes_from_tensors(gm, sources, tensor_positions):
    """A copy of `gm` whose int inputs are replaced by sym_size reads of the
    tensor dims they stand for."""
    import copy

    import torch

    graph = copy.deepcopy(gm.graph)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    with graph.inserting_after(placeholders[-1]):
        for pos, (t_index, d) in sources.items():
            tensor = placeholders[tensor_positions[t_index]]
            size = graph.call_function(torch.ops.aten.sym_size.int, (tensor, d))
            placeholders[pos].replace_all_uses_with(size)
    for pos in sources:
        graph.erase_node(placeholders[pos])
    graph.lint()
    return torch.fx.GraphModule(gm, graph)



