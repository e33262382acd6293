"""Per-kernel profile of a benchmark workload compiled by Cuvil: where the
time of one call goes, kernel by kernel (cuvil.profiling). (Named so as not
to shadow the standard library's `profile`, which torch imports.)

    python benchmarks/kernel_profile.py gpt2-small [--threads 1] [--runs 20] [--top 15] [--precision bf16]

Prints the table and writes results/profile-<workload>-<threads>thr.json.
The timers add a clock read per kernel call (~50 ns; GPT-2 makes ~400 calls),
so the wall time is within noise of the uninstrumented build's.
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main():
    import torch

    import cuvil
    import workloads

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", choices=workloads.WORKLOADS)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--precision", default="fp32", help="cuvil.compile's precision= (fp32, bf16, fp16, int8 calibrated on the inputs, ...)")
    p.add_argument("--out", default=None, help="JSON path (default results/profile-W-Tthr.json)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    model, inputs, flops = workloads.build(args.workload)
    with torch.no_grad():
        # Static int8 observes activation ranges: the example inputs calibrate.
        calibration = [tuple(inputs)] if args.precision == "int8" else None
        fast = cuvil.compile(model, inputs, num_threads=args.threads, profile=True,
                             precision=args.precision, calibration=calibration)
        err = (torch.as_tensor(fast(*inputs)) - model(*inputs)).abs().max().item()
        profile = fast.profile(*inputs, runs=args.runs)
    print(f"{args.workload} ({args.precision}), {args.threads} thread(s), {profile.runs} runs: "
          f"{profile.wall_ms_per_run:.2f} ms per call, {flops / profile.wall_ms_per_run * 1e-6:.0f} GFLOP/s, "
          f"max |cuvil - eager| = {err:.1e}")
    print(profile.table(top=args.top))
    out = Path(args.out or HERE / "results" / f"profile-{args.workload}-{args.threads}thr.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(profile.to_json())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
