"""fp32 matmul GFLOP/s: Cuvil's schedule vs PyTorch eager vs numpy, same run.

    python benchmarks/matmul.py [--threads 1 2] [--repeats 20]

Shapes: 1024^3 and the GEMMs of BERT-base (seq 128) and the benchmark MLP
(batch 64). Each thread count runs in its own process so that numpy's
OpenBLAS and PyTorch start with that many threads. Prints a table with
ratios and writes results/matmul.json. The machine's fp32 FMA roof:
`python benchmarks/machine.py` (117 GFLOP/s per core on the Zen 4 test VM).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHAPES = [(1024, 1024, 1024), (128, 768, 768), (128, 768, 3072), (128, 3072, 768),
          (64, 1024, 4096), (64, 4096, 4096), (64, 4096, 1024)]


def timed(fn, repeats):
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def child(threads, repeats):
    import numpy as np
    import torch

    import cuvil

    torch.set_num_threads(threads)

    class MatMul(torch.nn.Module):
        def forward(self, a, b):
            return a @ b

    rows = []
    for m, k, n in SHAPES:
        a, b = torch.randn(m, k), torch.randn(k, n)
        an, bn = a.numpy(), b.numpy()
        fast = cuvil.compile(MatMul(), example_inputs=(a, b), num_threads=threads)
        err = float((fast(a, b) - a @ b).abs().max())
        flops = 2 * m * k * n
        res = dict(shape=f"{m}x{k}x{n}", threads=threads, max_abs_err=err)
        for name, fn in (("cuvil", lambda: fast(a, b)), ("eager", lambda: a @ b),
                         ("numpy", lambda: an @ bn)):
            res[name] = flops / timed(fn, repeats) / 1e9
        rows.append(res)
    print(json.dumps(rows))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child, args.repeats)
    rows = []
    for t in args.threads:
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
        env.update(OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS=str(t), CUVIL_NUM_THREADS=str(t))
        out = subprocess.run([sys.executable, __file__, "--child", str(t), "--repeats", str(args.repeats)],
                             capture_output=True, text=True, env=env, check=True).stdout
        rows += json.loads(out.strip().splitlines()[-1])
    print(f"{'shape':>16} {'thr':>3} {'cuvil':>7} {'eager':>7} {'numpy':>7} {'cuvil/eager':>11} {'cuvil/numpy':>11}  GFLOP/s")
    for r in rows:
        print(f"{r['shape']:>16} {r['threads']:>3} {r['cuvil']:>7.1f} {r['eager']:>7.1f} {r['numpy']:>7.1f} "
              f"{r['cuvil'] / r['eager']:>11.2f} {r['cuvil'] / r['numpy']:>11.2f}")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "matmul.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
