"""Cuvil: an MLIR-based compiler from PyTorch models to native code.

Importing ``cuvil`` is cheap: torch, torch-mlir and the MLIR bindings load
only when a compile entry point is first used.
"""
import logging as _logging

from ._version import LLVM_VERSION, __version__  # noqa: F401
from .errors import (CompileError, CuvilError, ExecutionError, ExecutionIndexError, TransformError,  # noqa: F401
                     UnsupportedOpError, WeightsChangedError)
from .threads import get_num_threads, set_num_threads  # noqa: F401


def compile(model, example_inputs=None, target="host", opt_level=3, num_threads=None,
            dynamic_dims=None, profile=False, precision="fp32", dump_dir=None, calibration=None):
    """Compile a torch.nn.Module, or an ONNX model (a path or an
    onnx.ModelProto), to native code (see cuvil.compiler, cuvil.compiler_onnx).
    precision: "fp32", "bf16", "fp16", "int8" (with calibration=[(x,), ...]),
    "int8-dynamic", "int8-weight", "int4-weight"."""
    from .compiler import compile as _compile
    return _compile(model, example_inputs, target=target, opt_level=opt_level,
                    num_threads=num_threads, dynamic_dims=dynamic_dims, profile=profile,
                    precision=precision, dump_dir=dump_dir, calibration=calibration)


def quantize_weights(model, bits=8, group_size=None, inplace=False):
    """A copy of `model` whose linear layers hold `bits`-bit (8 or 4) weights
    with f32 scales per output channel, or per `group_size` input channels
    (cuvil.weight_only); compile it with cuvil.compile or
    torch.compile(backend="cuvil")."""
    from .weight_only import quantize_weights as _quantize_weights
    return _quantize_weights(model, bits, group_size, inplace=inplace)


def export(model, example_inputs, out_dir, target="host"):
    """Ahead-of-time export of a torch.nn.Module or an ONNX model to a
    folder usable from C (see cuvil.aot)."""
    from .aot import export as _export
    return _export(model, example_inputs, out_dir, target=target)


def set_log_level(level) -> None:
    """Per-stage compile logs with timings ("DEBUG") or quiet ("WARNING")."""
    logger = _logging.getLogger("cuvil")
    logger.setLevel(level)
    if not logger.handlers:
        handler = _logging.StreamHandler()
        handler.setFormatter(_logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
