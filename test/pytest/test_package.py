"""The installed `cuvil` package: cheap import, MLIR bindings under the cuvil
prefix, and coexistence with torch_mlir's own MLIR in one process."""
import subprocess
import sys

import pytest

PARSE_AND_RUN_BOTH = """
import {first}, {second}
from cuvil import ir as cir
from cuvil.passmanager import PassManager as CPM
from torch_mlir import ir as tir
from torch_mlir.passmanager import PassManager as TPM

with cir.Context():
    m = cir.Module.parse('''func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = cuvil.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }''')
    CPM.parse("builtin.module(cuvil-lower-to-linalg,canonicalize)").run(m.operation)
    assert "linalg.generic" in str(m) and "cuvil.add" not in str(m)
with tir.Context():
    m = tir.Module.parse('''func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
      %c = arith.constant dense<-0.0> : tensor<4xf32>
      %0 = arith.addf %a, %c : tensor<4xf32>
      return %0 : tensor<4xf32>
    }''')
    TPM.parse("builtin.module(canonicalize)").run(m.operation)
    assert "arith.addf" not in str(m)
print("OK")
"""


@pytest.mark.parametrize("first,second", [("cuvil", "torch_mlir"), ("torch_mlir", "cuvil")])
def test_coexists_with_torch_mlir(first, second):
    """Two MLIR copies in one process: each parses IR and runs a pass."""
    code = PARSE_AND_RUN_BOTH.replace("{first}", first).replace("{second}", second)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "OK"


def test_import_is_cheap():
    """`import cuvil` must not pull in torch, torch_mlir or the MLIR bindings."""
    code = ("import sys, cuvil; heavy = [m for m in ('torch', 'torch_mlir', 'cuvil._mlir_libs') "
            "if m in sys.modules]; print(heavy)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_dialects_importable():
    from cuvil.dialects import arith, cuvil, func, linalg, tensor, transform  # noqa: F401
    from cuvil import execution_engine, ir, passmanager  # noqa: F401
    with ir.Context():
        attr = cuvil.SparseCSRAttr.get([0, 1], [2])
        assert str(attr) == "#cuvil.sparse_csr<{row_ptr = [0, 1], col_idx = [2]}>"


def test_cuvil_opt_version_and_dialects():
    out = subprocess.run(["cuvil-opt", "--version"], capture_output=True, text=True, check=True).stdout
    assert "Cuvil version" in out and "22.1.8" in out
    dialects = subprocess.run(["cuvil-opt", "--show-dialects"], capture_output=True, text=True,
                              check=True).stdout
    for name in ("cuvil", "linalg", "transform"):
        assert name in dialects.replace(",", " ").split()


def test_cli_version():
    out = subprocess.run(["cuvil", "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("cuvil 0.1.0")


# A misuse of the MLIR API and of Cuvil's attribute classes that only the
# shipped .pyi stubs of the nanobind extensions can see: without them both
# names are Any and mypy says nothing.
MISTYPED = """
from cuvil.ir import Context, Module
from cuvil.dialects.cuvil import SparseCSRAttr
with Context():
    module: int = Module.parse("module {}")
    count: str = len(SparseCSRAttr.get([0, 1], [0]).row_ptr)
"""


def test_type_stubs_reach_mypy(tmp_path):
    pytest.importorskip("mypy")
    from pathlib import Path
    config = Path(__file__).resolve().parents[2] / "pyproject.toml"
    (tmp_path / "mistyped.py").write_text(MISTYPED)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "mistyped.py"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, proc.stdout
    assert "Module" in errors[0] and 'variable has type "int"' in errors[0], proc.stdout
    assert '"int", variable has type "str"' in errors[1], proc.stdout
