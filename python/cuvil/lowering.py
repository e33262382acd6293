"""Stage 4, lower: scheduled linalg-on-tensors -> LLVM dialect -> LLVM IR text.

The passes are data in cuvil.pipeline (lower_passes, Translate): bufferize
with identity layouts, results become caller-allocated out-params (no
allocation crosses the ABI), temporaries are freed, then everything goes to
the LLVM dialect and through `mlir-translate` to LLVM IR.
"""
from . import pipeline


def read_only_entry_arguments(module) -> None:
    """Marks every argument of the public functions (main, main_prepack)
    `bufferization.writable = false`. They are the caller's memory (user
    inputs, the model's weights, the packed weights every call reuses); with
    writable arguments bufferization lets an op whose init is an argument
    accumulate into it (a conv's bias broadcast, hoisted into the packed
    weights, grew by the conv's output on every call). Bufferization copies
    such an init instead."""
    from .ir import ArrayAttr, BoolAttr, DictAttr
    with module.context:
        for op in module.body.operations:
            if op.operation.name != "func.func" or "sym_visibility" in op.attributes:
                continue
            n_args = len(op.regions[0].blocks[0].arguments)
            old = list(op.arg_attrs) if "arg_attrs" in op.attributes else [DictAttr.get({})] * n_args
            op.attributes["arg_attrs"] = ArrayAttr.get([
                DictAttr.get({**{a.name: a.attr for a in DictAttr(attrs)},
                              "bufferization.writable": BoolAttr.get(False)})
                for attrs in old])


def to_llvm_dialect(module, num_threads: int = 1, profile: bool = False) -> None:
    """In place: tensors -> memrefs -> LLVM dialect (entry arguments read-only)."""
    read_only_entry_arguments(module)
    pipeline.PassPipeline("lower", "llvm", pipeline.lower_passes(num_threads, profile)).run(module)


def translate_to_llvm_ir(llvm_dialect_text: str) -> str:
    """LLVM dialect -> LLVM IR, with the mlir-translate of the MLIR wheel."""
    return pipeline.Translate().run(llvm_dialect_text)
