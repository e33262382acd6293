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
    reports = []
    for script, entry in schedule:
        reports.append(transform.apply(module, transform.load(script), entry=entry, params=params))
    return reports
