"""Stage 2, raise: linalg text from the importer -> Cuvil's context, with
recognised patterns raised to Cuvil ops and lowered back in Cuvil's form,
then the weight-only subgraph split into a run-once `main_prepack`."""
from .diagnostics import run_pipeline

# Elementwise fusion runs while the contractions are still cuvil.matmul ops:
# linalg-fuse-elementwise-ops also propagates reshapes through linalg ops and
# fuses elementwise producers into reductions, which would turn a
# linalg.matmul into a higher-rank generic (or fold the softmax division into
# attention's p.v) that the matmul schedules no longer match. Unit dimensions
# are dropped last (1x128x768 -> 128x768), so the schedules see rank <= 4 ops
# with projected-permutation maps.
# Then the convolutions (cuvil-winograd-conv, cuvil-im2col-conv) become
# transposes, 1-D transforms and (batch) matmuls, with the filter transforms
# weight-only, and i1 tensors between linalg ops become i8
# (cuvil-widen-bool-tensors) so that the schedules vectorize them.
# transform_scripts/pack_cpu.mlir then packs the rhs of each large matmul into
# 64-column panels before cuvil-split-prepack, so that packing a weight runs
# once, in main_prepack (see that script; matmul_cpu.mlir schedules the result).
# Last, every linalg op goes into a private kernel function, identical kernels
# shared (cuvil-outline-kernels): repeated layers are scheduled, lowered and
# compiled once.
from .transform import script_path as _script_path

RAISE_PIPELINE = ("builtin.module(cuvil-raise-linalg,canonicalize,cse,"
                  "linalg-fuse-elementwise-ops,canonicalize,cse,"
                  "cuvil-lower-to-linalg,canonicalize,cse,"
                  "cuvil-widen-bool-tensors,cuvil-winograd-conv,cuvil-im2col-conv,canonicalize,cse,"
                  "transform-preload-library{transform-library-paths=" + str(_script_path("pack_cpu")) + "},"
                  "transform-interpreter{entry-point=cuvil_pack_matmul_rhs},canonicalize,cse,"
                  "cuvil-split-prepack,canonicalize,cse,"
                  "linalg-fold-unit-extent-dims,canonicalize,cse,"
                  "cuvil-outline-kernels,canonicalize,cse)")


def parse(text: str, context):
    """Parses importer output in Cuvil's context (objects never cross from
    torch_mlir; only text does)."""
    from .errors import CompileError
    from .ir import MLIRError, Module
    try:
        return Module.parse(text, context=context)
    except MLIRError as err:
        from .diagnostics import save_reproducer
        path = save_reproducer(text, "parse")
        raise CompileError("parse", str(err), reproducer=f"cuvil-opt {path}") from None


def mark_weights(module, weight_args) -> None:
    """Tags func.func @main arguments that are weights with `cuvil.weight`."""
    from .ir import DictAttr, UnitAttr, ArrayAttr
    main = lookup_func(module, "main")
    with module.context:
        attrs = []
        for i, old in enumerate(main.arg_attrs):
            entries = {n.name: n.attr for n in DictAttr(old)}
            if i in weight_args:
                entries["cuvil.weight"] = UnitAttr.get()
            attrs.append(DictAttr.get(entries))
        main.arg_attrs = ArrayAttr.get(attrs)


def lookup_func(module, name: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.attributes["sym_name"].value == name:
            return op
    return None


def raise_and_prepack(module) -> None:
    run_pipeline(module, RAISE_PIPELINE, "raise")
