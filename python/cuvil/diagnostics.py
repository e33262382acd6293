"""Runs MLIR pass pipelines in Cuvil's context and turns failures into
CompileError with the diagnostics and a reproducer (saved IR + cuvil-opt)."""
import os
import sys
import tempfile
from pathlib import Path

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


def run_pipeline(module, pipeline: str, stage: str, dump_dir=None) -> None:
    """Runs `pipeline` on `module` (cuvil.ir); raises CompileError on failure.
    With `dump_dir`: the IR after every pass goes into that folder (one file
    per pass, numbered, under a folder per anchor op) and MLIR's pass-timing
    report into `timing.txt` there."""
    from .ir import MLIRError
    from .passmanager import PassManager

    before = str(module)
    try:
        with module.context:
            if dump_dir is None:
                PassManager.parse(pipeline).run(module.operation)
            else:
                _run_dumping(pipeline, module, Path(dump_dir))
    except MLIRError as err:
        path = save_reproducer(before, stage)
        diags = "\n".join(f"  {d.location}: {d.message}" for d in err.error_diagnostics) or str(err)
        raise CompileError(stage, f"\n{diags}",
                           reproducer=f"cuvil-opt {path} --pass-pipeline='{pipeline}'") from None


def _run_dumping(pipeline: str, module, folder: Path) -> None:
    """Runs `pipeline` with IR printing into `folder` and the timing report,
    which MLIR writes to the process's stderr when the pass manager goes
    away (so only this function holds it), redirected into folder/timing.txt."""
    import gc

    from .passmanager import PassManager
    folder.mkdir(parents=True, exist_ok=True)
    pm = PassManager.parse(pipeline)
    # Module scope: every file parses on its own (cuvil-opt replays from it);
    # MLIR allows that only single-threaded (the compile's own context).
    module.context.enable_multithreading(False)
    pm.enable_ir_printing(print_after_all=True, print_module_scope=True, tree_printing_dir_path=str(folder))
    pm.enable_timing()
    sys.stderr.flush()
    fd = os.open(folder / "timing.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        try:
            pm.run(module.operation)
        finally:
            del pm
            gc.collect()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
