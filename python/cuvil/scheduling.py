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
"""
from . import transform

DEFAULT_SCHEDULE = (("matmul_cpu", "__transform_main"),
                    ("batch_matmul_cpu", "__transform_main"),
                    ("elementwise_cpu", "cuvil_elementwise"),
                    ("conv_cpu", "cuvil_conv_cpu"))


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
