"""Per-layer profile of a benchmark workload run by OpenVINO (its PERF_COUNT
counters): the peer's side of kernel_profile.py. Side by side they say which
of Cuvil's kernels lose time against which of OpenVINO's layers, where the
whole-model ratio alone does not (its layers fuse their quantize, ReLU and
residual add into the conv, so compare a conv layer with Cuvil's gather +
contraction + epilogue kernels of that conv).

    python benchmarks/openvino_profile.py resnet18 [--precision int8] [--threads 1] [--runs 50] [--top 25]

--precision: fp32 / bf16 run the PyTorch model converted by
openvino.convert_model with INFERENCE_PRECISION_HINT (what run.py's openvino
and openvino-bf16 rows time); int8 runs the QDQ file int8.py's
openvino-int8-qdq row times (onnxruntime's quantize_static; needs
onnxruntime). Prints the layers slowest first (mean real time per call of
each layer's counter; node name, node type, the primitive OpenVINO picked),
the time per primitive kind, the sum of the counters and the wall time of a
call, and writes the same as JSON (results/openvino-profile-W-P-Tthr.json).
"""
import argparse
import collections
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def compiled_model(workload: str, precision: str, threads: int):
    """OpenVINO's compiled model of `workload` with its counters on, and the
    inputs to feed it."""
    import openvino as ov

    import workloads
    model, inputs, _ = workloads.build(workload)
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "PERF_COUNT": "YES"}
    if precision == "int8":
        import int8
        source = int8._onnx_file(model, lambda: inputs, "int8-qdq")
    else:
        import systems
        config["INFERENCE_PRECISION_HINT"] = {"fp32": "f32", "bf16": "bf16"}[precision]
        source = systems.openvino_model(model, inputs)
    return ov.Core().compile_model(source, "CPU", config), [x.numpy() for x in inputs]


def profile(compiled, feed, runs: int, warmup: int = 10) -> dict:
    """Mean milliseconds per call of each layer (node name, type, primitive)
    over `runs` calls, and of the calls themselves."""
    request = compiled.create_infer_request()
    for _ in range(warmup):
        request.infer(feed)
    layers = collections.defaultdict(float)
    wall = 0.0
    for _ in range(runs):
        t = time.perf_counter()
        request.infer(feed)
        wall += time.perf_counter() - t
        for info in request.get_profiling_info():
            layers[(info.node_name, info.node_type, info.exec_type)] += info.real_time.total_seconds() * 1e3
    rows = [{"layer": name, "type": kind, "primitive": primitive, "ms": ms / runs}
            for (name, kind, primitive), ms in layers.items() if ms > 0]
    rows.sort(key=lambda r: -r["ms"])
    return {"runs": runs, "wall_ms_per_call": wall * 1e3 / runs, "layers": rows}


def table(result: dict, top: int) -> str:
    rows = result["layers"]
    if not rows:   # a plugin that reports no counters (PERF_COUNT not honoured)
        return f"no layer counters; {result['wall_ms_per_call']:.3f} ms per call"
    total = sum(r["ms"] for r in rows)
    lines = [f"{'ms/call':>8} {'share':>6}  layer | type | primitive"]
    lines += [f"{r['ms']:8.3f} {r['ms'] / total:6.1%}  {r['layer']} | {r['type']} | {r['primitive']}"
              for r in rows[:top]]
    if len(rows) > top:
        rest = sum(r["ms"] for r in rows[top:])
        lines.append(f"{rest:8.3f} {rest / total:6.1%}  ({len(rows) - top} more layers)")
    by_primitive = collections.Counter()
    for r in rows:
        by_primitive[r["primitive"]] += r["ms"]
    lines.append("per primitive: " + ", ".join(f"{k} {v:.3f}" for k, v in by_primitive.most_common()))
    lines.append(f"{total:8.3f}          (sum of the layers' counters)")
    lines.append(f"{result['wall_ms_per_call']:8.3f}          (wall time of a call)")
    return "\n".join(lines)


def main():
    import torch

    import workloads
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", choices=workloads.WORKLOADS)
    p.add_argument("--precision", choices=("fp32", "bf16", "int8"), default="fp32")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--out", default=None, help="JSON path (default results/openvino-profile-W-P-Tthr.json)")
    args = p.parse_args()
    try:
        import openvino  # noqa: F401
    except ImportError:
        sys.exit("openvino is not installed (pip install openvino)")
    torch.set_num_threads(args.threads)
    compiled, feed = compiled_model(args.workload, args.precision, args.threads)
    result = profile(compiled, feed, args.runs)
    result.update(workload=args.workload, precision=args.precision, threads=args.threads)
    print(f"{args.workload} ({args.precision}) on OpenVINO, {args.threads} thread(s), {args.runs} runs:")
    print(table(result, args.top))
    out = Path(args.out or HERE / "results" / f"openvino-profile-{args.workload}-{args.precision}-{args.threads}thr.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
