"""Stage 3, schedule: apply Cuvil's transform scripts to the linalg module.

A schedule is a list of (script, entry) pairs, applied in order. The
default CPU schedule tiles, vectorizes and lowers every linalg.matmul and
linalg.transpose to AVX-512 FMAs / shuffles (transform_scripts/matmul_cpu.mlir).
"""
from . import transform

DEFAULT_SCHEDULE = (("matmul_cpu", "__transform_main"),)


def apply_schedule(module, schedule=DEFAULT_SCHEDULE, params=None):
    reports = []
    for script, entry in schedule:
        reports.append(transform.apply(module, transform.load(script), entry=entry, params=params))
    return reports
