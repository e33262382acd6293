"""QDQ int8 models on the int8 kernels: a rewrite of the ONNX graph before
torch-mlir's import.

A QDQ model (onnxruntime's `quantize_static(..., quant_format=QDQ)`) spells
an int8 layer as float ops between quantize / dequantize pairs:

    y = MatMul(DequantizeLinear(xq; sx, zx), DequantizeLinear(wq; sw, 0))

torch-mlir converts that as written, in float. This module writes it as
the integer computation it stands for (the PT2E rewrite of
cuvil.importer_quantized, in ONNX ops):

    acc = MatMulInteger(xq, wq)                       # i8 x i8 -> i32: the int8 kernels
    y   = Cast(acc - zx * colsum(wq), float) * (sx * sw)

which torch-mlir lowers to a `linalg.matmul` of i8 operands with an i32
accumulator (what the schedules give to the host's VNNI / AMX dot products).
`colsum(wq)` and `sx * sw` read weights only: the prepack split computes
them once. The integer sum is exact, so the result differs from the float
reference by float roundings only.

Taken: MatMul, and Gemm (transA 0, beta 1, any alpha / transB), whose first
operand is a per-tensor dequantization of int8 (or of uint8 that a
QuantizeLinear made: quantized again to int8 with the zero point moved by
-128, the same values), and whose second is a dequantization of an int8
weight with zero point 0, per tensor or per output channel, or another
such activation (attention's q k^T and p v: then the zero points' terms
`- zb * rowsum(x) + depth * zx * zb` are added too). Everything else
keeps its float meaning (dequantized), with a log line.
"""
import logging
from typing import List, Optional

import numpy as np

log = logging.getLogger("cuvil")

INT8, UINT8, INT32, FLOAT = 3, 2, 6, 1


class _Graph:
    """What the rewrite reads of the graph: producers, constants, types."""

    def __init__(self, proto):
        from onnx import numpy_helper
        graph = proto.graph
        self.producer = {o: n for n in graph.node for o in n.output}
        self.consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer if len(t.dims) <= 1}
        self.types = {v.name: v.type.tensor_type.elem_type
                      for v in [*graph.input, *graph.value_info, *graph.output]}
        self.types.update({t.name: t.data_type for t in graph.initializer})
        self.dims = {v.name: [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
                     for v in [*graph.input, *graph.value_info, *graph.output]
                     if v.type.tensor_type.HasField("shape")}
        self.dims.update({t.name: list(t.dims) for t in graph.initializer})
        self.ranks = {name: len(dims) for name, dims in self.dims.items()}

    def dequantized(self, name: str):
        """(quantized value, scale, zero point or "", axis) of a
        DequantizeLinear producing `name`; None otherwise."""
        node = self.producer.get(name)
        if node is None or node.op_type != "DequantizeLinear" or node.domain not in ("", "ai.onnx"):
            return None
        attrs = {a.name: a for a in node.attribute}
        if "block_size" in attrs and attrs["block_size"].i:
            return None
        axis = attrs["axis"].i if "axis" in attrs else 1
        zero = node.input[2] if len(node.input) > 2 else ""
        return node.input[0], node.input[1], zero, axis


def _scalar(g: _Graph, name: str) -> Optional[float]:
    value = g.consts.get(name)
    return None if value is None or value.size != 1 else float(value.reshape(()))


def _activation(g: _Graph, name: str, p: str, new: List):
    """The int8 tensor and its zero point (int) behind a per-tensor
    dequantized activation; None when it is not one."""
    from onnx import helper, numpy_helper
    dq = g.dequantized(name)
    if dq is None:
        return None
    q, scale, zero, _ = dq
    z = 0.0 if not zero else _scalar(g, zero)
    if z is None or _scalar(g, scale) is None:
        return None
    if g.types.get(q) == INT8:
        return q, int(z), scale
    quantize = g.producer.get(q)
    if g.types.get(q) != UINT8 or quantize is None or quantize.op_type != "QuantizeLinear":
        return None
    # The QuantizeLinear's own zero point must be the one dequantized with
    # (a QDQ pair's), and its scale one per tensor: then the int8 values below
    # are its uint8 ones less 128.
    q_zero = _scalar(g, quantize.input[2]) if len(quantize.input) > 2 and quantize.input[2] else 0.0
    if q_zero != z or _scalar(g, quantize.input[1]) is None:
        return None
    # uint8 q = clamp(round(x / s) + z, 0, 255); with z - 128 into int8 it is q - 128 exactly.
    shifted = f"{p}_zero_point_s8"
    g_new = numpy_helper.from_array(np.array(int(z) - 128, dtype=np.int8), shifted)
    new.append(("init", g_new))
    new.append(("node", helper.make_node("QuantizeLinear", [quantize.input[0], quantize.input[1], shifted],
                                         [f"{p}_x_s8"], name=f"{p}_quantize_s8")))
    return f"{p}_x_s8", int(z) - 128, scale


def _weight(g: _Graph, name: str, out_axis: int):
    """The int8 weight and its scale behind a dequantized weight with zero
    point 0, per tensor or per output channel (`out_axis`); None otherwise."""
    dq = g.dequantized(name)
    if dq is None:
        return None
    w, scale, zero, axis = dq
    if g.types.get(w) != INT8 or g.ranks.get(w) != 2:
        return None
    if zero and (zero not in g.consts or np.any(g.consts[zero] != 0)):
        return None
    scale_value = g.consts.get(scale)
    if scale_value is None:
        return None
    if scale_value.size > 1 and axis % 2 != out_axis:
        return None
    return w, scale


def _scaled_sum(value: str, axis: int, factor: int, name: str, new: List) -> str:
    """factor * the i32 sum of the int8 `value` over `axis` (kept)."""
    from onnx import helper, numpy_helper
    new.append(("init", numpy_helper.from_array(np.array([axis], dtype=np.int64), f"{name}_axis")))
    new.append(("init", numpy_helper.from_array(np.array(factor, dtype=np.int32), f"{name}_factor")))
    new.append(("node", helper.make_node("Cast", [value], [f"{name}_i32"], to=INT32, name=f"{name}_widen")))
    new.append(("node", helper.make_node("ReduceSum", [f"{name}_i32", f"{name}_axis"], [f"{name}_sum"],
                                         keepdims=1, name=f"{name}_sum")))
    new.append(("node", helper.make_node("Mul", [f"{name}_sum", f"{name}_factor"], [name], name=name)))
    return name


def _rewrite(g: _Graph, node, new: List) -> bool:
    """Appends the integer form of `node` to `new`; whether it could."""
    from onnx import helper, numpy_helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Gemm":
        if attrs.get("transA", 0) or attrs.get("beta", 1.0) != 1.0:
            return False
        trans_b = bool(attrs.get("transB", 0))
    elif node.op_type != "MatMul":
        return False
    else:
        trans_b = False
    p = f"{node.name}__int8"
    staged: List = []
    x = _activation(g, node.input[0], f"{p}_a", staged)
    w = _weight(g, node.input[1], 0 if trans_b else 1)
    if x is None:
        return False
    (xq, zx, sx) = x
    zb = 0
    if w is not None:
        b, sb = w
    else:   # activation x activation (attention's q k^T, p v): both per tensor
        other = _activation(g, node.input[1], f"{p}_b", staged) if not trans_b else None
        if other is None:
            return False
        b, zb, sb = other
    depth = g.dims.get(xq, [None])[-1] if xq in g.dims else g.dims.get(node.input[0], [None])[-1]
    if zx and zb and not isinstance(depth, int):
        return False
    new.extend(staged)
    if trans_b:   # a weight-only transpose: computed once, in main_prepack
        new.append(("node", helper.make_node("Transpose", [b], [f"{p}_w_t"], perm=[1, 0], name=f"{p}_transpose")))
        b = f"{p}_w_t"
    new.append(("node", helper.make_node("MatMulInteger", [xq, b], [f"{p}_acc"], name=f"{p}_matmul")))
    acc = f"{p}_acc"
    # sum((x - zx)(b - zb)) = sum(x b) - zx colsum(b) - zb rowsum(x) + depth zx zb
    corrections = []
    if zx:   # colsum(b) of a weight reads weights only: main_prepack computes it
        corrections.append(_scaled_sum(b, -2, zx, f"{p}_colsum", new))
    if zb:
        corrections.append(_scaled_sum(xq, -1, zb, f"{p}_rowsum", new))
    for i, correction in enumerate(corrections):
        new.append(("node", helper.make_node("Sub", [acc, correction], [f"{p}_acc_{i}"], name=f"{p}_sub_{i}")))
        acc = f"{p}_acc_{i}"
    if zx and zb:
        new.append(("init", numpy_helper.from_array(np.array(depth * zx * zb, dtype=np.int32), f"{p}_zz")))
        new.append(("node", helper.make_node("Add", [acc, f"{p}_zz"], [f"{p}_acc_zz"], name=f"{p}_add_zz")))
        acc = f"{p}_acc_zz"
    new.append(("node", helper.make_node("Cast", [acc], [f"{p}_accf"], to=FLOAT, name=f"{p}_to_float")))
    new.append(("node", helper.make_node("Mul", [sx, sb], [f"{p}_scale"], name=f"{p}_scale")))
    scale = f"{p}_scale"
    alpha = float(attrs.get("alpha", 1.0))
    if alpha != 1.0:
        new.append(("init", numpy_helper.from_array(np.array(alpha, dtype=np.float32), f"{p}_alpha")))
        new.append(("node", helper.make_node("Mul", [scale, f"{p}_alpha"], [f"{p}_scale_alpha"],
                                             name=f"{p}_alpha")))
        scale = f"{p}_scale_alpha"
    has_bias = node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]
    product = f"{p}_product" if has_bias else node.output[0]
    new.append(("node", helper.make_node("Mul", [f"{p}_accf", scale], [product], name=f"{p}_rescale")))
    if has_bias:
        new.append(("node", helper.make_node("Add", [product, node.input[2]], [node.output[0]], name=node.name)))
    return True


def int8_matmuls(proto) -> int:
    """Rewrites the main graph's QDQ matmuls in place (after shape
    inference: it reads element types); how many."""
    g = _Graph(proto)
    nodes: List = []
    inits: List = []
    count = 0
    for node in proto.graph.node:
        new: List = []
        if node.domain in ("", "ai.onnx") and node.op_type in ("MatMul", "Gemm") and _rewrite(g, node, new):
            count += 1
            nodes.extend(item for kind, item in new if kind == "node")
            inits.extend(item for kind, item in new if kind == "init")
        else:
            if node.op_type in ("MatMul", "Gemm") and g.dequantized(node.input[0]) is not None:
                log.info("cuvil: %s %r runs in float (dequantized): not a per-tensor int8 activation "
                         "times an int8 weight with zero point 0", node.op_type, node.name)
            nodes.append(node)
    if count:
        from .importer_onnx_folding import without_unused
        nodes = without_unused(nodes, {o.name for o in proto.graph.output})
        del proto.graph.node[:]
        proto.graph.node.extend(nodes)
        proto.graph.initializer.extend(inits)
        log.info("cuvil: %d QDQ matmul(s) run on int8 kernels", count)
    return count

