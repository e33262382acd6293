"""ONNX graph rewrites before torch-mlir's import: ops its ONNX conversion
lacks, written in ops it has, exactly as the ONNX spec's function bodies
define them, but with what the spec computes at run time from the input's
shape (reduction axes) made constants from the inferred shape.

    RMSNormalization (opset 23; LLM exports): torch-mlir has no conversion,
    and ONNX's own function body computes its axes with Shape/Range at run
    time, which torch-mlir cannot reduce over.
    SoftmaxCrossEntropyLoss: LogSoftmax + NegativeLogLikelihoodLoss (see
    _softmax_cross_entropy).
    Resize with `axes`: scales / sizes on every axis.
    RotaryEmbedding, SwiGLU: their function bodies (SCHEMA_EXPANDED).
    Dropout in inference mode: Identity. MatMul with a 1-D operand: 2-D.
    Compress by a constant condition: Gather. QLinearMatMul: MatMulInteger,
    rescaled and quantized. LpPool: AveragePool of |x|^p. LpNormalization:
    0 where the norm is 0. ReduceMin / ReduceMax before opset 13: TopK of 1.

And one for speed: a Conv's bias becomes an Add after it (see _conv_bias_as_add).
"""
from typing import Callable, Dict, List

import numpy as np


def _rank(proto, name: str):
    for v in [*proto.graph.value_info, *proto.graph.input, *proto.graph.output]:
        if v.name == name and v.type.tensor_type.HasField("shape"):
            return len(v.type.tensor_type.shape.dim)
    for t in proto.graph.initializer:
        if t.name == name:
            return len(t.dims)
    return None


def _elem_type(proto, name: str) -> int:
    for v in [*proto.graph.value_info, *proto.graph.input, *proto.graph.output]:
        if v.name == name:
            return v.type.tensor_type.elem_type
    return next((t.data_type for t in proto.graph.initializer if t.name == name), 0)


def _rms_normalization(proto, node) -> List:
    """Cast -> x*x -> ReduceMean(axis..rank-1) -> + eps -> Sqrt -> x / rms ->
    Cast back -> * scale (ONNX's RMSNormalization-23 function body)."""
    from onnx import TensorProto, helper, numpy_helper
    rank = _rank(proto, node.input[0])
    if rank is None:
        return []
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    axis = int(attrs.get("axis", -1)) % rank
    stash = int(attrs.get("stash_type", TensorProto.FLOAT))
    out_type = _elem_type(proto, node.output[0]) or _elem_type(proto, node.input[0])
    p = f"{node.name}__rms"
    proto.graph.initializer.extend([
        numpy_helper.from_array(np.arange(axis, rank, dtype=np.int64), f"{p}_axes"),
        numpy_helper.from_array(np.array(attrs.get("epsilon", 1e-5), dtype=helper.tensor_dtype_to_np_dtype(stash)),
                                f"{p}_eps")])
    return [
        helper.make_node("Cast", [node.input[0]], [f"{p}_x"], to=stash, name=f"{p}_cast"),
        helper.make_node("Mul", [f"{p}_x", f"{p}_x"], [f"{p}_sq"], name=f"{p}_square"),
        helper.make_node("ReduceMean", [f"{p}_sq", f"{p}_axes"], [f"{p}_mean"], keepdims=1, name=f"{p}_mean"),
        helper.make_node("Add", [f"{p}_mean", f"{p}_eps"], [f"{p}_meps"], name=f"{p}_add_eps"),
        helper.make_node("Sqrt", [f"{p}_meps"], [f"{p}_rms"], name=f"{p}_sqrt"),
        helper.make_node("Div", [f"{p}_x", f"{p}_rms"], [f"{p}_norm"], name=f"{p}_normalize"),
        helper.make_node("Cast", [f"{p}_norm"], [f"{p}_normt"], to=out_type, name=f"{p}_cast_back"),
        helper.make_node("Mul", [f"{p}_normt", node.input[1]], [node.output[0]], name=node.name),
    ]


def _conv_bias_as_add(proto, node) -> List:
    """Conv(X, W, B) as Conv(X, W) + B: the bias then fuses with the
    elementwise ops after the convolution (ReLU, a residual add) into one
    pass, as the BatchNorm of a PyTorch graph does; as the convolution's
    initial value it is a pass of its own (exporters fold BatchNorm into
    the convolution's weights and bias)."""
    from onnx import helper, numpy_helper
    if len(node.input) < 3 or not node.input[2]:
        return []
    bias = next((t for t in proto.graph.initializer if t.name == node.input[2]), None)
    rank = _rank(proto, node.output[0])
    if bias is None or rank is None or rank < 3 or len(bias.dims) != 1:
        return []
    p = f"{node.name}__bias"
    shaped = numpy_helper.to_array(bias).reshape((-1,) + (1,) * (rank - 2))
    proto.graph.initializer.append(numpy_helper.from_array(shaped, f"{p}_broadcast"))
    conv = helper.make_node("Conv", list(node.input[:2]), [f"{p}_conv"], name=f"{p}_conv")
    conv.attribute.extend(node.attribute)
    return [conv, helper.make_node("Add", [f"{p}_conv", f"{p}_broadcast"], [node.output[0]], name=node.name)]


def _softmax_cross_entropy(proto, node) -> List:
    """LogSoftmax over the class axis (1), then NegativeLogLikelihoodLoss
    with the same weights, reduction and ignore_index: the spec's function
    body without its reshapes. torch-mlir converts SoftmaxCrossEntropyLoss
    to aten.cross_entropy_loss, which it lowers for rank 2 only and gets
    wrong with weights (inf)."""
    from onnx import helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    log_prob = node.output[1] if len(node.output) > 1 and node.output[1] else f"{node.name}__log_prob"
    nll = {"reduction": attrs.get("reduction", b"mean")}
    if "ignore_index" in attrs:
        nll["ignore_index"] = attrs["ignore_index"]
    return [helper.make_node("LogSoftmax", [node.input[0]], [log_prob], axis=1, name=f"{node.name}__log_softmax"),
            helper.make_node("NegativeLogLikelihoodLoss", [log_prob, *node.input[1:]], [node.output[0]],
                             name=node.name, **nll)]


def _resize_on_all_axes(proto, node) -> List:
    """Resize with an `axes` attribute (opset 18): its scales or sizes
    spread over every axis (scale 1, or the input's size, on the others),
    the form torch-mlir converts. Needs them constant and, for sizes, the
    input's shape static."""
    from onnx import helper, numpy_helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    axes = attrs.get("axes")
    rank = _rank(proto, node.input[0])
    if not axes or rank is None or attrs.get("coordinate_transformation_mode") == b"tf_crop_and_resize":
        return []
    inits = {t.name: t for t in proto.graph.initializer}
    position = 2 if len(node.input) > 2 and node.input[2] in inits else 3
    if len(node.input) <= position or node.input[position] not in inits:
        return []
    given = numpy_helper.to_array(inits[node.input[position]])
    if position == 2:
        full = np.ones(rank, dtype=given.dtype)
    else:
        from .importer_onnx_folding import static_shapes
        dims = static_shapes(proto).get(node.input[0])
        if dims is None:
            return []
        full = np.array(dims, dtype=given.dtype)
    for axis, value in zip(axes, given):
        full[int(axis) % rank] = value
    name = f"{node.name}__{'scales' if position == 2 else 'sizes'}_all_axes"
    proto.graph.initializer.append(numpy_helper.from_array(full, name))
    inputs = list(node.input) + [""] * (4 - len(node.input))
    inputs[position] = name
    inputs[1] = ""   # roi: read by tf_crop_and_resize only
    resize = helper.make_node("Resize", inputs[:position + 1], list(node.output), name=node.name)
    resize.attribute.extend(a for a in node.attribute if a.name != "axes")
    return [resize]


def _const(proto, name: str):
    from onnx import numpy_helper
    return next((numpy_helper.to_array(t) for t in proto.graph.initializer if t.name == name), None)


def _dropout_in_inference(proto, node) -> List:
    """Dropout in inference mode (no training_mode input, or a constant
    false one; opset < 12 forms torch-mlir does not convert) is the identity.
    Its mask output, when asked for, keeps the node."""
    from onnx import helper
    training = node.input[2] if len(node.input) > 2 else ""
    if (training and (_const(proto, training) is None or bool(np.any(_const(proto, training))))) or \
            (len(node.output) > 1 and node.output[1]):
        return []
    return [helper.make_node("Identity", [node.input[0]], [node.output[0]], name=node.name)]


def _matmul_of_a_vector(proto, node) -> List:
    """MatMul with a 1-D operand (numpy's rule: a row vector on the left, a
    column on the right, that dim dropped after), which torch-mlir's aten.matmul
    lowering refuses beside a batched operand: Unsqueeze, MatMul, Squeeze."""
    from onnx import helper, numpy_helper
    ranks = [_rank(proto, n) for n in node.input[:2]]
    if None in ranks or 1 not in ranks or ranks == [1, 1]:
        return []
    p = f"{node.name}__vector"
    left = ranks[0] == 1
    # The unsqueezed axis, and the product's axis to drop: -2 for a row vector, -1 for a column.
    axis = -2 if left else -1
    proto.graph.initializer.append(numpy_helper.from_array(np.array([0 if left else 1], np.int64), f"{p}_axis"))
    proto.graph.initializer.append(numpy_helper.from_array(np.array([axis], np.int64), f"{p}_drop"))
    vector = node.input[0] if left else node.input[1]
    operands = [f"{p}_2d", node.input[1]] if left else [node.input[0], f"{p}_2d"]
    return [helper.make_node("Unsqueeze", [vector, f"{p}_axis"], [f"{p}_2d"], name=f"{p}_unsqueeze"),
            helper.make_node("MatMul", operands, [f"{p}_product"], name=f"{p}_matmul"),
            helper.make_node("Squeeze", [f"{p}_product", f"{p}_drop"], [node.output[0]], name=node.name)]


def _compress_by_a_constant(proto, node) -> List:
    """Compress with a constant condition (a graph input's is one per build:
    CompiledOnnxModule's value inputs): a Gather of the kept indices, of the
    flattened input when there is no axis."""
    from onnx import helper, numpy_helper
    condition = _const(proto, node.input[1])
    if condition is None:
        return []
    p = f"{node.name}__compress"
    proto.graph.initializer.append(numpy_helper.from_array(np.nonzero(condition.reshape(-1))[0].astype(np.int64),
                                                           f"{p}_kept"))
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if "axis" in attrs:
        return [helper.make_node("Gather", [node.input[0], f"{p}_kept"], [node.output[0]], axis=int(attrs["axis"]),
                                 name=node.name)]
    proto.graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), f"{p}_flat"))
    return [helper.make_node("Reshape", [node.input[0], f"{p}_flat"], [f"{p}_flattened"], name=f"{p}_flatten"),
            helper.make_node("Gather", [f"{p}_flattened", f"{p}_kept"], [node.output[0]], axis=0, name=node.name)]


def _qlinear_matmul(proto, node) -> List:
    """QLinearMatMul as its definition: the integer matmul of the operands
    less their zero points (MatMulInteger, exact in i32), rescaled by
    sa * sb and quantized with (sy, zy). torch-mlir's own conversion is
    wrong for batched operands."""
    from onnx import TensorProto, helper
    a, sa, za, b, sb, zb, sy, zy = node.input[:8]
    p = f"{node.name}__qlinear"
    return [helper.make_node("MatMulInteger", [a, b, za, zb], [f"{p}_acc"], name=f"{p}_matmul"),
            helper.make_node("Cast", [f"{p}_acc"], [f"{p}_accf"], to=TensorProto.FLOAT, name=f"{p}_to_float"),
            helper.make_node("Cast", [sa], [f"{p}_sa"], to=TensorProto.FLOAT, name=f"{p}_sa"),
            helper.make_node("Cast", [sb], [f"{p}_sb"], to=TensorProto.FLOAT, name=f"{p}_sb"),
            helper.make_node("Mul", [f"{p}_sa", f"{p}_sb"], [f"{p}_scale"], name=f"{p}_scale"),
            helper.make_node("Mul", [f"{p}_accf", f"{p}_scale"], [f"{p}_real"], name=f"{p}_rescale"),
            helper.make_node("Cast", [f"{p}_real"], [f"{p}_real_t"], to=_elem_type(proto, sy) or TensorProto.FLOAT,
                             name=f"{p}_to_scale_type"),
            helper.make_node("QuantizeLinear", [f"{p}_real_t", sy, zy], [node.output[0]], name=node.name)]


def _lp_pool(proto, node) -> List:
    """LpPool as (AveragePool(|x|^p) * window size)^(1/p), with the same
    pads, strides, dilations and auto_pad (padding counted, as zeros add
    nothing to the sum): the forms torch-mlir does not convert (dilations,
    SAME auto_pad) among them."""
    from onnx import helper, numpy_helper
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    kernel = attrs.get("kernel_shape")
    elem = _elem_type(proto, node.input[0])
    if not kernel or elem != 1 or (attrs.get("auto_pad", b"NOTSET") != b"NOTSET"
                                   and any(d != 1 for d in attrs.get("dilations", []))):
        return []   # (not float32; dilated SAME pooling is refused: importer_onnx)
    p_norm = float(attrs.get("p", 2))
    p = f"{node.name}__lp"
    proto.graph.initializer.extend([
        numpy_helper.from_array(np.array(p_norm, np.float32), f"{p}_p"),
        numpy_helper.from_array(np.array(1.0 / p_norm, np.float32), f"{p}_inv_p"),
        numpy_helper.from_array(np.array(float(np.prod(kernel)), np.float32), f"{p}_window")])
    pool = helper.make_node("AveragePool", [f"{p}_pow"], [f"{p}_mean"], name=f"{p}_mean", count_include_pad=1)
    pool.attribute.extend(a for a in node.attribute if a.name != "p")
    return [helper.make_node("Abs", [node.input[0]], [f"{p}_abs"], name=f"{p}_abs"),
            helper.make_node("Pow", [f"{p}_abs", f"{p}_p"], [f"{p}_pow"], name=f"{p}_pow"),
            pool,
            helper.make_node("Mul", [f"{p}_mean", f"{p}_window"], [f"{p}_sum"], name=f"{p}_sum"),
            helper.make_node("Pow", [f"{p}_sum", f"{p}_inv_p"], [node.output[0]], name=node.name)]


def _lp_normalization_of_zeros(proto, node) -> List:
    """LpNormalization where a slice's norm is 0: ONNX gives 0 (its
    reference computes x / norm with 0 / 0 taken as 0), torch-mlir's
    division NaN. Zero inputs give zero outputs (the only x of a slice of
    norm 0 are zeros)."""
    from onnx import helper, numpy_helper
    elem = _elem_type(proto, node.input[0])
    if not elem:
        return []
    p = f"{node.name}__lpn"
    zero = numpy_helper.from_array(np.zeros((), helper.tensor_dtype_to_np_dtype(elem)), f"{p}_zero")
    proto.graph.initializer.append(zero)
    norm = helper.make_node("LpNormalization", [node.input[0]], [f"{p}_raw"], name=f"{p}_raw")
    norm.attribute.extend(node.attribute)
    return [norm,
            helper.make_node("Equal", [node.input[0], f"{p}_zero"], [f"{p}_is_zero"], name=f"{p}_is_zero"),
            helper.make_node("Where", [f"{p}_is_zero", f"{p}_zero", f"{p}_raw"], [node.output[0]], name=node.name)]


def _min_max_before_opset_13(proto, node) -> List:
    """ReduceMin / ReduceMax of opsets < 13 (axes an attribute), which
    torch-mlir converts from opset 13 only, as TopK with k = 1 (smallest /
    largest; converted from opset 10): over one axis, or over all axes (no
    `axes`) of the flattened input."""
    from onnx import helper, numpy_helper
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
    rank = _rank(proto, node.input[0])
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    axes, keep = attrs.get("axes"), int(attrs.get("keepdims", 1))
    if opset >= 13 or opset < 11 or rank is None or (axes is not None and len(axes) != 1):
        return []
    largest = int(node.op_type == "ReduceMax")
    p = f"{node.name}__top1"
    proto.graph.initializer.append(numpy_helper.from_array(np.array([1], np.int64), f"{p}_k"))
    if axes is not None:
        axis = int(axes[0]) % rank
        top = helper.make_node("TopK", [node.input[0], f"{p}_k"], [node.output[0] if keep else f"{p}_kept",
                                                                  f"{p}_at"], axis=axis, largest=largest, name=f"{p}_top")
        if keep:
            return [top]
        return [top, helper.make_node("Squeeze", [f"{p}_kept"], [node.output[0]], axes=[axis], name=node.name)]
    proto.graph.initializer.extend([
        numpy_helper.from_array(np.array([-1], np.int64), f"{p}_flat"),
        numpy_helper.from_array(np.array([1] * rank if keep else [], np.int64), f"{p}_shape")])
    return [helper.make_node("Reshape", [node.input[0], f"{p}_flat"], [f"{p}_flattened"], name=f"{p}_flatten"),
            helper.make_node("TopK", [f"{p}_flattened", f"{p}_k"], [f"{p}_one", f"{p}_at"], axis=0,
                             largest=largest, name=f"{p}_top"),
            helper.make_node("Reshape", [f"{p}_one", f"{p}_shape"], [node.output[0]], name=node.name)]


#: op type -> its rewrite: (proto, node) -> the nodes replacing it ([] keeps it).
REWRITES: Dict[str, Callable] = {"RMSNormalization": _rms_normalization, "Conv": _conv_bias_as_add,
                                  "SoftmaxCrossEntropyLoss": _softmax_cross_entropy, "Resize": _resize_on_all_axes,
                                  "Dropout": _dropout_in_inference, "MatMul": _matmul_of_a_vector,
                                  "Compress": _compress_by_a_constant, "QLinearMatMul": _qlinear_matmul,
                                  "LpPool": _lp_pool, "LpNormalization": _lp_normalization_of_zeros,
                                  "ReduceMin": _min_max_before_opset_13, "ReduceMax": _min_max_before_opset_13}


#: Ops written as their ONNX function body (onnx.inliner) before folding:
#: torch-mlir has no conversion for them (or a crashing one), and their
#: bodies compute shapes at run time that importer_onnx_folding makes
#: constants (which torch-mlir's own expansion of the body, after the fold,
#: would not).
#: Attention only when its qk_matmul_output (4th output) is used: torch-mlir's
#: importer fails expanding that form itself (a TypeError).
SCHEMA_EXPANDED = {"RotaryEmbedding", "SwiGLU"}


def _expanded_here(node) -> bool:
    if node.domain not in ("", "ai.onnx"):
        return False
    return node.op_type in SCHEMA_EXPANDED or (
        node.op_type == "Attention" and len(node.output) > 3 and bool(node.output[3]))


def expand_schema_functions(proto):
    """proto with its SCHEMA_EXPANDED nodes replaced by their function
    bodies (the same proto when it has none)."""
    present = {n.op_type for n in proto.graph.node if _expanded_here(n)}
    if not present:
        return proto
    from onnx import helper, inliner
    typed = {v.name for v in [*proto.graph.input, *proto.graph.value_info, *proto.graph.output]}
    proto.graph.value_info.extend(   # the inliner types the bodies from these, not from initializers
        helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in proto.graph.initializer if t.name not in typed)
    return inliner.inline_selected_functions(proto, [("", op) for op in sorted(present)],
                                             inline_schema_functions=True)


def rewrite(proto) -> bool:
    """Rewrites the graph's nodes in REWRITES (domain ai.onnx) in place;
    whether anything changed (shape inference must then run again)."""
    new_nodes: List = []
    changed = False
    for node in proto.graph.node:
        rule = REWRITES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        replacement = rule(proto, node) if rule is not None else []
        if replacement:
            new_nodes.extend(replacement)
            changed = True
        else:
            new_nodes.append(node)
    if changed:
        del proto.graph.node[:]
        proto.graph.node.extend(new_nodes)
    return changed
