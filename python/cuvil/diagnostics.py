"""Runs MLIR pass pipelines in Cuvil's context and turns failures into
CompileError with the diagnostics and a reproducer (saved IR + cuvil-opt)."""
import os
import tempfile

from .errors import CompileError


def save_reproducer(ir_text: str, stage: str) -> str:
    """Writes the IR that a failing stage got; returns its path."""
    from .options import environment
    folder = environment().repro_dir
    os.makedirs(folder, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix=f"{stage}-", suffix=".mlir", dir=folder)
    with os.fdopen(fd, "w") as f:
        f.write(ir_text)
    return path


def run_pipeline(module, pipeline: str, stage: str) -> None:
    """Runs `pipeline` on `module` (cuvil.ir); raises CompileError on failure."""
    from .ir import MLIRError
    from .passmanager import PassManager

    before = str(module)
    try:
        with module.context:
            PassManager.parse(pipeline).run(module.operation)
    except MLIRError as err:
        path = save_reproducer(before, stage)
        diags = "\n".join(f"  {d.location}: {d.message}" for d in err.error_diagnostics) or str(err)
        raise CompileError(stage, f"\n{diags}",
                           reproducer=f"cuvil-opt {path} --pass-pipeline='{pipeline}'") from None
