"""Cuvil: an MLIR-based compiler from PyTorch models to native code.

Importing ``cuvil`` is cheap: torch, torch-mlir and the MLIR bindings load
only when a compile entry point is first used.
"""
from ._version import __version__, LLVM_VERSION  # noqa: F401
