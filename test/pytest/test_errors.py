"""Errors a user can cause: each is a clear exception (type, what, what to
do), never a crash; a CompileError's reproducer replays the failure with the
command-line tools; the per-stage log."""
import logging
import subprocess

import pytest
import torch

import cuvil
from cuvil import diagnostics, raising
from cuvil.ir import Context, Module

from models import MLP, SMALL_MLP


def _mlp():
    torch.manual_seed(0)
    return MLP(SMALL_MLP).eval()


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(target="cuda"), ValueError, "target 'cuda' is not supported; use target='host'"),
    (dict(opt_level=7), ValueError, "opt_level must be 0..3, got 7"),
    (dict(dynamic_dims={0: 5}), ValueError, "input 0 has rank 2, no dim 5"),
])
def test_bad_compile_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        cuvil.compile(_mlp(), example_inputs=(torch.randn(4, 64),), **kwargs)


@pytest.mark.parametrize("n", [0, -2])
def test_set_num_threads_below_one(n):
    with pytest.raises(ValueError, match=f"number of threads must be >= 1, got {n}"):
        cuvil.set_num_threads(n)
    assert cuvil.get_num_threads() == 1   # unchanged (conftest: CUVIL_NUM_THREADS=1)


def test_bad_inputs_at_call_time():
    fast = cuvil.compile(_mlp(), example_inputs=(torch.randn(4, 64),), dynamic_dims={0: 0})
    with pytest.raises(ValueError, match="input 0 is on meta; Cuvil compiles for the host CPU"):
        fast(torch.randn(4, 64, device="meta"))
    with pytest.raises(ValueError, match=r"input 0 dim 0 \('in0_dim0'\) is 0; dynamic dims must be >= 1"):
        fast(torch.randn(0, 64))
    with pytest.raises(ValueError, match="input 0 has rank 3, compiled for 2"):
        fast(torch.randn(4, 64, 1))
    with pytest.raises(TypeError, match="input 0 has dtype torch.complex64, which Cuvil does not support"):
        fast(torch.randn(4, 64, dtype=torch.complex64))


def test_a_static_build_called_with_another_rank_is_a_compile_error():
    # No dynamic dims: a new rank is a new signature, which the model refuses.
    fast = cuvil.compile(_mlp(), example_inputs=(torch.randn(4, 64),))
    with pytest.raises(cuvil.CompileError, match="torch.export could not capture MLP"):
        fast(torch.randn(4, 64, 1))


def _run_reproducer(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)


def test_parse_error_reproducer_fails_the_same_way():
    # What the importer's text bridge would hit if torch-mlir printed IR that
    # MLIR 22 cannot parse.
    with Context() as ctx, pytest.raises(cuvil.CompileError) as info:
        raising.parse("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : tensor<4xf32>\n}", ctx)
    err = info.value
    assert err.stage == "parse" and "use of undeclared SSA value name" in str(err)
    assert err.reproducer.startswith("cuvil-opt ")
    proc = _run_reproducer(err.reproducer)
    assert proc.returncode != 0 and "use of undeclared SSA value name" in proc.stderr


def test_pass_failure_reproducer_fails_the_same_way():
    src = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}"
    with Context():
        module = Module.parse(src)
        with pytest.raises(cuvil.CompileError) as info:
            diagnostics.run_pipeline(
                module, "builtin.module(transform-interpreter{entry-point=no_such_sequence})", "schedule")
    err = info.value
    assert err.stage == "schedule" and "no_such_sequence" in str(err)
    assert "--pass-pipeline=" in err.reproducer
    proc = _run_reproducer(err.reproducer)
    assert proc.returncode != 0
    message = "could not find a nested named sequence with name: no_such_sequence"
    assert message in str(err) and message in proc.stderr


def test_set_log_level_logs_every_stage(capfd):
    cuvil.set_log_level("DEBUG")
    try:
        cuvil.compile(_mlp(), example_inputs=(torch.randn(4, 64),))
    finally:
        cuvil.set_log_level("WARNING")
    log = capfd.readouterr().err
    assert "cuvil DEBUG cuvil: compiled MLP in" in log
    for stage in ("import", "raise", "schedule", "lower", "codegen", "load"):
        assert f"'{stage}':" in log, stage
    # Quiet again: nothing logged.
    cuvil.compile(_mlp(), example_inputs=(torch.randn(5, 64),))
    assert "cuvil DEBUG" not in capfd.readouterr().err
    assert logging.getLogger("cuvil").level == logging.WARNING


def test_a_codegen_reproducer_still_runs_after_its_build_folder_is_gone(tmp_path, monkeypatch):
    import re
    from pathlib import Path
    from cuvil import artifact, tools
    from cuvil.errors import CompileError
    monkeypatch.setenv("CUVIL_REPRO_DIR", str(tmp_path / "repro"))
    build = tmp_path / "cuvil-build-test"
    build.mkdir()
    (build / "module.ll").write_text("this is not LLVM IR\n")
    llc = tools.llvm_bin("llc")
    with pytest.raises(CompileError) as info:
        artifact.run_tool([llc, build / "module.ll", "-o", build / "module.o"], "codegen")
    command = info.value.reproducer
    assert str(build) not in command
    kept = Path(re.search(r"(\S+\.ll)\b", command).group(1))
    assert kept.read_text() == "this is not LLVM IR\n"
