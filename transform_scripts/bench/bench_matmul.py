#!/usr/bin/env python3
"""Build and benchmark the Cuvil transform-dialect matmul schedules.

  python bench_matmul.py [--reps 20] [--size 1024] [--quick] [--peak] [--workdir DIR]

Uses only numpy + ctypes (+ build_so.sh, i.e. mlir-opt/mlir-translate/opt/llc/gcc).
 * builds the SIZE^3 fp32 matmul with ../matmul_cpu.mlir for 1 thread (scf.for)
   and 2 threads (scf.parallel -> async-parallel-for), times it (median and best
   of --reps runs) and compares with numpy;
 * checks non-dividing shapes (100x70x33, ...), torch-mlir style x @ W^T
   (linalg.transpose + linalg.matmul) and the fused matmul+bias+relu schedule
   (../matmul_bias_relu_fusion.mlir).
--peak also compiles a tiny AVX-512 FMA loop with gcc to report the machine's
single-core FMA peak, as a reference.
"""
import argparse, ctypes, os, subprocess, sys, tempfile, time
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(v, "1")  # idle BLAS threads would spin and steal a core
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TS = os.path.dirname(HERE)
MATMUL_LIB = os.path.join(TS, "matmul_cpu.mlir")
FUSION_LIB = os.path.join(TS, "matmul_bias_relu_fusion.mlir")
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, HERE)
import gen_mlir  # noqa: E402


class MemRef1D(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64),
                ("sizes", ctypes.c_int64 * 1), ("strides", ctypes.c_int64 * 1)]


class MemRef2D(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64),
                ("sizes", ctypes.c_int64 * 2), ("strides", ctypes.c_int64 * 2)]


def descriptor(a):
    d = (MemRef1D if a.ndim == 1 else MemRef2D)()
    d.allocated = d.aligned = a.ctypes.data
    d.offset = 0
    for i in range(a.ndim):
        d.sizes[i] = a.shape[i]
        d.strides[i] = a.strides[i] // a.itemsize
    return d


def aligned_array(shape, align=64):
    n = int(np.prod(shape))
    buf = np.empty(n + align // 4, np.float32)
    off = (-buf.ctypes.data % align) // 4
    return buf[off:off + n].reshape(shape)


def build(workdir, kind, M, N, K, threads, lib):
    name = f"{kind}_{M}x{N}x{K}_t{threads}"
    src = os.path.join(workdir, name + ".mlir")
    so = os.path.join(workdir, name + ".so")
    with open(src, "w") as f:
        f.write(gen_mlir.emit(kind, M, N, K))
    t = time.perf_counter()
    subprocess.run([os.path.join(HERE, "build_so.sh"), src, so, str(threads), lib], check=True)
    return so, time.perf_counter() - t


class Problem:
    def __init__(self, kind, M, N, K, seed=0):
        rng = np.random.default_rng(seed)
        self.kind, self.M, self.N, self.K = kind, M, N, K
        self.A = aligned_array((M, K)); self.A[:] = rng.standard_normal((M, K))
        bshape = (N, K) if kind == "mm_bt" else (K, N)
        self.B = aligned_array(bshape); self.B[:] = rng.standard_normal(bshape)
        self.bias = aligned_array((N,)); self.bias[:] = rng.standard_normal(N)
        self.C = aligned_array((M, N))
        Bm = self.B.T if kind == "mm_bt" else self.B
        self.ref32 = self.A @ Bm                                   # numpy fp32
        self.ref64 = self.A.astype(np.float64) @ Bm.astype(np.float64)
        if kind.startswith("mm_bias"):
            self.ref32 = self.ref32 + self.bias
            self.ref64 = self.ref64 + self.bias
        if kind == "mm_bias_relu":
            self.ref32 = np.maximum(self.ref32, 0)
            self.ref64 = np.maximum(self.ref64, 0)
        self.descs = [descriptor(self.A), descriptor(self.B)]
        if kind.startswith("mm_bias"):
            self.descs.append(descriptor(self.bias))
        self.descs.append(descriptor(self.C))   # out-param (buffer-results-to-out-params)
        self.args = [ctypes.byref(d) for d in self.descs]

    def run(self, fn):
        fn(*self.args)

    def check(self, fn):
        self.C[:] = np.nan
        self.run(fn)
        err64 = float(np.abs(self.C - self.ref64).max())
        err_np = float(np.abs(self.C - self.ref32).max())
        np_err64 = float(np.abs(self.ref32 - self.ref64).max())
        ok = np.isfinite(err64) and err64 <= 10 * max(np_err64, 1e-6)
        return ok, err_np, err64, np_err64


def time_fn(prob, fn, reps):
    """Wall-clock median/best per call, plus process CPU time / wall time
    (~1.0 for 1 thread, ~2.0 when both cores really work; lower = contention)."""
    for _ in range(2):
        prob.run(fn)
    ts = []
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(reps):
        t = time.perf_counter(); prob.run(fn); ts.append(time.perf_counter() - t)
    util = (time.process_time() - c0) / (time.perf_counter() - w0)
    return float(np.median(ts)), float(min(ts)), util


PEAK_C = r'''
#include <stdio.h>
#include <time.h>
int main(void) {
  long n = 100000000; struct timespec t0, t1;
  __asm__ volatile("vxorps %%zmm30,%%zmm30,%%zmm30\n\tvxorps %%zmm31,%%zmm31,%%zmm31" ::: "xmm30", "xmm31");
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++)
    __asm__ volatile(
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm0\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm1\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm2\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm3\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm4\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm5\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm6\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm7\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm8\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm9\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm10\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm11\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm12\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm13\n\t"
      "vfmadd231ps %%zmm30,%%zmm31,%%zmm14\n\tvfmadd231ps %%zmm30,%%zmm31,%%zmm15\n\t"
      ::: "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7",
          "xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","xmm14","xmm15");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%.1f\n", n * 16.0 * 32 / s / 1e9);
  return 0;
}
'''


def fma_peak(workdir):
    c = os.path.join(workdir, "fma_peak.c"); exe = os.path.join(workdir, "fma_peak")
    with open(c, "w") as f:
        f.write(PEAK_C)
    subprocess.run(["gcc", "-O2", "-mavx512f", c, "-o", exe], check=True)
    return max(float(subprocess.run([exe], capture_output=True, text=True, check=True).stdout) for _ in range(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts for the SIZE^3 run")
    ap.add_argument("--quick", action="store_true", help="only SIZE^3 + 100x70x33")
    ap.add_argument("--peak", action="store_true", help="measure the AVX-512 FMA peak of one core (gcc)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "cuvil_matmul_bench"))
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    print(f"workdir {a.workdir}; loadavg {os.getloadavg()[0]:.2f}; cpus {os.cpu_count()}")
    if a.peak:
        print(f"single-core AVX-512 FMA peak (gcc microkernel): {fma_peak(a.workdir):.1f} GFLOP/s")
    failures = 0

    def report(tag, prob, fn, timed, reps=a.reps):
        nonlocal failures
        ok, err_np, err64, np_err64 = prob.check(fn)
        failures += not ok
        line = (f"{tag:34s} {'OK  ' if ok else 'FAIL'} max|C-numpy32|={err_np:.2e} "
                f"max|C-fp64|={err64:.2e} (numpy32 vs fp64 {np_err64:.2e})")
        if timed:
            med, best, util = time_fn(prob, fn, reps)
            fl = 2.0 * prob.M * prob.N * prob.K
            line += (f"\n{'':34s} median {med*1e3:8.3f} ms = {fl/med/1e9:6.1f} GFLOP/s (best {fl/best/1e9:6.1f}),"
                     f" cpu/wall {util:.2f}")
        print(line, flush=True)

    S = a.size
    big = Problem("mm", S, S, S)
    for t in [int(x) for x in a.threads.split(",")]:
        so, bt = build(a.workdir, "mm", S, S, S, t, MATMUL_LIB)
        fn = ctypes.CDLL(so)._mlir_ciface_matmul
        report(f"matmul {S}^3 {t} thread(s) [build {bt:.1f}s]", big, fn, True)
        odd = Problem("mm", 100, 70, 33)
        so, _ = build(a.workdir, "mm", 100, 70, 33, t, MATMUL_LIB)
        report(f"matmul 100x70x33 {t} thread(s)", odd, ctypes.CDLL(so)._mlir_ciface_matmul, False)
    if not a.quick:
        for (M, N, K) in [(1, 1, 1), (7, 300, 5), (129, 257, 513), (33, 1000, 17), (8, 32, 1)]:
            so, _ = build(a.workdir, "mm", M, N, K, 1, MATMUL_LIB)
            report(f"matmul {M}x{N}x{K}", Problem("mm", M, N, K), ctypes.CDLL(so)._mlir_ciface_matmul, False)
        for (M, N, K), timed in [((100, 70, 33), False), ((S, S, S), True)]:
            so, _ = build(a.workdir, "mm_bt", M, N, K, 1, MATMUL_LIB)
            report(f"x@W^T (transpose+mm) {M}x{N}x{K}", Problem("mm_bt", M, N, K),
                   ctypes.CDLL(so)._mlir_ciface_matmul, timed)
        for kind in ("mm_bias_relu", "mm_bias"):
            for (M, N, K), timed in [((100, 70, 33), False), ((S, S, S), kind == "mm_bias_relu")]:
                so, _ = build(a.workdir, kind, M, N, K, 1, FUSION_LIB)
                report(f"fused {kind} {M}x{N}x{K}", Problem(kind, M, N, K),
                       ctypes.CDLL(so)._mlir_ciface_matmul, timed)
    print("ALL CORRECTNESS CHECKS PASSED" if failures == 0 else f"{failures} CORRECTNESS CHECK(S) FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
