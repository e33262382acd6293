"""Constant folding of an ONNX graph before torch-mlir's import.

Exporters and ONNX's own function bodies compute shapes and axes at run
time: `Shape(x) -> Gather -> Concat -> Reshape`, `Shape -> Size -> Range ->
ReduceMean` (RMSNormalization's body), `Reshape(y, Shape(x))`. torch-mlir's
ONNX conversion needs those operands as constants (it converts a Reshape
whose shape it cannot read to a rank-0 view, and reduces over no axes), so
what they compute from static shapes and constants is computed here, once,
with ONNX's reference implementation of each op: the nodes become
initializers, exactly the values the graph would compute.

What is folded: `Shape` / `Size` of a value whose shape is static, and any
deterministic ai.onnx node whose inputs are all constants, when its outputs
are small (FOLD_MAX_ELEMENTS). Nodes left without users are removed.
"""
import logging
from typing import Any, Dict, List, Optional

import numpy as np

log = logging.getLogger("cuvil")

#: A folded value larger than this stays a node (it would bloat the IR text).
FOLD_MAX_ELEMENTS = 4096

#: Never folded: their outputs differ per run, or they hold subgraphs.
NOT_FOLDED = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
              "Multinomial", "Dropout", "If", "Loop", "Scan", "SequenceMap", "Constant"}


def static_shapes(proto) -> Dict[str, List[int]]:
    """{value name: dims} of the values whose every dim is known."""
    shapes = {}
    for v in [*proto.graph.input, *proto.graph.value_info, *proto.graph.output]:
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape") and \
                all(d.HasField("dim_value") for d in t.shape.dim):
            shapes[v.name] = [int(d.dim_value) for d in t.shape.dim]
    return shapes


def _shape_value(node, dims: List[int]) -> np.ndarray:
    """Shape(x) with its start / end attributes (opset 15), from x's dims."""
    from onnx import helper
    if node.op_type == "Size":
        return np.array(int(np.prod(dims, dtype=np.int64)), dtype=np.int64)
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    start, end = int(attrs.get("start", 0)), attrs.get("end")
    return np.array(dims[start:None if end is None else int(end)], dtype=np.int64)


def _evaluate(node, inputs: List[Any], opsets) -> Optional[List[np.ndarray]]:
    """The node's outputs by ONNX's reference implementation (None when it
    cannot run it)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    names = [f"in{i}" if name else "" for i, name in enumerate(node.input)]
    single = helper.make_node(node.op_type, names, [f"out{i}" for i in range(len(node.output))],
                              domain=node.domain)
    single.attribute.extend(node.attribute)
    try:
        graph = helper.make_graph(
            [single], "fold",
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs) if n],
            [helper.make_empty_tensor_value_info(o) for o in single.output])
        model = helper.make_model(graph, opset_imports=list(opsets))
        outs = ReferenceEvaluator(model).run(None, {n: a for n, a in zip(names, inputs) if n})
    except Exception as err:   # noqa: BLE001 - an op the reference cannot run stays a node
        log.debug("cuvil: not folding %s %r: %s", node.op_type, node.name, err)
        return None
    if not all(isinstance(o, np.ndarray) for o in outs):
        return None
    return [np.asarray(o) for o in outs]


def fold_constants(proto) -> bool:
    """Folds what can be folded in proto's main graph, in place; whether
    anything changed (shape inference must then run again)."""
    from onnx import helper, numpy_helper
    graph = proto.graph
    known: Dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    shapes = static_shapes(proto)
    outputs = {o.name for o in graph.output}
    folded: Dict[str, np.ndarray] = {}
    kept = []
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            constant = _evaluate(node, [], proto.opset_import)
            if constant is not None:
                known[node.output[0]] = constant[0]
            kept.append(node)
            continue
        values: Optional[List[np.ndarray]] = None
        foldable = node.domain in ("", "ai.onnx") and node.op_type not in NOT_FOLDED
        if foldable and node.op_type in ("Shape", "Size") and node.input[0] in shapes:
            values = [_shape_value(node, shapes[node.input[0]])]
        elif foldable and node.input and all(not n or n in known for n in node.input):
            values = _evaluate(node, [known[n] if n else None for n in node.input], proto.opset_import)
        if values is None or len(values) != len(node.output) or \
                sum(v.size for v in values) > FOLD_MAX_ELEMENTS:
            kept.append(node)
            continue
        for name, array in zip(node.output, values):
            if name:
                known[name] = folded[name] = array
    if not folded:
        return False
    kept = without_unused(kept, outputs)
    used = {n for node in _nodes_with_subgraphs(kept) for n in node.input} | outputs
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(v, n) for n, v in folded.items() if n in used)
    stale = set(folded)
    inferred = [v for v in graph.value_info if v.name not in stale]
    del graph.value_info[:]
    graph.value_info.extend(inferred)
    log.debug("cuvil: folded %d ONNX values to constants", len(folded))
    return True


def _nodes_with_subgraphs(nodes):
    from onnx import AttributeProto
    for node in nodes:
        yield node
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from _nodes_with_subgraphs(attr.g.node)
            elif attr.type == AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _nodes_with_subgraphs(g.node)


def without_unused(nodes: List, outputs: set) -> List:
    """The nodes some output of which is used (by a later node, a subgraph,
    or the graph's outputs), repeatedly: a Shape whose Gather was folded
    goes too."""
    while True:
        used = {n for node in _nodes_with_subgraphs(nodes) for n in node.input} | outputs
        alive = [node for node in nodes if any(o in used for o in node.output if o)]
        if len(alive) == len(nodes):
            return nodes
        nodes = alive
