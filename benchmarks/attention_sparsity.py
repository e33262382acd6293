"""Block-masked attention (`cuvil.attention {layout = #cuvil.block_masked}`)
against the dense `cuvil.attention`, same shapes, one process.

    python benchmarks/attention_sparsity.py                 # defaults below
    python benchmarks/attention_sparsity.py --repeats 20 --blocks 32 4

Shapes: q, k, v = [batch*heads, S, D] with batch*heads = 4, S = T = 512,
D = 64, f32. Block sizes 32x32 and 4x4; densities 100%, 50%, 25%, 12.5% of
the [S/bm, T/bn] block grid (exactly that many blocks, chosen at random with a
fixed seed). Every function is lowered by `cuvil-lower-to-linalg` and the
native pipeline of `cuvil.lowering` (1 thread), like the compile path without
a transform schedule (none matches attention). Reported: median and min of
--repeats timed calls after --warmup calls; each sparse output is checked
against the dense path given the equivalent -inf mask.

Writes benchmarks/results/attention_sparsity.json.
"""
import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def compile_func(src, name="attn"):
    from cuvil import artifact, execution, lowering
    from cuvil.ir import Context, FunctionType, Module, RankedTensorType, UnitAttr

    def spec(type_):
        t = RankedTensorType(type_)
        return execution.TensorSpec(tuple(t.get_dim_size(i) for i in range(t.rank)),
                                    str(t.element_type))

    t0 = time.perf_counter()
    with Context():
        module = Module.parse(src)
        func = module.body.operations[0]
        func.attributes["llvm.emit_c_interface"] = UnitAttr.get()
        lowering.cuvil_ops_to_linalg(module)
        ftype = FunctionType(func.attributes["function_type"].value)
        ins, outs = [spec(t) for t in ftype.inputs], [spec(t) for t in ftype.results]
        lowering.to_llvm_dialect(module, 1)
        llvm_ir = lowering.translate_to_llvm_ir(str(module))
    key = artifact.cache_key(llvm_ir, "attention_sparsity")
    lib = artifact.lookup(key) or artifact.build_shared_library(llvm_ir, key)
    fn = execution.Library(lib).function(name, ins, outs)
    return fn, time.perf_counter() - t0


def attention_src(bh, s, t, d, layout=None, with_mask=False):
    qt, kt = f"tensor<{bh}x{s}x{d}xf32>", f"tensor<{bh}x{t}x{d}xf32>"
    mt = f"tensor<{s}x{t}xf32>"
    args = f"%q: {qt}, %k: {kt}, %v: {kt}" + (f", %m: {mt}" if with_mask else "")
    mask = f" mask(%m : {mt})" if with_mask else ""
    attr = f" {{layout = {layout}}}" if layout else ""
    return (f"func.func @attn({args}) -> {qt} {{\n"
            f"  %0 = cuvil.attention %q, %k, %v{mask}{attr} : {qt}, {kt}, {kt} -> {qt}\n"
            f"  return %0 : {qt}\n}}")


def block_masked(block_mask, block):
    row_ptr = [0] + np.cumsum(block_mask.sum(axis=1)).tolist()
    col_idx = np.nonzero(block_mask)[1].tolist()
    return (f"#cuvil.block_masked<{{block = [{block}, {block}], row_ptr = {row_ptr}, "
            f"col_idx = {col_idx}}}>")


def random_block_mask(rng, n, density):
    count = max(1, round(density * n * n))
    mask = np.zeros(n * n, bool)
    mask[rng.choice(n * n, count, replace=False)] = True
    return mask.reshape(n, n)


def timed(fn, args, warmup, repeats):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bh", type=int, default=4, help="batch * heads")
    parser.add_argument("--seq", type=int, default=512, help="S = T")
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--blocks", type=int, nargs="+", default=[32, 4])
    parser.add_argument("--densities", type=float, nargs="+", default=[1.0, 0.5, 0.25, 0.125])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", default=str(HERE / "results" / "attention_sparsity.json"))
    opts = parser.parse_args()
    if opts.repeats < 10:
        parser.error("--repeats must be >= 10 (the median is reported)")
    os.environ.setdefault("CUVIL_NUM_THREADS", "1")

    bh, s, d = opts.bh, opts.seq, opts.head_dim
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((bh, s, d)).astype(np.float32) for _ in range(3))

    dense, dense_compile = compile_func(attention_src(bh, s, s, d))
    dense_med, dense_min = timed(dense, (q, k, v), opts.warmup, opts.repeats)
    masked, _ = compile_func(attention_src(bh, s, s, d, with_mask=True))
    rows = [dict(path="dense", block=None, density=1.0, blocks=None, median_ms=dense_med * 1e3,
                 min_ms=dense_min * 1e3, compile_s=dense_compile, max_abs_err=0.0)]
    for block in opts.blocks:
        n = s // block
        for density in opts.densities:
            bmask = random_block_mask(rng, n, density)
            fn, compile_s = compile_func(attention_src(bh, s, s, d, block_masked(bmask, block)))
            med, mn = timed(fn, (q, k, v), opts.warmup, opts.repeats)
            # Reference: the dense path with -inf outside the present blocks;
            # query rows without a present block are zeros in both.
            full = np.kron(bmask, np.ones((block, block), bool))
            inf_mask = np.where(full, 0.0, -np.inf).astype(np.float32)
            err = float(np.abs(fn(q, k, v)[0] - masked(q, k, v, inf_mask)[0]).max())
            rows.append(dict(path="block_masked", block=block, density=float(bmask.mean()),
                             blocks=int(bmask.sum()), median_ms=med * 1e3, min_ms=mn * 1e3,
                             compile_s=compile_s, max_abs_err=err))
            print(f"  block {block:>2} density {bmask.mean():6.1%}: {med * 1e3:8.2f} ms", flush=True)

    print(f"\nattention [{bh} x {s} x {d}] f32, S = T = {s}, 1 thread, median of {opts.repeats} "
          f"after {opts.warmup} warm-up calls")
    header = (f"{'path':<13}{'block':>6}{'density':>9}{'blocks':>8}{'median ms':>11}{'min ms':>9}"
              f"{'vs dense':>10}{'vs 100%':>9}{'max|err|':>10}")
    print(header)
    print("-" * len(header))
    full_time = {}
    verdicts = []
    for r in rows:
        if r["path"] == "block_masked" and r["density"] == 1.0:
            full_time[r["block"]] = r["median_ms"]
    for r in rows:
        rel = r["median_ms"] / full_time[r["block"]] if r["block"] in full_time else None
        r["speedup_vs_dense"] = dense_med * 1e3 / r["median_ms"]
        r["time_vs_full_density"] = rel
        print(f"{r['path']:<13}{r['block'] or '-':>6}{r['density']:>9.1%}{r['blocks'] or '-':>8}"
              f"{r['median_ms']:>11.2f}{r['min_ms']:>9.2f}{r['speedup_vs_dense']:>9.2f}x"
              f"{(f'{rel:.2f}' if rel is not None else '-'):>9}{r['max_abs_err']:>10.1e}")
    for block in opts.blocks:
        times = [r["median_ms"] for r in rows if r["block"] == block]
        falls = all(a > b for a, b in zip(times, times[1:]))
        verdicts.append(dict(block=block, time_falls_with_density=falls))
        print(f"block {block}x{block}: time {'falls' if falls else 'does NOT fall'} with density")

    import cuvil
    result = dict(benchmark="attention_sparsity", cuvil=cuvil.__version__, llvm=cuvil.LLVM_VERSION,
                  machine=platform.machine(), processor=platform.processor(),
                  cpus=len(os.sched_getaffinity(0)), threads=1, shape=dict(bh=bh, s=s, t=s, d=d),
                  dtype="f32", repeats=opts.repeats, warmup=opts.warmup, rows=rows,
                  verdicts=verdicts)
    out = Path(opts.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
