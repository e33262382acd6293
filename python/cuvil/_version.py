"""Versions baked into the package (Cuvil's own, and the MLIR it is built on)."""
__version__ = "0.1.0"
LLVM_VERSION = "22.1.8"
