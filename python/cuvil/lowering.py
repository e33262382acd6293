"""Stage 4, lower: scheduled linalg-on-tensors -> LLVM dialect -> LLVM IR text.

The passes are data in cuvil.pipeline (lower_passes, Translate): bufferize
with identity layouts, results become caller-allocated out-params (no
allocation crosses the ABI), temporaries are freed, then everything goes to
the LLVM dialect and through `mlir-translate` to LLVM IR.
"""
from . import pipeline


def cuvil_ops_to_linalg(module) -> None:
    """In place: Cuvil ops and layouts -> upstream dialects on tensors."""
    pipeline.PassPipeline("lower-cuvil-ops", "linalg", pipeline.CUVIL_OPS_TO_LINALG).run(module)


def to_llvm_dialect(module, num_threads: int = 1, profile: bool = False) -> None:
    """In place: tensors -> memrefs -> LLVM dialect (entry arguments read-only)."""
    pipeline.compile_pipeline(num_threads, profile=profile).step("lower").run(module)


def translate_to_llvm_ir(llvm_dialect_text: str) -> str:
    """LLVM dialect -> LLVM IR, with the mlir-translate of the MLIR wheel."""
    return pipeline.Translate().run(llvm_dialect_text)
