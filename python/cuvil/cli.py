"""The `cuvil` command line.

    cuvil --version
    cuvil compile model.py:make_model --input 1x128xi64 [--input ...] -o out/
    cuvil compile model.onnx [--input 1x128xi64 ...] -o out/
    cuvil profile model.py:make_model --input 1x128xi64 [--runs 20] [--threads N] [--json F]
    cuvil profile model.onnx [--input ...]
    cuvil cache info [--json] | cuvil cache clear [--older-than DAYS]

`compile` imports the module file, calls the factory for a torch.nn.Module,
makes random inputs of the given shapes/dtypes, compiles, checks the result
against eager (an ONNX model: against onnxruntime when it is installed; its
inputs' shapes and dtypes come from the model, --input gives those it leaves
symbolic), and writes to `-o` the library (model.so), the IR of every
stage (model.<stage>.mlir, model.ll), report.json and replay.sh, which
rebuilds every stage after model.torch.mlir with the command-line tools.
`profile` compiles with kernel timers, checks against eager, and prints the
time of each kernel per call (cuvil.profiling).

Both exit with status 1 when the compiled result is further from eager than
`--atol + --rtol * max|eager|` (defaults 1e-5 and 1e-4, fp32 with reassociated
sums; with --precision bf16 / fp16 the default rtol is 3e-2 / 5e-3: operands
rounded to 8 / 11 significant bits); what they write is written all the same, so the IR can be inspected.
"""
import argparse
import importlib.util
import json
import shutil
import sys
from pathlib import Path

from ._version import LLVM_VERSION, __version__

_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
           "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8", "i1": "bool"}


def parse_input_spec(spec: str):
    """'1x128xi64' -> ((1, 128), 'int64')."""
    *dims, dtype = spec.split("x")
    if dtype not in _DTYPES or not dims:
        raise argparse.ArgumentTypeError(
            f"bad --input {spec!r}: expected DIMSxDTYPE like 1x128xi64 (dtypes: {sorted(_DTYPES)})")
    try:
        shape = tuple(int(d) for d in dims)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad --input {spec!r}: dims must be integers") from None
    return shape, _DTYPES[dtype]


def _load_factory(ref: str):
    path, _, name = ref.partition(":")
    if not name or not Path(path).exists():
        raise SystemExit(f"cuvil: expected FILE.py:FACTORY with an existing file, got {ref!r}")
    # Registered under its own name: the warm-start fingerprint finds a
    # class's source file through sys.modules[cls.__module__].
    module_name = f"_cuvil_cli_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cuvil: cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"cuvil: {path} has no {name!r}")
    return getattr(module, name)


def _random_input(shape, dtype):
    import torch
    dt = getattr(torch, dtype)
    if dt.is_floating_point:
        return torch.randn(shape, dtype=dt)
    return torch.randint(0, 2 if dt == torch.bool else 100, shape, dtype=dt)


def _is_onnx(ref: str) -> bool:
    return ref.endswith(".onnx") or (Path(ref).is_file() and not ref.endswith(".py") and ":" not in ref)


class _Subject:
    """What a command compiles: a factory's torch.nn.Module, or an ONNX
    file; its random inputs; and the reference it is checked against."""

    def __init__(self, args):
        self.onnx = _is_onnx(args.model)
        if self.onnx:
            from .importer_onnx import OnnxModel
            self.model = OnnxModel(args.model)
            self.name = self.model.name
            specs = args.input or [None] * len(self.model.inputs)
            if len(specs) != len(self.model.inputs):
                raise SystemExit(f"cuvil: {args.model} takes {len(self.model.inputs)} input(s), "
                                 f"got {len(specs)} --input")
            self.inputs = tuple(_random_input(*_onnx_input_shape(v, spec)) for v, spec in zip(self.model.inputs, specs))
        else:
            if not args.input:
                raise SystemExit("cuvil: a PyTorch model needs its inputs' shapes: --input 1x128xi64 (per input)")
            self.model = _load_factory(args.model)()
            self.name = type(self.model).__name__
            self.inputs = tuple(_random_input(*s) for s in args.input)
        self.reference_name = "onnxruntime" if self.onnx else "eager"

    def compile(self, **options):
        from .compiler import CompiledModule
        from .compiler_onnx import CompiledOnnxModule
        cls = CompiledOnnxModule if self.onnx else CompiledModule
        if options.get("precision") == "int8" and not self.onnx:
            options["calibration"] = [self.inputs]   # the random inputs: one batch
        return cls(self.model, self.inputs, **options)

    def reference(self):
        """The reference outputs (torch tensors), or None (onnxruntime missing)."""
        import torch
        if not self.onnx:
            with torch.no_grad():
                return self.model(*self.inputs)
        try:
            import onnxruntime
        except ImportError:
            return None
        session = onnxruntime.InferenceSession(self.model.original(), providers=["CPUExecutionProvider"])
        feeds = {v.name: x.numpy() for v, x in zip(self.model.inputs, self.inputs)}
        return tuple(torch.from_numpy(o) for o in session.run(None, feeds))


def _onnx_input_shape(value, spec):
    """(shape, dtype) of an ONNX input: --input where given, else the model's dims."""
    if spec is not None:
        shape, dtype = spec
        if dtype != value.dtype:
            raise SystemExit(f"cuvil: input {value.name!r} is {value.dtype}, not {dtype} (--input)")
        return shape, dtype
    if value.dims is None:
        raise SystemExit(f"cuvil: input {value.name!r} has no shape in the model: give it, e.g. "
                         f"--input 1x16x{_DTYPE_CODES.get(value.dtype, value.dtype)} (one --input per input)")
    if not all(isinstance(d, int) for d in value.dims):
        dims = "x".join(str(d) if isinstance(d, int) else "N" for d in value.dims)
        raise SystemExit(f"cuvil: input {value.name!r} has symbolic dims {list(value.dims)}: give its shape, "
                         f"e.g. --input {dims}x{_DTYPE_CODES.get(value.dtype, value.dtype)} (one --input per input)")
    return tuple(value.dims), value.dtype


_DTYPE_CODES = {v: k for k, v in _DTYPES.items()}


class _EagerComparison:
    """The compiled model's largest deviation from eager over every output
    tensor, against the bound atol + rtol * (largest eager magnitude)."""

    def __init__(self, got, want, rtol: float, atol: float):
        import torch
        from torch.utils import _pytree as pytree
        pairs = [(g, w) for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want))
                 if isinstance(w, torch.Tensor) and w.numel()]
        self.error = max((float((g.double() - w.double()).abs().max()) for g, w in pairs), default=0.0)
        scale = max((float(w.double().abs().max()) for _, w in pairs), default=0.0)
        self.bound = atol + rtol * scale
        self.ok = self.error <= self.bound   # False for NaN

    def complaint(self, written: str = "", reference: str = "eager") -> str:
        return (f"cuvil: max |cuvil - {reference}| = {self.error:.3e} exceeds the tolerance {self.bound:.3e} "
                f"(--atol + --rtol * max|{reference}|){written}; rerun with -v for the stage log, or with "
                f"larger --rtol/--atol if this model's numerics allow it")


def _compare_with_reference(fast, subject, args):
    """The comparison with eager / onnxruntime, or None when there is no reference."""
    import torch
    want = subject.reference()
    if want is None:
        return None
    with torch.no_grad():
        got = fast(*subject.inputs)
    rtol = args.rtol if args.rtol is not None else _DEFAULT_RTOL[args.precision]
    return _EagerComparison(got, want, rtol, args.atol)


# The default --rtol per --precision: a few roundings of the operands'
# significand (bf16: 8 bits, fp16: 11) over sums of many products.
_DEFAULT_RTOL = {"fp32": 1e-4, "bf16": 3e-2, "fp16": 5e-3,
                 # int8: an activation quantization step or so per layer (2^-8 of the range)
                 "int8": 1e-1, "int8-dynamic": 1e-1,
                 # weight-only: a weight step per layer, against the fp32 model
                 "int8-weight": 3e-2, "int4-weight": 3e-1}


def _check_fields(check, subject) -> dict:
    """The report's comparison fields (a missing reference: says so)."""
    if check is None:
        return {"reference": None, "note": "onnxruntime is not installed: the result was not checked"}
    return {f"max_abs_error_vs_{subject.reference_name}": check.error, "tolerance": check.bound,
            "within_tolerance": check.ok}


def _check_summary(check, subject) -> str:
    if check is None:
        return "not checked: onnxruntime is not installed"
    return f"max |cuvil - {subject.reference_name}| = {check.error:.2e}"


def cmd_compile(args) -> int:
    import cuvil
    from .compiler import STAGES

    if args.verbose:
        cuvil.set_log_level("DEBUG")
    try:
        subject = _Subject(args)
        # Not from the cache: every stage runs, so that its IR can be written.
        fast = subject.compile(use_cache=False, precision=args.precision)
        check = _compare_with_reference(fast, subject, args)
    except (cuvil.CuvilError, FileNotFoundError) as err:
        print(f"cuvil: {err}", file=sys.stderr)
        return 1
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    for stage in STAGES:
        fast.export_ir(str(out / f"model.{stage}.mlir"), stage)
    (out / "model.ll").write_text(fast.last_signature.ir["llvm_ir"])
    replay = out / "replay.sh"
    generic = '"tm_tensor.' in fast.stage_ir("linalg")   # importer.crossing_text printed it generic
    replay.write_text(fast.pipeline.replay_script(generic_linalg=generic))
    replay.chmod(0o755)
    shutil.copy2(fast.library_path, out / "model.so")
    report = {"stats": fast.stats, **_check_fields(check, subject),
              "inputs": [list(x.shape) + [str(x.dtype).removeprefix("torch.")] for x in subject.inputs]}
    (out / "report.json").write_text(json.dumps(report, indent=2))
    print(f"compiled {subject.name} -> {out}/model.so  ({_check_summary(check, subject)}; stages: "
          + ", ".join(f"{k} {v:.2f}s" for k, v in fast.stats.items() if k != "cache_hit") + ")")
    if check is not None and not check.ok:
        print(check.complaint(f"; the library and IR are in {out}", subject.reference_name), file=sys.stderr)
        return 1
    return 0


def cmd_profile(args) -> int:
    import torch

    import cuvil

    if args.verbose:
        cuvil.set_log_level("DEBUG")
    try:
        subject = _Subject(args)
        fast = subject.compile(num_threads=args.threads, profile=True, precision=args.precision)
        check = _compare_with_reference(fast, subject, args)
        with torch.no_grad():
            profile = fast.profile(*subject.inputs, runs=args.runs)
    except (cuvil.CuvilError, FileNotFoundError) as err:
        print(f"cuvil: {err}", file=sys.stderr)
        return 1
    print(f"{subject.name}: {profile.runs} runs, {_check_summary(check, subject)}")
    print(profile.table(top=args.top))
    if args.json:
        report = dict(json.loads(profile.to_json()), **_check_fields(check, subject))
        Path(args.json).write_text(json.dumps(report, indent=2))
    if check is not None and not check.ok:
        print(check.complaint("", subject.reference_name), file=sys.stderr)
        return 1
    return 0


def cmd_cache(args) -> int:
    from . import artifact
    if args.cache_command == "clear":
        freed = artifact.clear(args.older_than)
        print(f"cuvil: freed {freed / 1e6:.1f} MB in {artifact.cache_dir()}")
        return 0
    info = artifact.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"location:  {info['location']}")
    print(f"libraries: {info['libraries']}")
    print(f"size:      {info['bytes'] / 1e6:.1f} MB (cap {info['max_bytes'] / 1e6:.0f} MB, CUVIL_CACHE_MAX_BYTES)")
    for kind, k in sorted(info["kinds"].items()):
        print(f"  {kind:<10} {k['files']:>6} files {k['bytes'] / 1e6:>10.1f} MB")
    return 0


def _model_and_inputs_args(p):
    p.add_argument("model", help="FILE.py:FACTORY returning a torch.nn.Module, or MODEL.onnx")
    p.add_argument("--input", action="append", type=parse_input_spec,
                   help="input shape and dtype, e.g. 1x128xi64 (repeat per input; an ONNX model's "
                        "inputs default to its own static shapes)")
    p.add_argument("--precision", choices=sorted(_DEFAULT_RTOL), default="fp32",
                   help="operand type of matmuls and convolutions (f32 accumulation; default fp32)")
    p.add_argument("--rtol", type=float, default=None,
                   help="allowed error vs eager relative to the largest eager output "
                        "(default 1e-4; bf16 3e-2, fp16 5e-3)")
    p.add_argument("--atol", type=float, default=1e-5, help="allowed absolute error vs eager (default 1e-5)")
    p.add_argument("-v", "--verbose", action="store_true", help="per-stage debug log")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="cuvil", description="Cuvil: PyTorch and ONNX models -> native code")
    parser.add_argument("--version", action="version",
                        version=f"cuvil {__version__} (MLIR/LLVM {LLVM_VERSION})")
    sub = parser.add_subparsers(dest="command")
    comp = sub.add_parser("compile", help="compile a model (a factory function's, or an ONNX file)")
    _model_and_inputs_args(comp)
    comp.add_argument("-o", "--output", required=True, help="output folder")
    prof = sub.add_parser("profile", help="time each kernel of a compiled model")
    _model_and_inputs_args(prof)
    prof.add_argument("--runs", type=int, default=20, help="timed calls (default 20)")
    prof.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    prof.add_argument("--top", type=int, default=15, help="kernels listed (default 15)")
    prof.add_argument("--json", help="also write the profile as JSON to this file")
    cache = sub.add_parser("cache", help="the compiled-library cache ($CUVIL_CACHE_DIR)")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True)
    cache_info = cache_sub.add_parser("info", help="location, entries and bytes per kind")
    cache_info.add_argument("--json", action="store_true", help="as JSON")
    cache_clear = cache_sub.add_parser("clear", help="remove entries")
    cache_clear.add_argument("--older-than", type=float, metavar="DAYS", default=None,
                             help="only entries last used more than DAYS days ago")
    args = parser.parse_args(argv)
    if args.command == "cache":
        return cmd_cache(args)
    if args.command == "compile":
        return cmd_compile(args)
    if args.command == "profile":
        return cmd_profile(args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
