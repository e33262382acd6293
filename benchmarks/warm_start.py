"""A warm start: a fresh process compiles a workload whose library is already
in CUVIL_CACHE_DIR, as a user's process does after a restart.

    CUVIL_CACHE_DIR=... python benchmarks/warm_start.py WORKLOAD THREADS [PRECISION]

Prints one JSON line: the seconds `cuvil.compile` took (structural key,
cache index, library load, weight prepacking) and whether the cache was hit.
Building the model (random weights) and importing torch are not timed: the
cache is keyed on the model's structure, not its weight values.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main():
    import torch

    import cuvil
    import workloads

    workload, threads = sys.argv[1], int(sys.argv[2])
    precision = sys.argv[3] if len(sys.argv) > 3 else "fp32"
    model, inputs, _ = workloads.build(workload)
    torch.set_num_threads(threads)
    t = time.perf_counter()
    fast = cuvil.compile(model, example_inputs=inputs, num_threads=threads, precision=precision)
    seconds = time.perf_counter() - t
    print(json.dumps(dict(compile_s=seconds, cache_hit=fast.stats.get("cache_hit", 0.0))))


if __name__ == "__main__":
    main()
