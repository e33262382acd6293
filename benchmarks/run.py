"""Side-by-side benchmark of Cuvil against the systems users would pick
instead, on every workload, 1 and 2 threads, in one run.

    python benchmarks/run.py                       # everything
    python benchmarks/run.py --workloads mlp --systems eager cuvil --threads 1
    python benchmarks/run.py --workloads mlp --systems cuvil cuvil-bf16 --rounds 3   # ABAB...

Each (workload, system, threads) runs in its own process (clean peak-memory
numbers, no cross-talk between runtimes). Reports median and min latency over
--repeats runs after warm-up, GFLOP/s (matmul and convolution FLOPs), compile
time (cold; for Cuvil also cached: a fresh process finding the library in the
cache, the median of three, benchmarks/warm_start.py), peak RSS and max |error|
vs eager (of the first call and of a call after the timed ones). Next to every
measurement the child also probes the machine on the same number of threads
(machine.py: fp32 FMA roof, the bf16 / int8 roofs of the host's dot-product
instructions and AMX tiles, L3 read bandwidth, with 2+ threads the
core-to-core handoff latency), before and after timing:
"% peak" is the GFLOP/s against the lower FMA roof (-bf16 rows: the lower bf16
roof of the unit bf16 kernels run on, AMX where the host has it), and a probe more than 15%
worse than the best of that probe in the whole run flags the row as measured
on a busy machine (a shared host's cores or caches taken by its neighbours,
or its two vCPUs placed on two core complexes).
With --rounds N the systems of one (workload, threads) run one after the
other N times (A B C A B C ...: these VMs' speed swings up to 2x between
minutes); a row then reports the median of the rounds' medians, the min of
their mins, and "vs cuvil" per round (min..median of the ratios).
Writes results/latest.json, results/latest.md and results/latest.png (if
matplotlib is installed).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def measure_one(workload, system, threads, repeats, warmup):
    import torch
    from torch.utils import _pytree as pytree

    import machine
    import systems
    import workloads

    model, inputs, flops = workloads.build(workload)
    torch.set_num_threads(threads)
    with torch.no_grad():
        reference = model(*inputs)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        run, stats = systems.SYSTEMS[system](model, inputs, threads, workload)
        out = run()
        for _ in range(warmup):
            run()
        before = machine.snapshot(threads)
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        after = machine.snapshot(threads)
        last = run()
    want = [t for t in pytree.tree_leaves(reference) if isinstance(t, torch.Tensor)]
    # The first output and one after every timed call: a system whose state
    # drifts from call to call shows here.
    err = max(float((g.float() - w.float()).abs().max())
              for out_i in (out, last)
              for g, w in zip([t for t in pytree.tree_leaves(out_i) if isinstance(t, torch.Tensor)], want))
    med = statistics.median(times)
    result = dict(workload=workload, system=system, threads=threads, median_ms=med * 1e3,
                  min_ms=min(times) * 1e3, runs=repeats, max_abs_err=err,
                  peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  rss_growth_mb=(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024,
                  machine={k: [before[k], after[k]] for k in before}, **stats)
    if flops:
        result["gflops"] = flops / med / 1e9
        # bf16 systems against the roof of the unit bf16 kernels run on: AMX
        # tiles where the host has them, else the bf16 dot product, else FMA.
        roof = "fma_gflops"
        if system.endswith("-bf16"):
            roof = next((k for k in ("amx_bf16_gflops", "bf16_gflops") if k in result["machine"]), roof)
        result["peak_fraction"] = result["gflops"] / (threads * min(result["machine"][roof]))
        result["roof"] = roof
    return result


def run_child(workload, system, threads, args):
    """One (workload, system, threads) in its own process group, with a
    scratch folder this process removes: a child killed at the timeout
    takes its own children (warm starts) with it and leaves no exports."""
    import shutil
    import signal
    import tempfile
    cmd = [sys.executable, __file__, "--child", workload, system, str(threads),
           "--repeats", str(args.repeats), "--warmup", str(args.warmup)]
    scratch = tempfile.mkdtemp(prefix="cuvil-bench-")
    # The child's temporary files (torch makes its inductor cache dir there
    # at import) go into the scratch folder too.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), CUVIL_NUM_THREADS=str(threads),
               CUVIL_BENCH_SCRATCH=scratch, TMPDIR=scratch)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return dict(workload=workload, system=system, threads=threads,
                    error=f"timed out after {args.timeout} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    lines = [l for l in stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (stderr.strip().splitlines() or ["?"])[-1][:200]
        return dict(workload=workload, system=system, threads=threads, error=tail)
    return json.loads(lines[-1])


def merge_rounds(rounds):
    """One row from the same (workload, system, threads) measured in several
    rounds: median of the medians, min of the mins, the rest from the round
    with the median median; `round_ms` keeps every round's median."""
    ok = [r for r in rounds if "median_ms" in r]
    if not ok:
        return rounds[-1]
    ok.sort(key=lambda r: r["median_ms"])
    row = dict(ok[len(ok) // 2])
    row["median_ms"] = statistics.median(r["median_ms"] for r in ok)
    row["min_ms"] = min(r["min_ms"] for r in ok)
    row["round_ms"] = [r["median_ms"] for r in rounds if "median_ms" in r]
    row["rounds"] = len(ok)
    if "gflops" in row:   # rescaled from the picked round's median to the merged one
        scale = ok[len(ok) // 2]["median_ms"] / row["median_ms"]
        row["gflops"] *= scale
        row["peak_fraction"] *= scale
    return row


def ratios_vs(results, base="cuvil"):
    """{(workload, system, threads): (min, median)} of the system's time /
    base's time, round by round (rounds measured side by side): > 1 where
    base is faster."""
    out = {}
    index = {(r["workload"], r["system"], r["threads"]): r for r in results}
    for (w, s, t), r in index.items():
        b = index.get((w, base, t))
        if not b or "round_ms" not in r or "round_ms" not in b or s == base:
            continue
        ratios = [sm / bm for bm, sm in zip(b["round_ms"], r["round_ms"])]
        if ratios:
            out[(w, s, t)] = (min(ratios), statistics.median(ratios))
    return out


def best_machine(results, start) -> dict:
    """{threads: the best value of each machine probe seen in the run} (highest
    rate, lowest latency): what the machine can do when nothing interferes."""
    best = {t: dict(snap) for t, snap in (start or {}).items()}
    for r in results:
        for k, values in r.get("machine", {}).items():
            pick = min if k.endswith("_ns") else max
            ref = best.setdefault(r["threads"], {})
            ref[k] = pick([ref.get(k, values[0])] + list(values))
    return best


def markdown(results, start=None):
    """The table; rows measured while a machine probe was well below the
    best the run saw for that thread count are flagged "busy"."""
    import machine
    best = best_machine(results, start)
    rows = ["| workload | threads | system | median ms | min ms | GFLOP/s | % peak | vs eager | its time / cuvil's (min..med) | compile cold s | cached s | max err |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    vs_cuvil = ratios_vs(results)
    eager = {(r["workload"], r["threads"]): r.get("median_ms") for r in results if r["system"] == "eager"}
    for r in results:
        if "error" in r or "skipped" in r:
            rows.append(f"| {r['workload']} | {r['threads']} | {r['system']} | "
                        f"{'skipped' if 'skipped' in r else 'failed'}: {r.get('skipped') or r.get('error')} |||||||||")
            continue
        base = eager.get((r["workload"], r["threads"]))
        speedup = f"{base / r['median_ms']:.2f}x" if base else ""
        peak = f"{100 * r['peak_fraction']:.0f}%" if "peak_fraction" in r else ""
        if "machine" in r:
            worst = {k: (max(v) if k.endswith("_ns") else min(v)) for k, v in r["machine"].items()}
            busy = machine.degraded(worst, best[r["threads"]])
            if busy:
                peak += " (busy: " + ", ".join(f"{k} {worst[k]:.0f}" for k in busy) + ")"
        ratio = vs_cuvil.get((r["workload"], r["system"], r["threads"]))
        versus = f"{ratio[0]:.2f}..{ratio[1]:.2f}" if ratio else ""
        rows.append(
            f"| {r['workload']} | {r['threads']} | {r['system']} | {r['median_ms']:.2f} | {r['min_ms']:.2f} | "
            f"{r.get('gflops', float('nan')):.0f} | {peak} | {speedup} | {versus} | "
            f"{r.get('compile_cold_s', float('nan')):.2f} | "
            f"{r.get('compile_cached_s', float('nan')):.2f} | {r['max_abs_err']:.1e} |".replace("nan", ""))
    footer = ""
    if start:
        probes = "; ".join(f"{t} thread(s): {p['fma_gflops']:.0f} GFLOP/s FMA, "
                           + (f"{p['bf16_gflops']:.0f} GFLOP/s bf16 dot product, " if "bf16_gflops" in p else "")
                           + (f"{p['int8_gops']:.0f} GOP/s int8 dot product, " if "int8_gops" in p else "")
                           + (f"{p['amx_bf16_gflops']:.0f} GFLOP/s bf16 AMX, " if "amx_bf16_gflops" in p else "")
                           + (f"{p['amx_int8_gops']:.0f} GOP/s int8 AMX, " if "amx_int8_gops" in p else "")
                           + f"{p['l3_read_gbps']:.0f} GB/s "
                           "L3 read per thread" + (f", {p['handoff_ns']:.0f} ns core-to-core handoff"
                                                   if "handoff_ns" in p else "")
                           for t, p in sorted(start.items()))
        footer = (f"\nMachine at the start of the run: {probes}. % peak = GFLOP/s / (threads x the FMA "
                  "roof probed next to that row; -bf16 rows: the AMX bf16 roof on hosts with AMX, else the bf16 dot-product roof). \"busy\": a probe next to that row was more than 15% "
                  "worse than the best of that probe in this run (handoff: another placement of the "
                  "two vCPUs on the host, e.g. 30 vs 170 ns).\n")
    return "\n".join(rows) + "\n" + footer


def chart(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ok = [r for r in results if "median_ms" in r]
    eager = {(r["workload"], r["threads"]): r["median_ms"] for r in ok if r["system"] == "eager"}
    keys = sorted({(r["workload"], r["threads"]) for r in ok})
    systems = sorted({r["system"] for r in ok})
    fig, ax = plt.subplots(figsize=(max(6, len(keys) * 1.4), 4))
    width = 0.8 / max(1, len(systems))
    for i, s in enumerate(systems):
        ys = []
        for k in keys:
            r = next((r for r in ok if (r["workload"], r["threads"]) == k and r["system"] == s), None)
            ys.append(eager[k] / r["median_ms"] if r and k in eager else 0)
        ax.bar([j + i * width for j in range(len(keys))], ys, width, label=s)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
    ax.set_xticklabels([f"{w}\n{t} thr" for w, t in keys], fontsize=8)
    ax.set_ylabel("speed-up over PyTorch eager (higher is better)")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    import systems
    import workloads

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", nargs="+", default=list(workloads.WORKLOADS))
    p.add_argument("--systems", nargs="+", default=list(systems.SYSTEMS))
    p.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds of the systems (ABAB...)")
    p.add_argument("--out", default=str(HERE / "results" / "latest"))
    p.add_argument("--child", nargs=3, metavar=("WORKLOAD", "SYSTEM", "THREADS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        w, s, t = args.child
        try:
            print(json.dumps(measure_one(w, s, int(t), args.repeats, args.warmup)))
        except systems.Skip as skip:
            print(json.dumps(dict(workload=w, system=s, threads=int(t), skipped=str(skip))))
        return
    import machine

    start = {t: machine.snapshot(t) for t in sorted(set(args.threads))}
    for t, snap in start.items():
        print(f"machine, {t} thread(s): " + ", ".join(f"{k} {v:.1f}" for k, v in snap.items()), flush=True)
    results = []
    for w in args.workloads:
        for t in args.threads:
            rounds = {s: [] for s in args.systems}
            for k in range(args.rounds):
                for s in args.systems:
                    if rounds[s] and "median_ms" not in rounds[s][-1]:
                        continue   # skipped or failed: once is enough
                    r = run_child(w, s, t, args)
                    rounds[s].append(r)
                    status = (f"{r['median_ms']:.2f} ms" if "median_ms" in r else
                              f"skipped: {r['skipped']}" if "skipped" in r else f"FAILED: {r['error']}")
                    print(f"{w:>10} {t} thr {s:>13} round {k + 1}: {status}", flush=True)
            results += [merge_rounds(rounds[s]) for s in args.systems]
    table = markdown(results, start)
    print("\n" + table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), cpu=os.uname().machine, nproc=os.cpu_count(),
                machine_at_start={str(t): snap for t, snap in start.items()})
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, results=results), indent=2))
    out.with_suffix(".md").write_text(table)
    if chart(results, out.with_suffix(".png")):
        print(f"wrote {out.with_suffix('')}.json, .md, .png")


if __name__ == "__main__":
    main()
