"""Builds Cuvil with CMake and packages it.

`pip install --no-build-isolation .` (see scripts/install.sh) configures
CMake against the MLIR/LLVM wheels installed in the current environment,
builds into ./build (or $CUVIL_BUILD_DIR, kept between installs so rebuilds
are incremental), and packages build/python_packages/cuvil plus cuvil-opt.
Versions come from pyproject.toml only.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = Path(os.environ.get("CUVIL_BUILD_DIR", ROOT / "build"))


def _site_packages_of(package: str) -> Path:
    """The folder of a namespace package shipped by the xtc-* wheels."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    path = purelib / package
    if not path.is_dir():
        sys.exit(f"cuvil: {package}/ not found in {purelib}; install the build "
                 f"requirements of pyproject.toml first (scripts/install.sh does)")
    return path


class CMakeBuild(build_ext):
    """Runs CMake + Ninja, then stages the built package into the wheel."""

    def run(self):
        import nanobind

        mlir, llvm = _site_packages_of("mlir"), _site_packages_of("llvm")
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        # Configure every time: it is quick, and the Python sources are globbed
        # at configure time, so new modules need it.
        subprocess.check_call([
            "cmake", "-G", "Ninja", "-S", str(ROOT), "-B", str(BUILD_DIR),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DMLIR_DIR={mlir / 'lib/cmake/mlir'}",
            f"-DLLVM_DIR={llvm / 'lib/cmake/llvm'}",
            f"-Dnanobind_DIR={nanobind.cmake_dir()}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            f"-DCUVIL_VERSION={self.distribution.get_version()}",
        ])
        jobs = os.environ.get("CUVIL_BUILD_JOBS", "2")
        subprocess.check_call(["cmake", "--build", str(BUILD_DIR), "-j", jobs])

        staged = BUILD_DIR / "python_packages" / "cuvil"
        target = Path(self.build_lib) / "cuvil"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(staged, target, symlinks=False, ignore_dangling_symlinks=True)
        bin_dir = target / "_bin"
        bin_dir.mkdir(exist_ok=True)
        shutil.copy2(BUILD_DIR / "bin" / "cuvil-opt", bin_dir / "cuvil-opt")


setup(
    ext_modules=[Extension("cuvil._cmake_build", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
