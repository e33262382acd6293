"""int8 inference: Cuvil (PT2E static and dynamic; weight-only int8/int4)
against what users would run instead, on the same host, interleaved.

    python benchmarks/int8.py [--threads 1 2] [--rounds 5] [--workloads mlp resnet18 decoder bert]
                              [--systems ...] [--out benchmarks/results/int8.json]
    python benchmarks/int8.py --workloads mlp-decode decoder-token --systems cuvil-fp32 \
        cuvil-int8-weight cuvil-int4-weight eager-fp32 inductor-fp32 torchao-int8-weight   # decode steps

Systems, per workload and thread count:
  cuvil-fp32          cuvil.compile(model): the fp32 baseline
  cuvil-int8          precision="int8", 8 calibration batches (PT2E static)
  cuvil-int8-dynamic  precision="int8-dynamic"
  inductor-int8       torch.compile (freezing) of the same PT2E static model
  ort-fp32            onnxruntime on the fp32 ONNX export
  ort-int8-dynamic    onnxruntime.quantization.quantize_dynamic (QInt8 weights)
  ort-int8-qdq        quantize_static (QDQ, the same 8 calibration batches)
  cuvil-onnx-qdq      cuvil.compile of that same QDQ file (its matmuls on the int8 kernels)
  openvino-int8-qdq   OpenVINO's CPU plugin on that same QDQ file (its low-precision
                      transformations run the Q/DQ-wrapped ops on int8 kernels; the
                      rest at OpenVINO's default precision: bf16 on AMX hosts)
  cuvil-int8-weight   precision="int8-weight" (weight-only, per output channel)
  cuvil-int4-weight   precision="int4-weight" (weight-only, groups of 128)
  eager-fp32, inductor-fp32  PyTorch itself on the fp32 model
  torchao-int8-weight torchao's Int8WeightOnlyConfig, torch.compile'd (what
                      torchao documents for weight-only int8)
The decode workloads (batch 1, one token) are memory-bound: their weights
(100 / 200 MB in fp32) stream from DRAM on every call, where weight-only
int8 reads a quarter of the bytes.
Each row: min and median ms over the rounds (all systems timed in turn in
every round: these VMs' speed swings up to 2x within minutes), and the
relative L2 error against fp32 eager. A system that is not installed or
fails is reported as skipped with the reason, never dropped silently.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # noqa: E402
import models  # noqa: E402
import systems  # noqa: E402
import workloads  # noqa: E402

def _resnet18():
    m = models.ResNet18()
    models.randomize_bn(m)
    return m


WORKLOADS = {
    # name: (model factory, input factory, calls per timed round)
    "mlp": (lambda: models.MLP((1024, 4096, 4096, 1024)), lambda: (torch.randn(64, 1024),), 10),
    "resnet18": (_resnet18, lambda: (torch.randn(1, 3, 224, 224),), 5),
    "decoder": (lambda: models.DecoderBlock(768, 12), lambda: (torch.randn(1, 128, 768),), 10),
    "bert": (lambda: models.LastHidden(models.bert()), lambda: (torch.randint(0, 30000, (1, 128)),), 3),
    # decode steps: one token through large layers
    "mlp-decode": (lambda: models.MLP((1024, 4096, 4096, 1024)), lambda: (torch.randn(1, 1024),), 20),
    "decoder-token": (lambda: models.DecoderBlock(2048, 16), lambda: (torch.randn(1, 1, 2048),), 20),
}


def _calibration(make, n=8):
    torch.manual_seed(1)
    return [make() for _ in range(n)]


def _cuvil(precision):
    def prepare(model, make, threads):
        import cuvil
        example = make()
        cal = _calibration(make) if precision == "int8" else None
        t = time.perf_counter()
        fast = cuvil.compile(model, example_inputs=example, num_threads=threads,
                             precision=precision, calibration=cal)
        return (lambda x: fast(*x)), time.perf_counter() - t
    return prepare


def _inductor_int8(model, make, threads):
    from cuvil.quantize import quantize
    torch.set_num_threads(threads)
    import torch._inductor.config as cfg
    cfg.freezing = True
    torch._dynamo.reset()
    t = time.perf_counter()
    quantized = quantize(model, "int8", make(), _calibration(make))
    fast = torch.compile(quantized)
    with torch.no_grad():
        fast(*make())
    return (lambda x: fast(*x)), time.perf_counter() - t


def _onnx_file(model, make, kind) -> str:
    """The model's ONNX export (fp32), or its onnxruntime quantization:
    quantize_dynamic, or quantize_static in QDQ form (uint8 activations,
    per-channel int8 weights, 8 calibration batches). One file per model
    and kind: ort-int8-qdq and cuvil-onnx-qdq time the same file."""
    import onnxruntime as ort
    from onnxruntime import quantization as q
    key = (id(model), kind)
    if key in _ONNX_FILES:
        return _ONNX_FILES[key]
    path = systems._onnx_export(model, make())
    if kind != "fp32":
        q.quant_pre_process(path, path + ".pre.onnx")
        out = path + f".{kind}.onnx"
        if kind == "int8-dynamic":
            q.quantize_dynamic(path + ".pre.onnx", out, weight_type=q.QuantType.QInt8)
        else:
            name = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_inputs()[0].name

            class Reader(q.CalibrationDataReader):
                def __init__(self):
                    self.batches = iter([{name: b[0].numpy()} for b in _calibration(make)])

                def get_next(self):
                    return next(self.batches, None)
            q.quantize_static(path + ".pre.onnx", out, Reader(), quant_format=q.QuantFormat.QDQ,
                              activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8,
                              per_channel=True)
        path = out
    _ONNX_FILES[key] = path
    return path


_ONNX_FILES: dict = {}


def _ort(kind):
    def prepare(model, make, threads):
        try:
            import onnxruntime as ort
        except ImportError:
            raise systems.Skip("onnxruntime not installed (pip install .[bench])")
        t = time.perf_counter()
        path = _onnx_file(model, make, kind)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        return (lambda x: torch.from_numpy(sess.run(None, {n: v.numpy() for n, v in zip(names, x)})[0])), \
            time.perf_counter() - t
    return prepare


def _cuvil_onnx(kind):
    """cuvil.compile of the ONNX file onnxruntime runs (the QDQ one: its
    matmuls on Cuvil's int8 kernels)."""
    def prepare(model, make, threads):
        try:
            import onnxruntime  # noqa: F401 - it makes the quantized file
        except ImportError:
            raise systems.Skip("onnxruntime not installed (pip install .[bench])")
        import cuvil
        path = _onnx_file(model, make, kind)
        t = time.perf_counter()
        fast = cuvil.compile(path, num_threads=threads)
        fast(*make())
        return (lambda x: fast(*x)), time.perf_counter() - t
    return prepare


def _openvino_qdq(model, make, threads):
    """OpenVINO on the QDQ file onnxruntime runs, with its default settings
    but for the thread count and latency mode: what a user of OpenVINO int8
    would run."""
    try:
        import onnxruntime  # noqa: F401 - it makes the quantized file
        import openvino as ov
    except ImportError as err:
        raise systems.Skip(f"{err.name} not installed (pip install .[bench] openvino)")
    path = _onnx_file(model, make, "int8-qdq")
    t = time.perf_counter()
    compiled = ov.Core().compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                     "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()

    def run(x):
        request.infer([v.numpy() for v in x])
        return torch.from_numpy(request.get_output_tensor(0).data.copy())
    run(make())
    return run, time.perf_counter() - t


def _eager(model, make, threads):
    torch.set_num_threads(threads)
    return (lambda x: model(*x)), 0.0


def _inductor_fp32(model, make, threads):
    torch.set_num_threads(threads)
    torch._dynamo.reset()
    t = time.perf_counter()
    fast = torch.compile(model)
    with torch.no_grad():
        fast(*make())
    return (lambda x: fast(*x)), time.perf_counter() - t


def _torchao_int8_weight(model, make, threads):
    import copy
    try:
        from torchao.quantization import Int8WeightOnlyConfig, quantize_
    except ImportError:
        raise systems.Skip("torchao not installed (pip install .[quant])")
    torch.set_num_threads(threads)
    torch._dynamo.reset()
    t = time.perf_counter()
    quantized = copy.deepcopy(model)
    quantize_(quantized, Int8WeightOnlyConfig())
    fast = torch.compile(quantized)
    with torch.no_grad():
        fast(*make())
    return (lambda x: fast(*x)), time.perf_counter() - t


SYSTEMS = {"cuvil-fp32": _cuvil("fp32"), "cuvil-int8": _cuvil("int8"),
           "cuvil-int8-weight": _cuvil("int8-weight"), "cuvil-int4-weight": _cuvil("int4-weight"),
           "eager-fp32": _eager, "inductor-fp32": _inductor_fp32, "torchao-int8-weight": _torchao_int8_weight,
           "cuvil-int8-dynamic": _cuvil("int8-dynamic"), "inductor-int8": _inductor_int8,
           "ort-fp32": _ort("fp32"), "ort-int8-dynamic": _ort("int8-dynamic"), "ort-int8-qdq": _ort("int8-qdq"),
           "cuvil-onnx-qdq": _cuvil_onnx("int8-qdq"), "openvino-int8-qdq": _openvino_qdq}


def host() -> dict:
    model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    flags = set(next((ln.split(":", 1)[1].split() for ln in open("/proc/cpuinfo") if ln.startswith("flags")), []))
    wanted = ["avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16"]
    return {"cpu": model, "flags": [f for f in wanted if f in flags], "nproc": os.cpu_count(),
            "python": platform.python_version(), "torch": torch.__version__,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True, cwd=Path(__file__).parent).stdout.strip()}


def run_workload(name, threads, rounds, only):
    factory, make, calls = WORKLOADS[name]
    torch.manual_seed(0)
    model = factory().eval()
    torch.set_num_threads(threads)
    x = make()
    with torch.no_grad():
        want = model(*x)
    flops = workloads.count_flops(model, x)
    runners, rows = {}, {}
    for sys_name, prepare in SYSTEMS.items():
        if only and sys_name not in only:
            continue
        try:
            run, compile_s = prepare(model, make, threads)
            with torch.no_grad():
                got = run(x)
            err = float((got - want).norm() / want.norm())
            runners[sys_name] = run
            rows[sys_name] = {"compile_s": round(compile_s, 2), "rel_l2_vs_fp32": err, "ms": []}
        except Exception as err:  # noqa: BLE001 - every failure is reported, with its reason
            rows[sys_name] = {"skipped": f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"}
        print(f"  {name} x{threads} {sys_name}: {rows[sys_name]}", flush=True)
    torch.set_num_threads(threads)
    for _ in range(rounds):
        for sys_name, run in runners.items():
            with torch.no_grad():
                run(x)
                t = time.perf_counter()
                for _ in range(calls):
                    run(x)
            rows[sys_name]["ms"].append((time.perf_counter() - t) / calls * 1e3)
    for row in rows.values():
        if "ms" in row:
            row["min_ms"], row["median_ms"] = min(row["ms"]), statistics.median(row["ms"])
            row["gops"] = flops / row["median_ms"] * 1e-6
    return rows


#: Systems whose contractions run on the int8 units (weight-only ones compute in float).
INT8_COMPUTE = {"cuvil-int8", "cuvil-int8-dynamic", "inductor-int8", "ort-int8-dynamic", "ort-int8-qdq",
                "cuvil-onnx-qdq", "openvino-int8-qdq"}


def table(results, roofs) -> str:
    """The results as markdown; `roofs`: per thread count the host's int8
    roof per thread (machine.reduced_precision_roofs), or None."""
    lines = ["| workload | threads | system | min ms | median ms | vs cuvil-fp32 (median) | GOP/s | % int8 roof "
             "| rel. L2 vs fp32 | compile s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        base = r["rows"].get("cuvil-fp32", {}).get("median_ms")
        roof = roofs.get(r["threads"])
        for name, row in r["rows"].items():
            if "skipped" in row:
                lines.append(f"| {r['workload']} | {r['threads']} | {name} | skipped: {row['skipped']} | | | | | | |")
                continue
            speed = f"{base / row['median_ms']:.2f}x" if base else ""
            peak = f"{row['gops'] / (r['threads'] * roof[1]):.0%}" if roof and name in INT8_COMPUTE else ""
            lines.append(f"| {r['workload']} | {r['threads']} | {name} | {row['min_ms']:.2f} | {row['median_ms']:.2f} "
                         f"| {speed} | {row['gops']:.0f} | {peak} | {row['rel_l2_vs_fp32']:.1e} | {row['compile_s']} |")
    return "\n".join(lines)


def roof_note(roofs) -> str:
    probed = [f"{t} thread(s): {rate:.0f} {machine.ROOF_NAMES[key]} per thread" for t, (key, rate) in sorted(roofs.items())]
    return ("int8 roof probed at the start (machine.py; AMX tiles where the host has them, else vpdpbusd): "
            + "; ".join(probed) + ". GOP/s counts a multiply and an add per multiply-add of the fp32 model's "
            "matmuls and convolutions; % int8 roof only for the systems computing in int8.") if probed else \
        "The host has no int8 dot-product or AMX unit: no int8 roof."


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    p.add_argument("--systems", nargs="+", default=None, choices=list(SYSTEMS))
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "int8.json"))
    args = p.parse_args(argv)
    meta = host()
    print(f"host: {meta['cpu']} {meta['flags']}", flush=True)
    roofs = {}
    for threads in args.threads:
        roof = machine.reduced_precision_roofs(machine.snapshot(threads)).get("int8")
        if roof is not None:
            roofs[threads] = roof
    meta["int8_roof_per_thread"] = {t: {"probe": key, "gops": rate} for t, (key, rate) in roofs.items()}
    results = []
    for name in args.workloads:
        for threads in args.threads:
            results.append({"workload": name, "threads": threads,
                            "rows": run_workload(name, threads, args.rounds, args.systems)})
    md = table(results, roofs) + "\n\n" + roof_note(roofs)
    print(md)
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    Path(args.out).with_suffix(".md").write_text(f"host: {meta['cpu']}, {meta['flags']}\n\n{md}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
