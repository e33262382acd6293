"""Stage 3, schedule: apply Cuvil's transform scripts to the linalg module.

A schedule is a list of (script, entry) pairs, applied in order. The
default CPU schedule:
  * matmul_cpu: every linalg.matmul and 2-D linalg.transpose -> tiled,
    AVX-512 FMA / 16x16 shuffle kernels;
  * batch_matmul_cpu: batched contractions (attention's q.k^T and p.v) ->
    one head per scf.forall iteration, the same FMA register kernel;
  * elementwise_cpu: everything else that is not i1 -> row reductions with
    vector accumulators, N-D transposes, vectorized elementwise ops;
  * conv_cpu: the NCHW convolutions that raising left as convolutions (few
    channels, batch > 1; the others became Winograd or im2col matmuls):
    output channels packed, register-tiled FMA kernels; pooling and the pads
    in front of them.
Whatever a script does not match stays scalar loops (convert-linalg-to-loops).

On hosts with AVX512-BF16 (cuvil.cpu_features), bf16 x bf16 -> f32 matmuls
have their weights packed into VNNI panels in the raise step (pack_cpu's
PACK_ENTRY_BF16_DOT) and matmul_bf16_cpu schedules them first: vdpbf16ps
dot products (x86vector). Elsewhere the fp32 kernels take bf16 operands
(converted to f32, FMAs).
"""
from typing import FrozenSet, Tuple

from . import transform

DEFAULT_SCHEDULE = (("matmul_cpu", "__transform_main"),
                    ("batch_matmul_cpu", "__transform_main"),
                    ("elementwise_cpu", "cuvil_elementwise"),
                    ("conv_cpu", "cuvil_conv_cpu"))

#: Before DEFAULT_SCHEDULE where the bf16 dot-product kernel applies.
BF16_DOT_SCHEDULE = (("matmul_bf16_cpu", "__transform_main"),)

#: pack_cpu.mlir entry points (run in the raise step): B panels for the FMA
#: kernels; with the dot-product kernel also VNNI panels for bf16 matmuls.
PACK_ENTRY = "cuvil_pack_matmul_rhs"
PACK_ENTRY_BF16_DOT = "cuvil_pack_matmul_rhs_bf16_vnni"


def bf16_dot_product(features: FrozenSet[str]) -> bool:
    """Whether bf16 matmuls run on vdpbf16ps (AVX512-BF16)."""
    return "avx512_bf16" in features


def default_schedule(features: FrozenSet[str]) -> Tuple[Tuple[str, str], ...]:
    """The default schedule for a target with these CPU features."""
    return (BF16_DOT_SCHEDULE if bf16_dot_product(features) else ()) + DEFAULT_SCHEDULE


def pack_entry(features: FrozenSet[str]) -> str:
    return PACK_ENTRY_BF16_DOT if bf16_dot_product(features) else PACK_ENTRY


def apply_schedule(module, schedule=DEFAULT_SCHEDULE, params=None):
    """Applies the scripts of `schedule` in order; returns their ApplyReports.
    `params` ({name: int}) goes to every script with a parameter of that name
    (TM, RM, RN: matmul_cpu and batch_matmul_cpu; EW_ROWS, ...: elementwise_cpu;
    see transform.parameters); a name no script has is an error."""
    from .errors import TransformError

    scripts = [(transform.load(script), entry) for script, entry in schedule]
    if params:
        known = [transform.parameters(text, entry) for text, entry in scripts]
        unknown = sorted(set(params) - set().union(*known))
        if unknown:
            raise TransformError(f"no script of the schedule has parameters named {unknown}; "
                                 f"they have {sorted(set().union(*known))}")
    reports = []
    for i, (text, entry) in enumerate(scripts):
        mine = {k: v for k, v in (params or {}).items() if k in known[i]} if params else None
        reports.append(transform.apply(module, text, entry=entry, params=mine))
    return reports
