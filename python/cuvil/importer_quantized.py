"""Import of quantized graphs: PT2E's quantize / dequantize pairs -> integer ops.

A model from PyTorch's PT2E flow (`prepare_pt2e`, calibrate, `convert_pt2e`;
torchao's X86InductorQuantizer) is an FX graph in which each quantized
operator reads `dequantize(q)` values: uint8 per-tensor activations, int8
per-channel weights, all computed in float. This module rewrites such a graph,
before torch.export traces it, so that the integer computation is in the IR:

    linear(dq(qa; sa, za), dq(qw; sw, 0), b)
 -> (_int_mm(qa, qw^T) - za * colsum(qw)).float() * (sa * sw) + b

`_int_mm` is an int8 x int8 -> int32 matmul in torch-mlir's lowering (a
linalg.matmul with i8 operands and an i32 accumulator, which the raise step
keeps as it is: the schedules then pick the host's integer dot products).
The integer sum is exact; the float result differs from the reference's
float sum by roundings only. `colsum(qw)` and `sa * sw` read weights only:
the prepack split computes them once.

uint8 activations become int8 ones with the zero point moved by -128
(`q - 128` with `za - 128`, exactly the same values after dequantization):
torch-mlir lowers uint8 tensors as signed i8 and gets their arithmetic wrong.

Convolutions (groups 1) are written as convolutions of int32 operands,
which the raise step narrows to int8 (see int8_conv2d). A max pool between
a dequantize and a quantize with the same scale and zero point pools the
int8 values themselves. What is not an
integer pattern here (an `add` of two dequantized values, a grouped conv, a
weight with a zero point) keeps PT2E's float meaning: its
quantize / dequantize ops are decomposed into the float ops PyTorch itself
runs, with a log line naming the operator that runs in float.
"""
from __future__ import annotations

import functools
import logging
from typing import Dict, Optional

import torch

log = logging.getLogger("cuvil.quantized")

_qd = None


def _ops():
    """torch.ops.quantized_decomposed (registered by torch.ao's _decomposed module)."""
    global _qd
    if _qd is None:
        import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers the ops)
        _qd = torch.ops.quantized_decomposed
    return _qd


@functools.lru_cache(maxsize=None)
def _targets(*names):
    """Every overload of the named quantized_decomposed ops (asked per node: cached)."""
    qd = _ops()
    out = set()
    for name in names:
        packet = getattr(qd, name)
        out.update(getattr(packet, o) for o in packet.overloads())
    return frozenset(out)


def is_quantized_graph(model) -> bool:
    """Whether `model` is an FX graph with PT2E quantize / dequantize ops."""
    if not isinstance(model, torch.fx.GraphModule):
        return False
    return any(n.op == "call_function" and "quantized_decomposed" in str(n.target) for n in model.graph.nodes)


def in_eval_mode(model):
    """model.eval(); an exported GraphModule (PT2E's) refuses eval(): torchao's
    own switch then sets its dropout and batch-norm ops to inference."""
    try:
        return model.eval()
    except NotImplementedError:
        try:
            from torchao.quantization.pt2e import move_exported_model_to_eval
        except ImportError:
            return model
        return move_exported_model_to_eval(model)


def decompositions() -> Dict:
    """The float meaning of every quantize / dequantize op (PyTorch's own
    implementations), for the export's decomposition table."""
    from torch.ao.quantization.fx import _decomposed as impl
    qd = _ops()
    table = {}
    for name in ("quantize_per_tensor", "dequantize_per_tensor", "quantize_per_channel",
                 "dequantize_per_channel", "choose_qparams", "choose_qparams_symmetric"):
        packet = getattr(qd, name)
        for overload in packet.overloads():
            fn = getattr(impl, name if overload == "default" else f"{name}_{overload}", None)
            if fn is not None:
                table[getattr(packet, overload)] = _contiguous_results(fn)
    table[qd.choose_qparams.tensor] = choose_qparams_per_tensor
    return table


def choose_qparams_per_tensor(input, qmin: int, qmax: int, eps: float, dtype):
    """quantized_decomposed.choose_qparams.tensor (the run-time activation
    scale and zero point of PT2E's dynamic quantization) without its
    data-dependent branches: torch.ao's implementation converts values to
    Python numbers (`float(scale)`), which an export cannot trace. The same
    arithmetic: scale in f32 from the range including 0, then f64."""
    low, high = torch.aminmax(input)
    low, high = torch.clamp(low, max=0.0), torch.clamp(high, min=0.0)
    scale = torch.clamp((high - low) / float(qmax - qmin), min=eps)
    zero = torch.clamp(qmin - torch.round(low / scale).to(torch.int32), qmin, qmax)
    return scale.reshape(1).to(torch.float64), zero.reshape(1).to(torch.int64)


def _contiguous_results(fn):
    """The op's results as contiguous tensors. Their Meta functions (which
    the export traced the model's views with) give contiguous results for
    inputs that are not (a transposed attention output), the float ops of
    the implementation give strided ones: a later `view` would then fail."""
    def decomposition(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(o.contiguous() for o in out)
        return out.contiguous()
    decomposition.__name__ = fn.__name__
    return decomposition


# -- the rewrite ------------------------------------------------------------------

def _attr(gm, node):
    """The tensor a get_attr node reads, or None."""
    if not isinstance(node, torch.fx.Node) or node.op != "get_attr":
        return None
    obj = gm
    for part in node.target.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, torch.Tensor) else None


def _shift_uint8_activations(gm) -> int:
    """quantize_per_tensor(x, s, z, 0, 255, uint8) -> (x, s, z - 128, -128, 127, int8),
    and the same for every dequantize of it. Returns how many were moved."""
    quantize = _targets("quantize_per_tensor")
    dequantize = _targets("dequantize_per_tensor")
    g = gm.graph
    moved = 0
    for node in list(g.nodes):
        if node.op != "call_function" or node.target not in quantize or len(node.args) < 6:
            continue
        x, scale, zero, qmin, qmax, dtype = node.args[:6]
        if dtype is not torch.uint8 or (qmin, qmax) != (0, 255):
            continue
        users = list(node.users)
        if not all(u.target in dequantize and u.args[0] is node and tuple(u.args[3:6]) == (0, 255, torch.uint8)
                   for u in users):
            # A uint8 value read by something else stays uint8: what torch-mlir
            # cannot compute on it is refused by name at import.
            log.info("cuvil: %s stays uint8: read by other ops than dequantize", node.name)
            continue

        def shifted(z, before):
            if isinstance(z, int):
                return z - 128
            with g.inserting_before(before):
                return g.call_function(torch.ops.aten.sub.Tensor, (z, 128))
        node.args = (x, scale, shifted(zero, node), -128, 127, torch.int8, *node.args[6:])
        for u in users:
            u.args = (node, u.args[1], shifted(u.args[2], u), -128, 127, torch.int8, *u.args[6:])
        moved += 1
    return moved


def _activation(node) -> Optional[tuple]:
    """(q, scale, zero) of an int8 per-tensor dequantize, else None."""
    if not isinstance(node, torch.fx.Node) or node.target not in _targets("dequantize_per_tensor") \
            or len(node.args) < 6:
        return None
    q, scale, zero, qmin, qmax, dtype = node.args[:6]
    out_dtype = node.args[6] if len(node.args) > 6 else node.kwargs.get("out_dtype")
    if dtype is not torch.int8 or out_dtype not in (None, torch.float32):
        return None
    return q, scale, zero


def _weight(gm, node, rank: int) -> Optional[tuple]:
    """(qw, scales or scale) of a symmetric int8 weight dequantize (per output
    channel, axis 0, or per tensor) over a stored int8 tensor of `rank`, else None."""
    if not isinstance(node, torch.fx.Node):
        return None
    if node.target in _targets("dequantize_per_channel"):
        if len(node.args) < 7:
            return None
        qw, scales, zeros, axis, qmin, qmax, dtype = node.args[:7]
        zero_values = _attr(gm, zeros) if zeros is not None else None
        if axis != 0 or dtype is not torch.int8 or (zeros is not None and (
                zero_values is None or bool(zero_values.ne(0).any()))):
            return None
    elif node.target in _targets("dequantize_per_tensor"):
        if len(node.args) < 6:
            return None
        qw, scales, zero, qmin, qmax, dtype = node.args[:6]
        if dtype is not torch.int8 or zero != 0:
            return None
    else:
        return None
    stored = _attr(gm, qw)
    if stored is None or stored.dtype is not torch.int8 or stored.dim() != rank:
        return None
    return qw, scales


def int8_linear(q, scale, zero, qw, w_scale, bias):
    """linear(dequantize(q), dequantize(qw), bias) computed in integers:
    q int8 [..., K] with a per-tensor scale and zero point (numbers, or
    tensors where the activation is quantized at run time), qw int8 [N, K]
    with a symmetric per-channel (or per-tensor) scale. torch.export traces
    it into the graph in place of the float linear."""
    rows = q.reshape(-1, q.shape[-1])
    out = _int8_rows_times_weight(rows, scale, zero, qw, w_scale, bias)
    return out.reshape(*q.shape[:-1], qw.shape[0])


def int8_conv2d(q, scale, zero, qw, w_scale, bias, stride, padding, dilation):
    """conv2d(dequantize(q), dequantize(qw), bias) (groups = 1) computed in
    integers: q int8 [N, C, H, W] with a per-tensor scale and a zero point
    that is a number, qw int8 [Cout, C, KH, KW] with a symmetric
    per-output-channel scale. The padding is the zero point, which
    dequantizes to 0.0 as the float conv's zeros. PyTorch has no int8 conv:
    it is written on int32 operands, which torch-mlir accumulates in i64 and
    truncates; the raise step (cuvil-raise-linalg) makes that the int8 conv
    with an i32 accumulator, the conv rewrites an int8 im2col matmul."""
    if q.dim() == 3:   # an unbatched [C, H, W] input
        return int8_conv2d(q.unsqueeze(0), scale, zero, qw, w_scale, bias, stride, padding, dilation)[0]
    (ph, pw) = padding
    padded = torch.nn.functional.pad(q, (pw, pw, ph, ph), value=zero) if ph or pw else q
    acc = torch.ops.aten.convolution(padded.to(torch.int32), qw.to(torch.int32), None, list(stride), [0, 0],
                                     list(dilation), False, [0, 0], 1)
    if not (isinstance(zero, int) and zero == 0):
        acc = acc - (qw.sum((1, 2, 3), dtype=torch.int32) * zero).to(torch.int32).reshape(1, -1, 1, 1)
    out = acc.to(torch.float32) * (_as_f32(w_scale) * _as_f32(scale)).reshape(1, -1, 1, 1) \
        if isinstance(w_scale, torch.Tensor) else acc.to(torch.float32) * (w_scale * _as_f32(scale))
    return out + bias.reshape(1, -1, 1, 1) if bias is not None else out


def _as_f32(v):
    return v.to(torch.float32) if isinstance(v, torch.Tensor) else v


def _int8_rows_times_weight(rows, scale, zero, qw, w_scale, bias):
    """dequantize(rows) @ dequantize(qw)^T + bias for int8 rows [M, K] (scale,
    zero point) and int8 qw [N, K] (scale per row of qw)."""
    acc = torch._int_mm(rows, qw.t())
    if not (isinstance(zero, int) and zero == 0):
        # sum_k (a - z) w = sum_k a w - z * sum_k w: the weight's column sums
        # are a weight-only value (computed once, in main_prepack).
        acc = acc - (qw.sum(1, dtype=torch.int32) * zero).to(torch.int32)
    out = acc.to(torch.float32) * (_as_f32(w_scale) * _as_f32(scale))
    return out + bias if bias is not None else out


def _integer_linear(gm, node) -> bool:
    """linear(dq(a), dq(w), b) -> int8_linear, when a and w are int8 forms it takes."""
    args = list(node.args) + [None] * (3 - len(node.args))
    act, weight = _activation(args[0]), _weight(gm, args[1], rank=2)
    bias = args[2] if args[2] is not None else node.kwargs.get("bias")
    if act is None or weight is None or _is_dequantized(bias):
        return False
    (q, scale, zero), (qw, w_scale) = act, weight
    _replace(gm.graph, node, int8_linear, (q, scale, zero, qw, w_scale, bias))
    return True


def _integer_conv2d(gm, node) -> bool:
    """conv2d(dq(a), dq(w), b, stride, padding, dilation, groups = 1) -> int8_conv2d."""
    defaults = [None, None, None, [1, 1], [0, 0], [1, 1], 1]
    args = list(node.args) + defaults[len(node.args):]
    x, w, bias, stride, padding, dilation, groups = args
    act, weight = _activation(x), _weight(gm, w, rank=4)
    pairs = [list(v) * 2 if len(v) == 1 else list(v) for v in (stride, padding, dilation)
             if isinstance(v, (list, tuple))]
    if act is None or weight is None or groups != 1 or len(pairs) != 3 or _is_dequantized(bias) \
            or not isinstance(act[2], int) or node.kwargs:
        return False
    (q, scale, zero), (qw, w_scale) = act, weight
    _replace(gm.graph, node, int8_conv2d, (q, scale, zero, qw, w_scale, bias, *pairs))
    return True


def _integer_max_pool2d(gm, node) -> bool:
    """quantize(max_pool2d(dq(q)), s, z) with dq's own s and z -> max_pool2d(q).
    Dequantizing is increasing (s > 0), so the max commutes with it, and
    quantize(dequantize(v)) is v: the pool runs on int8 (a quarter of the
    bytes; ResNet's stem pool read 3.2 MB of dequantized floats), its padding
    the int8 minimum where the float pool's is -inf (a window always holds
    one element of the input)."""
    act = _activation(node.args[0])
    users = list(node.users)
    if act is None or len(users) != 1 or node.kwargs:
        return False
    (q, scale, zero), requantize = act, users[0]
    if requantize.target not in _targets("quantize_per_tensor") or len(requantize.args) < 6 \
            or requantize.args[0] is not node or not isinstance(scale, float) or scale <= 0 \
            or tuple(requantize.args[1:6]) != (scale, zero, -128, 127, torch.int8):
        return False
    with gm.graph.inserting_before(node):
        pooled = gm.graph.call_function(node.target, (q, *node.args[1:]))
    requantize.replace_all_uses_with(pooled)
    gm.graph.erase_node(requantize)
    gm.graph.erase_node(node)
    return True


def _replace(g, node, fn, args) -> None:
    with g.inserting_before(node):
        out = g.call_function(fn, tuple(args))
    node.replace_all_uses_with(out)
    g.erase_node(node)


#: The operators with an integer form here, and what writes it.
_INTEGER_FORMS = {torch.ops.aten.linear.default: _integer_linear,
                  torch.ops.aten.conv2d.default: _integer_conv2d,
                  torch.ops.aten.max_pool2d.default: _integer_max_pool2d}


def rewrite(gm) -> torch.fx.GraphModule:
    """A copy of the PT2E GraphModule `gm` (sharing its tensors) with the integer patterns written
    out; everything else as it was."""
    gm = torch.fx.GraphModule(gm, _copy_graph(gm.graph))
    moved = _shift_uint8_activations(gm)
    integer, floating = 0, []
    dequantize = _targets("dequantize_per_tensor", "dequantize_per_channel")
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not any(a.target in dequantize for a in node.all_input_nodes):
            continue
        form = _INTEGER_FORMS.get(node.target)
        if form is not None and form(gm, node):
            integer += 1
        else:
            floating.append(node)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    from .importer import _aten_name
    for node in floating:
        log.info("cuvil: %s (%s) reads dequantized values and runs in float: Cuvil has no integer form "
                 "of it yet", _aten_name(node), node.name)
    log.debug("cuvil: quantized graph: %d integer linear / conv / pooling layers, %d activations moved to int8, "
              "%d operators in float", integer, moved, len(floating))
    return gm


def _is_dequantized(node) -> bool:
    return isinstance(node, torch.fx.Node) and node.target in _targets("dequantize_per_tensor",
                                                                       "dequantize_per_channel")


def _copy_graph(graph):
    """A copy of the graph with its code generator: an exported module's
    flattens its inputs and rebuilds its outputs (pytree specs)."""
    new = torch.fx.Graph()
    new._codegen = graph._codegen
    out = new.graph_copy(graph, {})
    new.output(out)
    return new

