"""What a compile shows while and after it runs: dump_dir / CUVIL_DUMP_DIR
(the IR after every pass, pass timings, LLVM IR), CUVIL_LOGS=stages, and the
progress line of long compiles on a terminal."""
import io
import os
import subprocess
import sys
import time

import pytest
import torch

import cuvil
from cuvil import progress, tools


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()).eval()


def test_dump_dir_holds_the_ir_after_every_pass_and_the_timings(tmp_path):
    model, x = _model(), torch.randn(4, 16)
    cuvil.compile(model)(x)                          # a cached library exists ...
    fast = cuvil.compile(model, dump_dir=tmp_path / "dump")
    torch.testing.assert_close(fast(x), model(x))
    assert fast.stats["cache_hit"] == 0.0            # ... but a dumping compile builds anyway
    (folder,) = (tmp_path / "dump").iterdir()
    assert folder.name == "Sequential-0"
    assert {"0_torch.mlir", "0_linalg.mlir", "model.ll", "raise", "schedule", "lower"} <= \
        {p.name for p in folder.iterdir()}
    for step in ("raise", "lower"):
        assert "Execution time report" in (folder / step / "timing.txt").read_text()
    # One file per pass, each a whole module that cuvil-opt parses.
    (narrowed,) = (folder / "raise").rglob("*cuvil-narrow-contraction-operands.mlir")
    proc = subprocess.run([str(tools.cuvil_opt()), str(narrowed), "-o", os.devnull],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    scripts = sorted(p.name for p in (folder / "schedule").iterdir())
    assert scripts == sorted(f"{i}_{s.path.stem}.mlir" for i, s in enumerate(fast.pipeline.step("schedule").scripts))
    assert (folder / "model.ll").read_text() == fast.last_signature.ir["llvm_ir"]
    # A second compile gets a folder of its own.
    cuvil.compile(model, dump_dir=tmp_path / "dump")(x)
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["Sequential-0", "Sequential-1"]


def _run(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **env))


COMPILE = ("import torch, cuvil\n"
           "m = torch.nn.Linear(8, 8).eval()\n"
           "cuvil.compile(m)(torch.randn(2, 8))\n")


def test_cuvil_dump_dir_variable(tmp_path):
    proc = _run(COMPILE, CUVIL_DUMP_DIR=str(tmp_path / "d"), CUVIL_CACHE_DIR=str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    (folder,) = (tmp_path / "d").iterdir()
    assert (folder / "lower" / "timing.txt").exists()


def test_cuvil_logs_stages(tmp_path):
    proc = _run(COMPILE, CUVIL_LOGS="stages", CUVIL_CACHE_DIR=str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    for step in ("raise -> cuvil", "schedule -> scheduled", "lower -> llvm", "codegen -> library"):
        assert f"cuvil: {step} in" in proc.stderr, proc.stderr
    proc = _run(COMPILE, CUVIL_LOGS="passes", CUVIL_CACHE_DIR=str(tmp_path / "c"))
    assert proc.returncode == 1 and "CUVIL_LOGS='passes': unknown log 'passes'; known: stages" in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_on_a_terminal_for_long_compiles(monkeypatch):
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.05)
    out = _Terminal()
    with progress.Progress("BertModel", stream=out) as p:
        p.stage("schedule")
        time.sleep(0.5)
    text = out.getvalue()
    assert "\r\033[Kcuvil: compiling BertModel: schedule (" in text and " s)" in text
    assert text.endswith("\r\033[K")                 # erased when the compile ends


def test_no_progress_line_for_short_compiles_or_off_a_terminal(monkeypatch):
    out = _Terminal()
    with progress.Progress("Small", stream=out):     # well under SHOW_AFTER_S
        pass
    assert out.getvalue() == ""
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    log = io.StringIO()                              # a file, not a terminal
    with progress.Progress("Small", stream=log):
        time.sleep(0.3)
    assert log.getvalue() == ""
