"""`cuvil.compile`: a torch.nn.Module in, a callable running native code out.

    fast = cuvil.compile(model)                  # compiles at the first call
    fast = cuvil.compile(model, example_inputs=(x,))
    y = fast(x)                                  # same outputs (tensors, tuples, dicts)

A compile imports the model (importer), then runs the steps of its
cuvil.pipeline (raise, schedule, lower, translate, codegen) and loads the
library (execution), binding the model's weights (cuvil.weights). A new input
shape or dtype compiles again: one library (cuvil.signature.Signature) per
input signature. Libraries are cached (artifact); a second process finds its
library from the model's structure without importing it (fingerprint).
"""
import hashlib
import logging
import time
from typing import Dict, Optional

from . import artifact, execution, pipeline, profiling, raising, weights
from .errors import CompileError, CuvilError
from .options import CompileOptions
from .signature import CallContract, Signature, export_inputs, is_flat_input, signature_key, tensor_inputs
from .static_call import StaticCall
from .static_call import eligible as static_call_eligible

log = logging.getLogger("cuvil")

#: The IR stages a compile keeps (export_ir / stage_ir), in pipeline order.
STAGES = ("torch", "linalg", "cuvil", "scheduled", "llvm")


class CompiledModule:
    """What `cuvil.compile` returns. Call it like the model."""

    def __init__(self, model, example_inputs=None, target="host", opt_level=3,
                 num_threads=None, schedule=None, use_cache=True, dynamic_dims=None, profile=False,
                 precision="fp32", target_features=None, dump_dir=None, calibration=None):
        self.options = CompileOptions.make(target=target, opt_level=opt_level, num_threads=num_threads,
                                           profile=profile, dynamic_dims=dynamic_dims, schedule=schedule,
                                           use_cache=use_cache, precision=precision,
                                           target_features=target_features, dump_dir=dump_dir)
        self.model = self._prepare(model)
        # Counted before quantizing (a PT2E module holds its int8 weights as
        # plain attributes); see CompileOptions.pipeline.
        self._weight_elements = self._weight_count(self.model)
        from .quantize import is_quantizing
        # A model Cuvil quantizes is a copy made now: its weights (the int8
        # values derived from the model's) are fixed at compile time.
        self._weights_fixed = is_quantizing(self.options.precision)
        if self._weights_fixed:
            self.model = self._quantize(example_inputs, calibration)
        self._compiled: Dict[tuple, Signature] = {}
        self._last: Optional[Signature] = None
        # Calls with keyword or nested inputs: one module per input structure
        # (_structured_call); in such a module, the structure.
        self._structured: Dict[str, "CompiledModule"] = {}
        self._in_spec = None
        self._static: Optional[StaticCall] = None   # the last call's short path
        if example_inputs is not None:
            self._signature_for(tuple(example_inputs))

    # -- public ---------------------------------------------------------------
    @property
    def profiled(self) -> bool:
        """Whether kernel timers are compiled in (see profile())."""
        return self.options.profile

    @property
    def stats(self) -> Dict[str, float]:
        """Seconds per stage of the most recent compile (import, raise,
        schedule, lower, translate, codegen, load) and whether the cache was hit."""
        return dict(self._last.stats) if self._last else {}

    @property
    def last_signature(self) -> Signature:
        """The most recently compiled (or called) specialisation."""
        if self._last is None:
            raise RuntimeError("nothing compiled yet: call the module or pass example_inputs")
        return self._last

    @property
    def pipeline(self) -> pipeline.Pipeline:
        """The pipeline that built the most recent signature."""
        return self.last_signature.pipeline

    def stage_ir(self, stage: str = "cuvil") -> str:
        """The IR text after `stage` (one of STAGES) of the most recent compile,
        as cuvil-opt / torch-mlir-opt print it."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        sig = self.last_signature
        if stage not in sig.ir:
            raise KeyError(f"stage {stage!r} was not run for this signature "
                           f"(the library came from the cache); have: {sorted(sig.ir)}")
        return sig.ir[stage]

    def export_ir(self, path: str, stage: str = "cuvil") -> None:
        """Writes stage_ir(stage) to `path`."""
        text = self.stage_ir(stage)
        with open(path, "w") as f:
            f.write(text)

    @property
    def library_path(self) -> str:
        """The shared library of the most recent compile (in the cache)."""
        return self.last_signature.library.path

    @property
    def num_signatures(self) -> int:
        """How many input signatures (shapes, dtypes) have been compiled."""
        return len(self._compiled)

    def signature_key(self, args) -> tuple:
        """The signature `args` would run under (shapes with dynamic dims as
        None, dtypes); raises TypeError / ValueError for inputs that cannot
        be run (not tensors, another device, an unsupported dtype, a
        mismatch with a dynamic build)."""
        return signature_key(tuple(args), self.options.dynamic, self._compiled, self.model_name)

    def is_compiled_for(self, key: tuple) -> bool:
        return key in self._compiled

    def __call__(self, *args, **kwargs):
        if self._static is not None and not kwargs:
            out = self._static(args)   # the last signature's short path (cuvil.static_call)
            if out is not None:
                return out
        from torch.utils import _pytree as pytree
        if kwargs or not all(is_flat_input(a) for a in args):
            return self._structured_call(args, kwargs)
        sig = self._signature_for(args)
        weights.rebind_if_changed(sig)   # the model's weights changed since: use the new ones
        tensors = tensor_inputs(args)
        arrays = [execution.to_array(a) for a in tensors]
        if sig.contract.random_seed:   # the last input, after the user's
            arrays.append(sig.contract.seed_array())
        inputs = [arrays[key] for key in sig.contract.input_keys]
        outs = sig.run(*inputs, out_shapes=sig.contract.output_shapes(arrays))
        results = [execution.to_tensor(o, s.dtype) for o, s in zip(outs, sig.main.outputs)]
        if sig.contract.linalg_checks:   # before any write-back: eager raises before its later in-place ops
            sig.contract.raise_linalg_errors(results)
        mutations = sig.contract.mutations
        if mutations:
            weights.write_back(sig, tensors, mutations, results[:len(mutations)])
        self._static = self._static_call(sig, args)
        return pytree.tree_unflatten(sig.contract.user_outputs(results), sig.contract.out_spec)

    def _static_call(self, sig: Signature, args) -> Optional[StaticCall]:
        """`sig`'s short call path for inputs like `args`, made at its first
        call (None where it cannot take them: the generic path runs)."""
        if sig.static_call is None:
            sig.static_call = StaticCall(sig, args) if static_call_eligible(sig, args) else False
        static = sig.static_call
        return static if static and static.specs == tuple((a.dtype, a.shape) for a in args) else None

    def _structured_call(self, args, kwargs):
        """A call with keyword inputs or nested ones (a Hugging Face cache, a
        tuple of tensors): flattened to its leaves (pytree) and run by a module
        compiled for that input structure, which exports the model taking the
        leaves (importer.export_program's in_spec); dynamic_dims number the
        leaves."""
        import copy

        from torch.utils import _pytree as pytree

        from .signature import register_hf_cache_pytrees
        register_hf_cache_pytrees()   # a DynamicCache flattens to its tensors, not to itself
        import torch
        leaves, spec = pytree.tree_flatten((tuple(args), kwargs))
        # Each top-level input's leaves, from the one flattening: spec's
        # children are (args, kwargs), each a container of the inputs.
        named = [f"input {i}" for i in range(len(args))] + [f"input {k!r}" for k in kwargs]
        counts = [c.num_leaves for part in spec.children() for c in part.children()]
        start = 0
        for name, a, count in zip(named, list(args) + list(kwargs.values()), counts):
            held, start = leaves[start:start + count], start + count
            bad = [type(leaf).__name__ for leaf in held if not is_flat_input(leaf)]
            if bad:
                raise TypeError(f"{self.model_name} was called with a {bad[0]} among its inputs; cuvil.compile "
                                "takes tensors and Python numbers, and tuples, lists, dicts and caches of tensors")
            if not is_flat_input(a) and not all(isinstance(leaf, torch.Tensor) for leaf in held):
                raise TypeError(f"{name} is a {type(a).__name__} holding numbers; cuvil.compile takes tensors "
                                "and Python numbers, and tuples, lists, dicts and caches of tensors")
        key = str(spec)
        module = self._structured.get(key)
        if module is None:
            module = copy.copy(self)
            module._compiled, module._last, module._structured, module._in_spec = {}, None, {}, spec
            module._static = None
            self._structured[key] = module
        out = module(*leaves)
        self._last = module._last
        return out

    def profile(self, *args, runs: int = 10, warmup: int = 2) -> "profiling.KernelProfile":
        """Runs the model `runs` times on `args` (after `warmup` calls) and
        returns the time of each kernel per run; needs `profile=True`."""
        if not self.profiled:
            raise ValueError("this module was compiled without kernel timers: "
                             "use cuvil.compile(model, ..., profile=True)")
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        for _ in range(warmup + 1):   # the first call compiles
            self(*args)
        sig = self.last_signature
        counters = profiling.Counters(sig.library.cdll)
        counters.reset()
        t = time.perf_counter()
        for _ in range(runs):
            self(*args)
        wall = time.perf_counter() - t
        return profiling.summarize(counters, sig.contract.kernels, runs, wall)

    # -- compile ----------------------------------------------------------------
    def _signature_for(self, args) -> Signature:
        key = self.signature_key(args)
        if key not in self._compiled:
            if self._compiled:
                log.info("cuvil: new input signature %s: compiling again", key)
            self._compiled[key] = self._compile(args, key)
        self._last = self._compiled[key]
        return self._last

    def _compile(self, args, key) -> Signature:
        from . import fingerprint
        from .options import environment
        from .progress import Progress

        env = environment()
        if "stages" in env.logs:
            from . import set_log_level
            set_log_level("DEBUG")
        dump = _dump_folder(self.options.dump_dir or env.dump_dir, self.model_name)
        pipe = self.options.pipeline(self.options.threads(), self._weight_elements)
        options = self.options.cache_key_parts(pipe)
        index_key = None
        if self.options.use_cache and fingerprint.enabled():
            index_key = self._structural_key(key, options)
            warm = self._warm_start(artifact.load_index(index_key), pipe) if dump is None else None
            if warm is not None:
                return warm
        with Progress(self.model_name) as progress:
            return self._compile_from_source(args, pipe, options, index_key, dump, progress)

    def _warm_start(self, entry, pipe) -> Optional[Signature]:
        """The signature from a warm-start index entry, or None when there is
        none or it cannot be used (weights not the model's, library gone, an
        entry this version of Cuvil did not write): then compile from source."""
        if entry is None:
            return None
        t = time.perf_counter()
        try:
            tensors = self._weights_of(entry["weights"])
            lib_path = artifact.lookup(entry["library"]) if tensors is not None else None
            contract = CallContract.from_json(entry) if lib_path is not None else None
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            log.debug("cuvil: ignoring a malformed warm-start index entry: %r", err)
            return None
        if contract is None:
            return None
        return self._load(lib_path, contract, tensors, {"cache_hit": 1.0}, {}, pipe, t)

    # -- what differs between front ends (PyTorch here, ONNX in CompiledOnnxModule) --
    @staticmethod
    def _prepare(model):
        from .importer_quantized import in_eval_mode
        return in_eval_mode(model)

    @staticmethod
    def _weight_count(model) -> Optional[int]:
        """The model's parameter and buffer elements (None: not known)."""
        tensors = {id(t): t for t in (*model.parameters(), *model.buffers())} if hasattr(model, "parameters") else {}
        return sum(t.numel() for t in tensors.values()) or None

    def _quantize(self, example_inputs, calibration):
        """The model quantized for an int8 / weight-only precision (cuvil.quantize)."""
        from .quantize import quantize
        return quantize(self.model, self.options.precision, example_inputs, calibration)

    @property
    def model_name(self) -> str:
        return type(self.model).__name__

    def _structural_key(self, key, options) -> str:
        """The warm-start index key: the model's structure, not its IR."""
        from . import fingerprint
        # A call's input structure (keyword inputs, a cache) decides the code too.
        structure = () if self._in_spec is None else (f"inputs {self._in_spec}",)
        return fingerprint.structural_key(self.model, key, (*options, *structure))

    def _weights_of(self, specs):
        """The model's own weight tensors by name, or None."""
        return weights.from_model(self.model, specs)

    def _import_model(self, args):
        from . import (importer, importer_complex, importer_decompositions, importer_fft, importer_linalg,
                       importer_special)
        # LayerNorm stays in the model's dtype; empty bmms are zeros; stable sorts are sorts;
        # logcumsumexp does not overflow; FFTs are real products on (re, im) pairs;
        # small LU / Cholesky factorizations and solves are unrolled;
        # fp16 / bf16 sums and means accumulate in f32; ops torch-mlir does not
        # lower (or lowers wrong) are written in ops it lowers right.
        args, dynamic_shapes = export_inputs(args, self.options.dynamic)
        try:
            return importer.import_model(
                self.model, args, dynamic_shapes=dynamic_shapes, in_spec=self._in_spec,
                extra_decompositions={**importer.F32_LAYERNORM_DECOMPS,
                                      **importer.EMPTY_CONTRACTION_DECOMPS,
                                      **importer.SCAN_AND_SORT_DECOMPS,
                                      **importer.F32_REDUCTION_DECOMPS,
                                      **importer_decompositions.DECOMPOSITIONS,
                                      **importer_special.DECOMPOSITIONS,
                                      **importer_fft.DECOMPOSITIONS,
                                      **importer_linalg.DECOMPOSITIONS,
                                      **importer_complex.DECOMPOSITIONS})
        except CuvilError:
            raise
        except Exception as err:  # torch.export's own failures: name them, keep the cause
            unsupported = importer.unsupported_from_export_error(err)
            if unsupported is not None:
                raise unsupported from err
            hint = ""
            if "DataDependent" in type(err).__name__ or "data-dependent" in str(err):
                # One graph cannot branch on or size by a tensor's values;
                # Dynamo splits the program there and compiles the pieces.
                hint = ("; the model's control flow or shapes depend on tensor values: use "
                        "torch.compile(model, backend=\"cuvil\"), which compiles the graphs around them")
            raise CompileError("import", f"torch.export could not capture "
                               f"{type(self.model).__name__}: {type(err).__name__}: "
                               f"{str(err).splitlines()[0] if str(err) else ''}{hint}") from err

    def _import(self, args, stats, ir_text):
        from . import importer
        t = time.perf_counter()
        imported = self._import_model(args)
        ir_text["linalg"] = pipeline.as_printed(imported.text)
        if importer.last_torch_ir():
            ir_text["torch"] = pipeline.as_printed(importer.last_torch_ir())
        stats["import"] = time.perf_counter() - t
        return imported

    def _compile_from_source(self, args, pipe, options, index_key, dump=None, progress=None) -> Signature:
        from .ir import Context

        stats: Dict[str, float] = {}
        ir_text: Dict[str, str] = {}
        imported = self._import(args, stats, ir_text)
        if dump is not None:
            for stage in ("torch", "linalg"):
                if stage in ir_text:
                    (dump / f"0_{stage}.mlir").write_text(ir_text[stage])
        weight_args = [a for a in imported.manifest["args"] if a["kind"] != "user_input"]
        # The model's own tensors where they are parameters/buffers, so that
        # later changes to them are seen (see __call__); else the export's.
        tensors = self._weights_of(weight_args) or \
            {a["name"]: w for a, w in zip(weight_args, imported.weights())}
        key = artifact.cache_key(imported.text, *options)

        def prepack_key(prepack_text: str) -> str:
            return hashlib.sha256("\0".join((prepack_text, *options)).encode()).hexdigest()[:32]

        with Context() as ctx:
            module = raising.parse(imported.text, ctx)
            raise_step, *later_steps = pipe.steps
            self._run_step(raise_step, module, stats, ir_text, dump=dump, progress=progress)
            contract = CallContract.from_module(
                module, weight_order=[a["name"] for a in weight_args],   # main_prepack's inputs
                out_spec=imported.out_spec, manifest=imported.manifest,
                kernels=profiling.describe_kernels(module) if self.profiled else {},
                prepack_key_of=prepack_key)
            contract.check_output_dtypes()

            # One process builds a library at a time: others compiling the same
            # model wait here, then find it.
            with artifact.build_lock(key):
                lib_path = artifact.lookup(key) if self.options.use_cache and dump is None else None
                stats["cache_hit"] = float(lib_path is not None)
                if lib_path is None:
                    payload = module
                    for step in later_steps:
                        payload = self._run_step(step, payload, stats, ir_text, key=key, dump=dump,
                                                 progress=progress)
                    lib_path = payload
        if index_key is not None:
            try:
                entry = dict(contract.to_json(), library=key,
                             weights=[{"name": a["name"], "kind": a["kind"]} for a in weight_args])
            except Exception as err:  # e.g. an output type pytree cannot serialize
                log.debug("cuvil: no warm-start index for this model: %s", err)
            else:
                artifact.store_index(index_key, entry)
        return self._load(lib_path, contract, tensors, stats, ir_text, pipe, time.perf_counter())

    @staticmethod
    def _run_step(step, payload, stats, ir_text, key=None, dump=None, progress=None):
        """Runs one pipeline step, timing it and keeping the IR it leaves
        (as the command-line tools print it, so that replay.sh reproduces it).
        `dump`: the folder the step writes its IR after every pass into."""
        if progress is not None:
            progress.stage(step.name)
        t = time.perf_counter()
        if isinstance(step, pipeline.Translate):
            payload = step.run(ir_text["llvm"])
            if dump is not None:
                (dump / "model.ll").write_text(payload)
        elif isinstance(step, pipeline.Codegen):
            payload = step.run(payload, key)
        else:
            payload = step.run(payload, dump_dir=None if dump is None else dump / step.name)
        stats[step.name] = time.perf_counter() - t
        if step.produces == "llvm_ir":
            ir_text["llvm_ir"] = payload
        elif step.produces in STAGES:
            ir_text[step.produces] = pipeline.as_printed(payload)
        log.debug("cuvil: %s -> %s in %.3f s", step.name, step.produces, stats[step.name])
        return payload

    def _load(self, lib_path, contract, tensors, stats, ir_text, pipe, t0) -> Signature:
        lib = execution.Library(lib_path)
        sig = Signature(library=lib, main=lib.function("main", *contract.main_specs), contract=contract,
                        stats=stats, ir=ir_text, pipeline=pipe, weight_tensors=tensors,
                        weights_fixed=self._weights_fixed)
        weights.bind(sig)
        stats["load"] = time.perf_counter() - t0
        log.debug("cuvil: compiled %s in %s", self.model_name,
                  {k: round(v, 3) for k, v in stats.items()})
        return sig


def _dump_folder(root, model_name: str):
    """A new folder <root>/<model>-<n> for one compile's dump, or None."""
    if root is None:
        return None
    from pathlib import Path
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    n = 0
    while True:
        folder = root / f"{model_name}-{n}"
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1


def compile(model, example_inputs=None, target="host", opt_level=3, num_threads=None,
            dynamic_dims=None, profile=False, precision="fp32", dump_dir=None, calibration=None):
    """Compiles `model` (a torch.nn.Module; or an ONNX model: a path or an
    onnx.ModelProto, see cuvil.compiler_onnx) to native code; see CompiledModule.

    precision: "fp32" (default), "bf16" or "fp16": the operand type of the
    model's matmuls, batch matmuls and convolutions (they accumulate in f32;
    weights are converted once, when bound; everything else stays f32; inputs
    and outputs keep their dtypes). Expect the error of eager bf16 / fp16:
    about 2^-8 / 2^-11 of each product's size, growing with sqrt(K).
    "int8" / "int8-dynamic" quantize the model with PyTorch's PT2E flow first
    (cuvil.quantize; needs torchao): static int8 observes the activations'
    ranges on `calibration` ([(x,), ...]), dynamic int8 computes them per
    call. A model already quantized with PT2E (convert_pt2e) compiles as it
    is, with any precision. Expect about one activation quantization step of
    error per layer against fp32. "int8-weight" / "int4-weight" quantize the
    weights of a copy's linear layers only (cuvil.quantize_weights: int8 per
    output channel, int4 in groups of 128 inputs); the kernels read the
    integer weights. Expect ~0.5% (int8) / ~10% (int4) relative error per
    layer on Gaussian-like weights. These four quantize a copy of the model
    at compile time: its weights are fixed then (changes to the model's are
    not seen; compile again).
    dump_dir: each compile writes into a new folder <dump_dir>/<Model>-<n>/
    the imported IR (0_torch.mlir, 0_linalg.mlir), the IR after every pass
    of each pass step and after every transform script (raise/, schedule/,
    lower/: a folder per anchor op, a numbered file per pass) with MLIR's
    pass-timing report (timing.txt), and model.ll. A compile with a dump
    folder does not take its library from the cache (CUVIL_DUMP_DIR: the
    same for every compile).
    dynamic_dims: {input index: dim or [dims]} compiled as symbolic sizes
    (e.g. {0: 0} for a dynamic batch): one build serves all their sizes.
    profile: compile kernel timers in; `.profile(*inputs)` then reports the
    time of each kernel (cuvil.profiling)."""
    from .compiler_onnx import CompiledOnnxModule, is_onnx_model
    if is_onnx_model(model):
        return CompiledOnnxModule(model, example_inputs, target=target, opt_level=opt_level,
                                  num_threads=num_threads, dynamic_dims="auto" if dynamic_dims is None else dynamic_dims,
                                  profile=profile, precision=precision, dump_dir=dump_dir)
    return CompiledModule(model, example_inputs, target=target, opt_level=opt_level,
                          num_threads=num_threads, dynamic_dims=dynamic_dims, profile=profile,
                          precision=precision, dump_dir=dump_dir, calibration=calibration)
