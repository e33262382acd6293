"""What this machine can do right now: the fp32 FMA roof, the bf16 and
int8 roofs (dot-product instructions, AMX tiles) and the cache bandwidth,
per core.

The workloads here are matmul-bound, so their GFLOP/s only mean something
next to the peak of the same machine at the same moment (a shared VM's
cores are not always whole cores); their memory-bound kernels depend on the
last-level-cache bandwidth, which a shared host's neighbours take from us.
`probe(threads)` and `bandwidth(threads)` run fma_peak.c on that many threads
at once and return GFLOP/s or GB/s per thread; run.py records both next to
every measurement. Needs a C compiler (`cc`, as Cuvil's linker step does).
"""
import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

MAX_THREADS = 64  # fma_peak.c's limit

SOURCE = Path(__file__).resolve().parent / "fma_peak.c"


@functools.lru_cache(maxsize=None)
def _library():
    folder = tempfile.mkdtemp(prefix="cuvil-bench-probe-")
    try:
        out = Path(folder) / "fma_peak.so"
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-march=native", "-ffp-contract=fast",
                        "-pthread", "-shared", "-fPIC", str(SOURCE), "-o", str(out)],
                       check=True, capture_output=True)
        lib = ctypes.CDLL(str(out))
    finally:
        shutil.rmtree(folder)  # loaded: the file is no longer needed
    lib.cuvil_bench_fma_gflops.restype = ctypes.c_double
    lib.cuvil_bench_fma_gflops.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.cuvil_bench_fma_flops_per_iter.restype = ctypes.c_int64
    lib.cuvil_bench_read_gbps.restype = ctypes.c_double
    lib.cuvil_bench_read_gbps.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    lib.cuvil_bench_bf16_gflops.restype = ctypes.c_double
    lib.cuvil_bench_bf16_gflops.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.cuvil_bench_int8_gops.restype = ctypes.c_double
    lib.cuvil_bench_int8_gops.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.cuvil_bench_amx_bf16_gflops.restype = ctypes.c_double
    lib.cuvil_bench_amx_bf16_gflops.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.cuvil_bench_amx_int8_gops.restype = ctypes.c_double
    lib.cuvil_bench_amx_int8_gops.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.cuvil_bench_handoff_ns.restype = ctypes.c_double
    lib.cuvil_bench_handoff_ns.argtypes = [ctypes.c_int64]
    return lib


def probe(threads: int = 1, seconds: float = 0.15) -> float:
    """fp32 FMA GFLOP/s per thread with `threads` threads running at once
    (best of 3 runs of about `seconds` each)."""
    _check_threads(threads)
    lib = _library()
    calibrate = 2_000_000
    gflops = lib.cuvil_bench_fma_gflops(1, calibrate)
    iters = max(calibrate, int(seconds * gflops * 1e9 / lib.cuvil_bench_fma_flops_per_iter()))
    best = max(lib.cuvil_bench_fma_gflops(threads, iters) for _ in range(3))
    return best / threads


def _dot_probe(measure, ops_per_iter: int, threads: int, seconds: float):
    """Per-thread rate of a dot-product probe of fma_peak.c (`measure(threads,
    iters)`, ops_per_iter per loop iteration), like probe(); None where the
    host lacks its instruction (the probe returns -1)."""
    _check_threads(threads)
    calibrate = 1_000_000
    rate = measure(1, calibrate)
    if rate < 0:
        return None
    iters = max(calibrate, int(seconds * rate * 1e9 / ops_per_iter))
    return max(measure(threads, iters) for _ in range(3)) / threads


def bf16_probe(threads: int = 1, seconds: float = 0.15):
    """bf16 dot-product (vdpbf16ps) GFLOP/s per thread, like probe(); None on
    a host without AVX512-BF16 (the bf16 roof of hosts without AMX)."""
    return _dot_probe(_library().cuvil_bench_bf16_gflops, 12 * 64, threads, seconds)


def int8_probe(threads: int = 1, seconds: float = 0.15):
    """int8 dot-product (vpdpbusd) GOP/s per thread (a multiply and an add
    per byte pair), like probe(); None on a host without AVX512-VNNI (the
    int8 roof of hosts without AMX)."""
    return _dot_probe(_library().cuvil_bench_int8_gops, 12 * 128, threads, seconds)


def amx_bf16_probe(threads: int = 1, seconds: float = 0.15):
    """AMX bf16 tile-product (tdpbf16ps) GFLOP/s per thread, like probe();
    None on a host without AMX (or where Linux does not grant the tiles)."""
    return _dot_probe(_library().cuvil_bench_amx_bf16_gflops, 4 * 16 * 16 * 32 * 2, threads, seconds)


def amx_int8_probe(threads: int = 1, seconds: float = 0.15):
    """AMX int8 tile-product (tdpbusd) GOP/s per thread, like probe(); None
    on a host without AMX."""
    return _dot_probe(_library().cuvil_bench_amx_int8_gops, 4 * 16 * 16 * 64 * 2, threads, seconds)


#: The reduced-precision roofs of a snapshot(), as reports name them.
ROOF_NAMES = {"bf16_gflops": "GFLOP/s bf16 dot product", "int8_gops": "GOP/s int8 dot product",
              "amx_bf16_gflops": "GFLOP/s bf16 AMX", "amx_int8_gops": "GOP/s int8 AMX"}


def reduced_precision_roofs(snap: dict) -> dict:
    """The bf16 and int8 roofs of the units Cuvil's kernels use on this host:
    {"bf16": (key, rate), "int8": (key, rate)} from a snapshot(), AMX where
    the host has it, else the dot-product instructions; a precision is
    missing where the host has neither."""
    roofs = {}
    for precision, keys in (("bf16", ("amx_bf16_gflops", "bf16_gflops")),
                            ("int8", ("amx_int8_gops", "int8_gops"))):
        for key in keys:
            if key in snap:
                roofs[precision] = (key, snap[key])
                break
    return roofs


def bandwidth(threads: int = 1, megabytes: int = 4, reps: int = 40) -> float:
    """GB/s per thread reading a `megabytes` buffer per thread (in L3) `reps`
    times, with `threads` threads at once (best of 3)."""
    _check_threads(threads)
    lib = _library()
    return max(lib.cuvil_bench_read_gbps(threads, megabytes << 20, reps) for _ in range(3))


def _check_threads(threads: int) -> None:
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"the machine probes take 1..{MAX_THREADS} threads, got {threads}")


def handoff_ns(rounds: int = 200_000):
    """One-way core-to-core handoff of a cache line, ns (best of 3), or None
    when this process may run on fewer than 2 CPUs (both threads spin)."""
    if len(os.sched_getaffinity(0)) < 2:
        return None
    lib = _library()
    return min(lib.cuvil_bench_handoff_ns(rounds) for _ in range(3))


def snapshot(threads: int) -> dict:
    """The probes on `threads` threads: {"fma_gflops", "l3_read_gbps"} per
    thread, "bf16_gflops" / "int8_gops" (dot-product roofs) and
    "amx_bf16_gflops" / "amx_int8_gops" (tile-product roofs) where the host
    has them, and with 2+ threads "handoff_ns" (core-to-core)."""
    snap = dict(fma_gflops=probe(threads), l3_read_gbps=bandwidth(threads))
    for key, measure in (("bf16_gflops", bf16_probe), ("int8_gops", int8_probe),
                         ("amx_bf16_gflops", amx_bf16_probe), ("amx_int8_gops", amx_int8_probe)):
        rate = measure(threads)
        if rate is not None:
            snap[key] = rate
    handoff = handoff_ns() if threads >= 2 else None
    if handoff is not None:
        snap["handoff_ns"] = handoff
    return snap


def degraded(snap: dict, reference: dict, tolerance: float = 0.85) -> list:
    """Names of the probes in `snap` worse than `reference`'s by more than
    1 - `tolerance` (rates lower, latencies ("_ns") higher; latencies get
    a 20 ns floor: 29 vs 36 ns is noise, 30 vs 170 ns is another placement)."""
    worse = []
    for k, ref in reference.items():
        got = snap.get(k, ref)
        if k.endswith("_ns"):
            if got > max(ref / tolerance, ref + 20):
                worse.append(k)
        elif got < tolerance * ref:
            worse.append(k)
    return worse


if __name__ == "__main__":
    for t in (1, 2):
        roofs = "".join(f", {rate:.0f} {ROOF_NAMES[key]}" for key, rate in snapshot(t).items() if key in ROOF_NAMES)
        print(f"{t} thread(s): {probe(t):.1f} GFLOP/s fp32 FMA{roofs}, {bandwidth(t):.1f} GB/s (L3 read) per thread")
    handoff = handoff_ns()
    print("core-to-core handoff: " + (f"{handoff:.0f} ns" if handoff is not None else "n/a (1 CPU)"))
