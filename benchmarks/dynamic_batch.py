"""One dynamic-batch build vs one static build per batch size, side by side.

    python benchmarks/dynamic_batch.py [--threads 1] [--repeats 20]

Prints a table (median ms, dynamic/static ratio) and writes
results/dynamic_batch.json.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def median_ms(fn, x, repeats):
    for _ in range(3):
        fn(x)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    import cuvil
    import workloads

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    model, _, _ = workloads.build("mlp")
    dynamic = cuvil.compile(model, example_inputs=(torch.randn(2, 1024),), dynamic_dims={0: 0},
                            num_threads=args.threads)
    rows = []
    print(f"MLP 1024-4096-4096-1024, {args.threads} thread(s), median of {args.repeats}")
    print(f"{'batch':>6} {'static ms':>10} {'dynamic ms':>11} {'dyn/static':>10} {'eager ms':>9}")
    for b in args.batches:
        x = torch.randn(b, 1024)
        static = cuvil.compile(model, example_inputs=(x,), num_threads=args.threads)
        with torch.no_grad():
            err = float((dynamic(x) - model(x)).abs().max())
            s, d, e = (median_ms(static, x, args.repeats), median_ms(dynamic, x, args.repeats),
                       median_ms(model, x, args.repeats))
        rows.append(dict(batch=b, static_ms=s, dynamic_ms=d, ratio=d / s, eager_ms=e, max_abs_err=err))
        print(f"{b:>6} {s:>10.2f} {d:>11.2f} {d / s:>10.2f} {e:>9.2f}")
    out = HERE / "results" / "dynamic_batch.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(dict(threads=args.threads, rows=rows), indent=2))


if __name__ == "__main__":
    main()
