"""The systems compared: each `prepare(model, inputs, threads, workload)`
returns a callable running the model and the compile times it took. A system
that is not installed raises Skip."""
import atexit
import functools
import os
import shutil
import tempfile
import time

import torch


class Skip(Exception):
    pass


@functools.lru_cache(maxsize=None)
def _scratch() -> str:
    """This process's scratch folder (ONNX exports, IREE's MLIR, Cuvil's
    cache): the exports of BERT and GPT-2 are 0.5-1.4 GB each, and a full run
    makes twenty of them. run.py passes one it removes after the child (also
    when it had to kill it); otherwise one removed when this process exits."""
    if os.environ.get("CUVIL_BENCH_SCRATCH"):
        return os.environ["CUVIL_BENCH_SCRATCH"]
    folder = tempfile.mkdtemp(prefix="cuvil-bench-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def eager(model, inputs, threads, workload):
    torch.set_num_threads(threads)
    return (lambda: model(*inputs)), {}


def inductor(model, inputs, threads, workload):
    torch.set_num_threads(threads)
    import torch._inductor.config as cfg
    cfg.freezing = True
    torch._dynamo.reset()
    fast = torch.compile(model)
    t = time.perf_counter()
    with torch.no_grad():
        fast(*inputs)
    return (lambda: fast(*inputs)), {"compile_cold_s": time.perf_counter() - t}


def _onnx_export(model, inputs) -> str:
    """The model as an ONNX file (opset 17), shared by onnxruntime, IREE,
    OpenVINO's and Cuvil's ONNX rows."""
    path = os.path.join(tempfile.mkdtemp(dir=_scratch()), "model.onnx")
    try:
        torch.onnx.export(model, inputs, path, dynamo=False, opset_version=17)
    except Exception as err:  # noqa: BLE001 - exporter failures vary by model
        # The TorchScript exporter lacks some ops (GPT-2's aten::diff); the
        # torch.export-based one may have them.
        try:
            torch.onnx.export(model, inputs, path, dynamo=True, opset_version=18)
        except Exception:  # noqa: BLE001
            raise Skip(f"ONNX export failed: {type(err).__name__}: {str(err)[:120]}")
    return path


def onnxruntime(model, inputs, threads, workload):
    try:
        import onnxruntime as ort
    except ImportError:
        raise Skip("onnxruntime not installed (pip install .[bench])")
    t = time.perf_counter()
    path = _onnx_export(model, inputs)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    feed = {n: x.numpy() for n, x in zip(names, inputs)}
    compile_s = time.perf_counter() - t

    def run():
        return torch.from_numpy(sess.run(None, feed)[0])
    return run, {"compile_cold_s": compile_s}


def iree(model, inputs, threads, workload):
    """ONNX -> iree-import-onnx -> iree-compile (llvm-cpu, host CPU) -> the
    local-task driver with `threads` worker threads."""
    import subprocess
    try:
        import iree.compiler as ireec
        import iree.runtime as ireert
    except ImportError:
        raise Skip("IREE not installed (pip install iree-base-compiler iree-base-runtime)")
    importer = shutil.which("iree-import-onnx") or os.path.join(
        os.path.dirname(os.path.realpath(__import__("sys").executable)), "iree-import-onnx")
    t = time.perf_counter()
    path = _onnx_export(model, inputs)
    mlir = path.replace(".onnx", ".mlir")
    proc = subprocess.run([importer, path, "-o", mlir], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Skip(f"iree-import-onnx failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:120]}")
    try:
        vmfb = ireec.compile_file(mlir, target_backends=["llvm-cpu"],
                                  extra_args=["--iree-llvmcpu-target-cpu=host"])
    except Exception as err:  # noqa: BLE001 - compiler diagnostics
        raise Skip(f"iree-compile failed: {str(err).strip().splitlines()[-1][:120]}")
    ireert.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(config.vm_instance, vmfb))
    module = ctx.modules.module
    entry = next(n for n in ("main_graph", "main", "forward") if n in module.vm_module.function_names)
    fn = module[entry]
    feed = [x.numpy() for x in inputs]
    compile_s = time.perf_counter() - t

    def run():
        out = fn(*feed)
        out = out[0] if isinstance(out, (tuple, list)) else out
        return torch.from_numpy(out.to_host())
    return run, {"compile_cold_s": compile_s}


# Fresh processes timed per row (the median is reported); 0 skips them
# (CUVIL_BENCH_WARM_STARTS=0: a shorter run with cold compile times only).
WARM_STARTS = int(os.environ.get("CUVIL_BENCH_WARM_STARTS", "3"))


def _warm_start(workload, threads, precision="fp32") -> float:
    """Seconds `cuvil.compile` takes in a fresh process that finds the
    library in the cache (benchmarks/warm_start.py): the median of
    WARM_STARTS processes."""
    import json
    import statistics
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_start.py")
    seconds = []
    for _ in range(WARM_STARTS):
        proc = subprocess.run([sys.executable, script, workload, str(threads), precision], capture_output=True,
                              text=True, env=dict(os.environ))
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
            raise RuntimeError(f"warm start of {workload} failed: {tail}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        if result["cache_hit"] != 1.0:
            raise RuntimeError(f"warm start of {workload} missed the cache")
        seconds.append(result["compile_s"])
    return statistics.median(seconds)


def cuvil(model, inputs, threads, workload, precision="fp32"):
    import cuvil as cv
    os.environ["CUVIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=_scratch())
    t = time.perf_counter()
    fast = cv.compile(model, example_inputs=inputs, num_threads=threads, precision=precision)
    cold = time.perf_counter() - t
    # Cached: a restarted process finding the library in the cache; the cold
    # compile above wrote it.
    stats = {"compile_cold_s": cold}
    if WARM_STARTS:
        stats["compile_cached_s"] = _warm_start(workload, threads, precision)
    stats.update({f"stage_{k}_s": v for k, v in fast.stats.items() if k != "cache_hit"})
    return (lambda: fast(*inputs)), stats


def cuvil_onnx(model, inputs, threads, workload):
    """Cuvil on the ONNX file onnxruntime runs (the same export): its ONNX
    front end against its PyTorch one, and against onnxruntime on one file."""
    import cuvil as cv
    os.environ["CUVIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=_scratch())
    path = _onnx_export(model, inputs)
    t = time.perf_counter()
    fast = cv.compile(path, num_threads=threads)
    feed = [x.numpy() for x in inputs]
    fast(*feed)
    stats = {"compile_cold_s": time.perf_counter() - t}
    stats.update({f"stage_{k}_s": v for k, v in fast.stats.items() if k != "cache_hit"})

    def run():
        out = fast(*feed)
        return torch.from_numpy(out[0] if isinstance(out, tuple) else out)
    return run, stats


def _openvino_runner(source, inputs, threads, precision, t0):
    """OpenVINO's CPU plugin compiling `source` (a converted model or an ONNX
    path) with INFERENCE_PRECISION_HINT = `precision`; the runner and its compile time."""
    import openvino as ov
    compiled = ov.Core().compile_model(source, "CPU", {"INFERENCE_PRECISION_HINT": precision,
                                                       "INFERENCE_NUM_THREADS": threads,
                                                       "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    feed = [x.numpy() for x in inputs]
    compile_s = time.perf_counter() - t0

    def run():
        request.infer(feed)
        return torch.from_numpy(request.get_output_tensor(0).data.copy())
    return run, {"compile_cold_s": compile_s}


def _require_openvino():
    try:
        import openvino  # noqa: F401
    except ImportError:
        raise Skip("openvino not installed (pip install openvino)")


def openvino_onnx(model, inputs, threads, workload):
    """OpenVINO's CPU plugin reading the ONNX file onnxruntime runs (fp32)."""
    _require_openvino()
    t = time.perf_counter()
    return _openvino_runner(_onnx_export(model, inputs), inputs, threads, "f32", t)


def openvino(model, inputs, threads, workload, precision="f32"):
    """OpenVINO's CPU plugin on the model converted from PyTorch
    (openvino.convert_model), INFERENCE_PRECISION_HINT = `precision`: what
    users pick on Intel CPUs (bf16 on AMX / AVX512-BF16 hosts)."""
    _require_openvino()
    t = time.perf_counter()
    return _openvino_runner(openvino_model(model, inputs), inputs, threads, precision, t)


def openvino_model(model, inputs):
    """The PyTorch model converted by openvino.convert_model."""
    import openvino as ov
    try:
        return ov.convert_model(model, example_input=tuple(inputs))
    except Exception:  # noqa: BLE001 - its TorchScript path fails on GPT-2 (prim::Constant)
        return ov.convert_model(torch.export.export(model, tuple(inputs)))


def _bf16(system):
    """`system` on the model and inputs converted to bfloat16 (integer inputs
    such as token ids stay as they are); outputs back in fp32, so that the
    error is against fp32 eager."""
    import copy

    def prepare(model, inputs, threads, workload):
        low = copy.deepcopy(model).to(torch.bfloat16)
        args = tuple(x.bfloat16() if x.is_floating_point() else x for x in inputs)
        run, stats = system(low, args, threads, workload)

        def run_bf16():
            out = run()
            return out.float() if isinstance(out, torch.Tensor) else out
        return run_bf16, stats
    return prepare


SYSTEMS = {"eager": eager, "inductor": inductor, "onnxruntime": onnxruntime, "iree": iree,
           "openvino": openvino, "cuvil": cuvil,
           # The ONNX file onnxruntime runs, through Cuvil's ONNX front end and OpenVINO's.
           "cuvil-onnx": cuvil_onnx, "openvino-onnx": openvino_onnx,
           # bf16: PyTorch and Inductor on the bf16 model; OpenVINO and Cuvil
           # on the fp32 model, asked to compute in bf16.
           "eager-bf16": _bf16(eager), "inductor-bf16": _bf16(inductor),
           "openvino-bf16": functools.partial(openvino, precision="bf16"),
           "cuvil-bf16": functools.partial(cuvil, precision="bf16")}
