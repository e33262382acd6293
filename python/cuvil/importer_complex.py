"""Complex tensors as pairs of real ones, where a graph's complex values can
be: Cuvil (and torch-mlir's linalg lowering) compute real dtypes only.

The transforms of cuvil.importer_fft return `view_as_complex(t)`, t holding
the real and imaginary parts in a trailing dim of 2, and read a complex
input as `view_as_real(x)`. After the decompositions, `fold_real_pairs`
  * joins the two where they meet: view_as_real(view_as_complex(t)) is t
    (an rfft read by an irfft, `.real` / `.imag`, which export writes as
    view_as_real and a select);
  * returns a complex output as its pair t; the call gives it back as
    `torch.view_as_complex` of the library's real result, with no copy
    (cuvil.signature.CallContract.user_outputs).
The complex functions a model applies to a transform's result (abs, angle)
and the ops that make a complex tensor from real ones (`torch.complex`,
`torch.polar`, `x.cfloat()`) are written on the pair here (DECOMPOSITIONS).
A complex value that is still used by anything else is refused, naming the
op that uses it (cuvil.importer._refuse_what_cannot_lower).
"""
from typing import Dict

import torch

from . import importer_decompositions

aten = torch.ops.aten

#: The complex dtypes held as pairs (complex32 is not: eager's half FFTs are
#: CUDA-only, and its pair would be float16).
_PAIRED = (torch.complex64, torch.complex128)


def _parts(x):
    parts = torch.view_as_real(x)
    return parts[..., 0], parts[..., 1]


def abs_(x):
    """|x| of a complex x as hypot(re, im) (eager's own formula)."""
    if x.dtype not in _PAIRED:
        return NotImplemented
    return importer_decompositions.hypot(*_parts(x))


def angle(x):
    """arg x of a complex x as atan2(im, re); real x as before."""
    if x.dtype not in _PAIRED:
        return importer_decompositions.angle(x) if not x.is_complex() else NotImplemented
    re, im = _parts(x)
    return torch.atan2(im, re)


def _from_parts(re, im):
    """view_as_complex of the pair, or NotImplemented where its dtype has no
    paired complex dtype."""
    if re.dtype not in (torch.float32, torch.float64) or im.dtype != re.dtype:
        return NotImplemented
    re, im = torch.broadcast_tensors(re, im)
    return torch.view_as_complex(torch.stack([re, im], -1))


def complex_(real, imag):
    """torch.complex(real, imag): the pair itself."""
    return _from_parts(real, imag)


def polar(abs, angle):
    """torch.polar(abs, angle): abs (cos angle + i sin angle)."""
    return _from_parts(abs * torch.cos(angle), abs * torch.sin(angle))


def convert_element_type(x, dtype):
    """A real tensor made complex (`x.cfloat()`, `x.to(torch.complex128)`):
    its values and zero imaginary parts."""
    if dtype not in _PAIRED or x.is_complex():
        return NotImplemented
    re = x.to(torch.float64 if dtype == torch.complex128 else torch.float32)
    return _from_parts(re, torch.zeros_like(re))


def clone(x, *, memory_format=None):
    """A copy of a complex tensor (`x.cfloat(memory_format=...)` converts,
    then clones): of its pair. Results are dense row-major whatever the
    memory format asks (as every result of a compiled model)."""
    if x.dtype not in _PAIRED:
        return NotImplemented
    return _from_parts(*_parts(x))


DECOMPOSITIONS = {
    aten.clone.default: clone,
    aten.abs.default: abs_,
    aten.angle.default: angle,
    aten.complex.default: complex_,
    aten.polar.default: polar,
    torch.ops.prims.convert_element_type.default: convert_element_type,
}


def fold_real_pairs(g) -> Dict[int, str]:
    """Joins view_as_real(view_as_complex(t)) into t and returns complex
    outputs made by view_as_complex(t) as t. Returns {position: complex dtype
    name} of the outputs that are such pairs. Mutates g."""
    for node in list(g.nodes):
        if node.op == "call_function" and node.target == aten.view_as_real.default:
            source = node.args[0]
            if isinstance(source, torch.fx.Node) and source.target == aten.view_as_complex.default:
                node.replace_all_uses_with(source.args[0])
                g.erase_node(node)
    output = next(n for n in g.nodes if n.op == "output")
    results = output.args[0]
    flat = list(results) if isinstance(results, (tuple, list)) else [results]
    paired: Dict[int, str] = {}
    for i, r in enumerate(flat):
        if isinstance(r, torch.fx.Node) and r.target == aten.view_as_complex.default \
                and r.meta["val"].dtype in _PAIRED:
            flat[i] = r.args[0]
            paired[i] = str(r.meta["val"].dtype).removeprefix("torch.")
    if paired:
        output.args = (type(results)(flat) if isinstance(results, (tuple, list)) else flat[0],)
    for node in reversed(list(g.nodes)):
        if node.op == "call_function" and node.target == aten.view_as_complex.default and not node.users:
            g.erase_node(node)
    return paired
