"""What this machine can do right now: the fp32 FMA roof, per core.

The workloads here are matmul-bound, so their GFLOP/s only mean something
next to the peak of the same machine at the same moment (a shared VM's
cores are not always whole cores). `probe(threads)` runs fma_peak.c on that
many threads at once and returns GFLOP/s per thread; run.py records it next
to every measurement. Needs a C compiler (`cc`, as Cuvil's linker step does).
"""
import ctypes
import functools
import os
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "fma_peak.c"


@functools.lru_cache(maxsize=None)
def _library():
    out = Path(tempfile.mkdtemp(prefix="cuvil-bench-probe-")) / "fma_peak.so"
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-march=native", "-ffp-contract=fast",
                    "-pthread", "-shared", "-fPIC", str(SOURCE), "-o", str(out)],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(out))
    lib.cuvil_bench_fma_gflops.restype = ctypes.c_double
    lib.cuvil_bench_fma_gflops.argtypes = [ctypes.c_int, ctypes.c_int64]
    return lib


def probe(threads: int = 1, seconds: float = 0.15) -> float:
    """fp32 FMA GFLOP/s per thread with `threads` threads running at once
    (best of 3 runs of about `seconds` each)."""
    lib = _library()
    calibrate = 2_000_000
    gflops = lib.cuvil_bench_fma_gflops(1, calibrate)
    iters = max(calibrate, int(seconds * gflops * 1e9 / (12 * 16 * 2)))
    best = max(lib.cuvil_bench_fma_gflops(threads, iters) for _ in range(3))
    return best / threads


if __name__ == "__main__":
    for t in (1, 2):
        print(f"{t} thread(s): {probe(t):.1f} GFLOP/s per thread")
