"""Before import: `cuvil.compile(model, precision="int8" | "int8-dynamic")`
quantizes a float model with PyTorch's PT2E flow (torchao), then compiles
the quantized graph like any PT2E model (cuvil.importer_quantized);
"int8-weight" / "int4-weight" quantize the linear layers' weights only
(cuvil.quantize_weights, no torchao needed).

  int8          static: torchao's X86InductorQuantizer defaults (uint8
                per-tensor activations, int8 per-channel weights), the
                activation ranges observed on `calibration` batches;
  int8-dynamic  the activations' scale and zero point computed per tensor at
                run time (onnxruntime's quantize_dynamic); the weights'
                from the weights (one batch traces the model).

torchao is optional (pip install cuvil[quant]); PT2E needs torch.export to
capture the model.
"""
from __future__ import annotations

import copy
import logging
from typing import Optional, Sequence

from .errors import CompileError
from .weight_only import WEIGHT_ONLY_PRECISIONS, quantize_weights

log = logging.getLogger("cuvil.quantize")

#: precision -> whether activations are quantized at run time.
INT8_PRECISIONS = {"int8": False, "int8-dynamic": True}


def is_quantizing(precision: str) -> bool:
    """Whether `precision` changes the model before import (here)."""
    return precision in INT8_PRECISIONS or precision in WEIGHT_ONLY_PRECISIONS


def quantize(model, precision: str, example_inputs: Optional[Sequence] = None,
             calibration: Optional[Sequence[Sequence]] = None):
    """The model quantized for `precision`: PT2E int8 (a torch.fx.GraphModule),
    or a copy with weight-only linear layers (cuvil.quantize_weights)."""
    import torch
    from .importer_quantized import in_eval_mode, is_quantized_graph
    if is_quantized_graph(model):   # already PT2E-quantized: compiled as it is
        return model
    if precision in WEIGHT_ONLY_PRECISIONS:
        bits, group_size = WEIGHT_ONLY_PRECISIONS[precision]
        return quantize_weights(model, bits, group_size)
    dynamic = INT8_PRECISIONS[precision]
    batches = [tuple(b) if isinstance(b, (tuple, list)) else (b,) for b in (calibration or ())]
    if not dynamic and not batches:
        raise ValueError("precision='int8' observes the activations' ranges: pass calibration=[(x,), ...] "
                         "(a few typical input batches), or use precision='int8-dynamic'")
    if example_inputs is None and not batches:
        raise ValueError(f"precision={precision!r} quantizes when compiling: pass example_inputs=(x,)")
    example = tuple(example_inputs) if example_inputs is not None else batches[0]
    try:
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as xiq
    except ImportError as err:
        raise CompileError("quantize", f"precision={precision!r} needs torchao (pip install cuvil[quant]): "
                                       f"{err}") from err
    name = type(model).__name__
    # A copy: the converted module would keep the model's own float tensors
    # (biases, norms, embeddings), which the library reads in place, so a
    # later change to the model would show in some results and not in the
    # int8 weights. Its weights are fixed at compile time.
    try:
        own = copy.deepcopy(model)
    except Exception as err:
        raise CompileError("quantize", f"precision={precision!r} quantizes a copy of {name}, and copy.deepcopy "
                                       f"failed: {type(err).__name__}: {err}; quantize the model yourself "
                                       f"(PT2E) and pass the converted module") from err
    try:
        with torch.no_grad():
            exported = torch.export.export(in_eval_mode(own), example)
        quantizer = _quantizer_class(xiq)()
        quantizer.set_global(xiq.get_default_x86_inductor_quantization_config(is_dynamic=dynamic))
        if dynamic:
            _keep_convolutions_float(quantizer, model)
        prepared = prepare_pt2e(exported.module(), quantizer)
        with torch.no_grad():
            for batch in batches or [example]:   # observers: activation ranges, and the weights'
                prepared(*batch)
        quantized = convert_pt2e(prepared)
    except Exception as err:   # torch.export's and torchao's own failures, named
        raise CompileError("quantize", f"PT2E quantization of {name} failed in torch.export / torchao: "
                                       f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}; "
                                       f"quantize the model yourself and pass the converted module") from err
    log.info("cuvil: %s quantized to %s (PT2E, X86InductorQuantizer, %d calibration batches)",
             name, precision, len(batches))
    return quantized


def _keep_convolutions_float(quantizer, model) -> None:
    """int8-dynamic leaves convolutions float (the rest follows the global
    dynamic config: the linear layers are int8). A dynamically quantized
    convolution's input scale is a run-time value, which Cuvil's int8
    convolutions (their requantize and zero-point corrections folded at
    compile time) cannot take: it ran as a float conv between a range
    reduction, a quantize and a dequantize of its input, slower than fp32
    (ResNet-18, Zen 5, 1 thread: 27.7 ms against 15.0 ms with its convs left
    float, fp32 15.8). Statically quantized (precision="int8", calibrated)
    they run on the int8 kernels."""
    import torch
    convs = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
    for conv in convs:
        quantizer.set_module_type_qconfig(conv, None)
    if any(isinstance(m, convs) for m in model.modules()):
        log.info("cuvil: precision='int8-dynamic' leaves %s's convolutions in float (their int8 form needs "
                 "static activation ranges: precision='int8' with calibration=[...])", type(model).__name__)


def _quantizer_class(xiq):
    """X86InductorQuantizer, but where its linear + unary-op fusion pattern
    raises IndexError (torchao 0.18 on Hugging Face BERT's Linear -> GELU: a
    source partition with no output node) the linears it did not annotate
    are annotated alone, by the quantizer's plain linear rule that runs next
    (their output quantized before the GELU instead of after it)."""
    class Quantizer(xiq.X86InductorQuantizer):
        def _annotate_linear_unary(self, model, quantization_config, filter_fn=None):
            try:
                super()._annotate_linear_unary(model, quantization_config, filter_fn)
            except IndexError:
                log.debug("cuvil: torchao's linear + unary fusion failed on %s; those linears alone",
                          type(model).__name__)
    return Quantizer
