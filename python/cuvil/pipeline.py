"""The compile pipeline, as data: every pass Cuvil runs, in order, in one place.

    model -> import -> raise -> schedule -> lower -> translate -> codegen -> library

`import` runs torch.export and torch-mlir's FX importer, then two torch-mlir
pass pipelines (TORCH_BACKEND, TO_LINALG) in torch-mlir's own MLIR; only their
text crosses into Cuvil's context. Every later stage is a step of a
`Pipeline`, built for one set of options by `compile_pipeline()`:

  * PassPipeline: a `cuvil-opt --pass-pipeline=...` (raise, lower);
  * TransformSchedule: transform scripts applied one after the other, each as
    `cuvil-opt --transform-preload-library=... --transform-interpreter=...`;
  * Translate: `mlir-translate --mlir-to-llvmir`;
  * Codegen: `opt` (coroutine passes, multi-threaded builds only), `llc`, `cc`.

The compile driver (cuvil.compiler) loops over these steps; the cache key
(`Pipeline.fingerprint`), the replay script written beside exported IR
(`Pipeline.replay_script`) and transform_scripts/PIPELINE.md
(`python -m cuvil.pipeline --markdown`) are all derived from them. IR is
changed only by passes, so every stage's IR replays with the tools.
"""
import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import FrozenSet, List, Optional, Sequence, Tuple

# -- import (torch-mlir's context) -------------------------------------------

#: torch dialect from the FX importer -> torch backend contract.
TORCH_BACKEND = ("func.func(torch-match-quantized-custom-ops)",
                 "torchdynamo-export-to-torch-backend-pipeline{ extra-library=}")
#: torch dialect from the ONNX importer (`onnx.*` operators) -> torch backend contract.
ONNX_TO_TORCH_BACKEND = ("torch-onnx-to-torch-backend-pipeline",)
#: torch backend -> linalg on tensors (the text Cuvil parses).
TO_LINALG = ("torch-backend-to-linalg-on-tensors-backend-pipeline{allow-non-finites=True}",)


def as_printed(module_or_text) -> str:
    """IR text as cuvil-opt / torch-mlir-opt write it to a file (the module's
    text and one more newline): what a stage's IR file holds."""
    text = str(module_or_text)
    return text + "\n" if not text.endswith("\n\n") else text


def module_pipeline(passes: Sequence[str]) -> str:
    """The textual pass pipeline anchored on the module."""
    return "builtin.module(" + ",".join(passes) + ")"


# -- steps after import (Cuvil's context) -------------------------------------

@dataclass(frozen=True)
class PassPipeline:
    """Passes run on the module in Cuvil's context (cuvil-opt)."""
    name: str                 # the stage, for timings and errors: "raise", "lower"
    produces: str             # the IR it leaves: "cuvil", "llvm"
    passes: Tuple[str, ...]
    # Transform libraries the passes load (transform-preload-library): their
    # text is part of what decides the output, their path is not.
    libraries: Tuple[Path, ...] = ()

    @property
    def text(self) -> str:
        return module_pipeline(self.passes)

    def fingerprint(self) -> str:
        text = self.text
        for lib in self.libraries:
            text = text.replace(str(lib), f"<{lib.name}:{_digest(lib.read_text())}>")
        return f"{self.name}: {text}"

    def replay(self, src: str, dst: str, tools: "Tools") -> List[str]:
        return [shlex.join([tools.cuvil_opt, src, f"--pass-pipeline={self.text}", "-o", dst])]

    def run(self, module, dump_dir: Optional[Path] = None):
        """In place on a cuvil.ir module; CompileError with a reproducer on
        failure. `dump_dir`: the IR after every pass and the pass timings
        go there (diagnostics.run_pipeline)."""
        from .diagnostics import run_pipeline
        run_pipeline(module, self.text, self.name, dump_dir=dump_dir)
        return module


@dataclass(frozen=True)
class ScheduleScript:
    """One transform script and the named sequence to run."""
    path: Path
    entry: str

    @property
    def text(self) -> str:
        return self.path.read_text()


@dataclass(frozen=True)
class TransformSchedule:
    """Transform scripts applied in order (each finds the ops the earlier
    ones left: an op already inside a tiled loop is not matched again)."""
    name: str
    produces: str
    scripts: Tuple[ScheduleScript, ...]

    def fingerprint(self) -> str:
        return f"{self.name}: " + ", ".join(f"{s.path.name}@{s.entry}:{_digest(s.text)}"
                                           for s in self.scripts)

    def replay(self, src: str, dst: str, tools: "Tools") -> List[str]:
        if not self.scripts:
            return [shlex.join(["cp", src, dst])]
        commands = []
        for i, s in enumerate(self.scripts):
            out = dst if i + 1 == len(self.scripts) else f"{dst}.{i + 1}"
            commands.append(shlex.join([
                tools.cuvil_opt, src if i == 0 else f"{dst}.{i}",
                f"--transform-preload-library=transform-library-paths={s.path}",
                f"--transform-interpreter=entry-point={s.entry}", "-o", out]))
        if len(self.scripts) > 1:
            commands.append(shlex.join(["rm", "-f", *[f"{dst}.{i + 1}" for i in range(len(self.scripts) - 1)]]))
        return commands

    def run(self, module, dump_dir: Optional[Path] = None):
        """In place on a cuvil.ir module; TransformError on failure.
        `dump_dir`: the IR after each script goes there."""
        from . import transform
        for i, s in enumerate(self.scripts):
            transform.apply(module, s.text, entry=s.entry)
            if dump_dir is not None:
                dump_dir.mkdir(parents=True, exist_ok=True)
                (dump_dir / f"{i}_{s.path.stem}.mlir").write_text(as_printed(module))
        return module


@dataclass(frozen=True)
class Translate:
    """LLVM dialect -> LLVM IR."""
    name: str = "translate"
    produces: str = "llvm_ir"

    def command(self, tools: "Tools") -> List[str]:
        return [tools.mlir_translate, "--mlir-to-llvmir"]

    def fingerprint(self) -> str:
        return f"{self.name}: mlir-translate --mlir-to-llvmir"

    def replay(self, src: str, dst: str, tools: "Tools") -> List[str]:
        return [shlex.join([*self.command(tools), src, "-o", dst])]

    def run(self, llvm_dialect: str) -> str:
        """LLVM IR text; CompileError with a reproducer on failure."""
        import subprocess

        from . import tools
        from .diagnostics import save_reproducer
        from .errors import CompileError
        cmd = self.command(Tools.installed())
        proc = subprocess.run(cmd, input=llvm_dialect, capture_output=True, text=True, env=tools.tool_env())
        if proc.returncode != 0:
            path = save_reproducer(llvm_dialect, self.name)
            raise CompileError(self.name, proc.stderr.strip(), reproducer=shlex.join([*cmd, path]))
        return proc.stdout


# Only the C-interface entry points (and the AOT wrapper's API, the kernel
# profile counters) are exported from a library. The rest (the plain `main`
# MLIR emits, memrefCopy, ...) stays local, so it can neither interpose on nor
# be interposed by a host program's symbols.
EXPORTS_MAP = ("{ global: _mlir_ciface_*; cuvil_model_*; cuvil_profile_read; cuvil_profile_reset; "
               "cuvil_runtime_take_error; local: *; };\n")


@dataclass(frozen=True)
class Codegen:
    """LLVM IR -> object -> shared library linked with Cuvil's C runtime."""
    num_threads: int
    cpu: str = "native"
    profile: bool = False
    # llc / opt -mattr: the host features CUVIL_CPU_FEATURES removed (cuvil.cpu_features).
    mattr: str = ""
    # A cross build (e.g. "aarch64-linux-gnu", cuvil.export): llc targets that
    # triple's generic CPU and the object is not linked here.
    triple: Optional[str] = None
    name: str = "codegen"
    produces: str = "library"

    # async.execute became LLVM coroutines in multi-threaded builds: they must
    # be split before llc. Only the coroutine passes: the 1-thread build gets no
    # IR optimisation either (default<O3> inlined the kernels back into main and
    # re-vectorized vector code).
    CORO_PASSES = "coro-early,cgscc(coro-split),coro-cleanup,globaldce"

    def commands(self, ll: str, obj: str, so: str, exports_map: str, tools: "Tools",
                 extra_sources: Sequence[str] = ()) -> List[List[str]]:
        """The commands, in order; `extra_sources` are linked in too (the AOT
        wrapper)."""
        cmds, llc_input = [], ll
        # The host's triple, named: mlir-translate writes none into the module,
        # and llc then knows no C library, so it expands every memcpy (the
        # buffer copies in main) into a byte-at-a-time loop (BERT-base: 22 ms
        # of a 250 ms call) instead of calling memcpy.
        host = [f"-mtriple={tools.host_triple}", f"-mcpu={self.cpu}", *self._mattr()]
        if self.num_threads > 1:
            bc = obj[:-2] + ".bc" if obj.endswith(".o") else obj + ".bc"
            cmds.append([tools.opt, f"-passes={self.CORO_PASSES}", *host, ll, "-o", bc])
            llc_input = bc
        target = [f"-mtriple={self.triple}"] if self.triple else host
        cmds.append([tools.llc, "-O3", *target, "-filetype=obj", "--relocation-model=pic",
                     llc_input, "-o", obj])
        if self.triple:
            return cmds
        # The kernel profile counters only in libraries built with profile=True;
        # the worker pool has as many threads as the library was compiled for.
        defines = ["-DCUVIL_PROFILE"] if self.profile else []
        parallel = self.num_threads > 1
        cmds.append([tools.cc, "-O2", "-fPIC", "-shared", obj, tools.runtime_support, *extra_sources,
                     *([tools.parallel_runtime] if parallel else []), "-o", so,
                     f"-Wl,--version-script={exports_map}",
                     *(["-pthread", f"-DCUVIL_NUM_THREADS={self.num_threads}"] if parallel else []),
                     *defines, "-lm"])
        return cmds

    def _mattr(self) -> List[str]:
        return [f"-mattr={self.mattr}"] if self.mattr else []

    def run(self, llvm_ir: str, key: str) -> Path:
        """Builds the library into the cache (artifact); returns its path."""
        from . import artifact
        return artifact.build_shared_library(llvm_ir, key, codegen=self)

    def fingerprint(self) -> str:
        placeholders = Tools.placeholders()
        return f"{self.name}: " + " && ".join(
            " ".join(c) for c in self.commands("in.ll", "out.o", "out.so", "exports.map", placeholders))


@dataclass(frozen=True)
class Tools:
    """Where the tools are (the replay script names them by absolute path)."""
    cuvil_opt: str
    torch_mlir_opt: str
    mlir_translate: str
    opt: str
    llc: str
    cc: str
    runtime_support: str
    parallel_runtime: str
    host_triple: str          # llc's default target: the machine it runs on

    @classmethod
    def installed(cls) -> "Tools":
        import os

        from . import tools
        pkg = Path(__file__).absolute().parent
        return cls(cuvil_opt=str(tools.cuvil_opt()),
                   torch_mlir_opt=tools.torch_mlir_opt(),
                   mlir_translate=str(tools.mlir_bin("mlir-translate")), opt=str(tools.llvm_bin("opt")),
                   llc=str(tools.llvm_bin("llc")), cc=os.environ.get("CC", "cc"),
                   runtime_support=str(pkg / "runtime_support.c"),
                   parallel_runtime=str(pkg / "parallel_runtime.c"), host_triple=tools.host_triple())

    @classmethod
    def placeholders(cls) -> "Tools":
        """Tool names without paths: for fingerprints and docs."""
        return cls(cuvil_opt="cuvil-opt", torch_mlir_opt="torch-mlir-opt", mlir_translate="mlir-translate",
                   opt="opt", llc="llc", cc="cc", runtime_support="runtime_support.c",
                   parallel_runtime="parallel_runtime.c", host_triple="HOST_TRIPLE")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- the passes ----------------------------------------------------------------

def _options(values: dict) -> str:
    """A pass's `{name=value ...}` for the options that are set (booleans as
    bare names); empty when none is."""
    set_ = [name if value is True else f"{name}={value}" for name, value in values.items() if value]
    return "{" + " ".join(set_) + "}" if set_ else ""


def raise_passes(pack_script: Path, narrow_type: str = "",
                 pack_entry: str = "cuvil_pack_matmul_rhs", narrow_batched: bool = False,
                 int8_k_multiple: int = 0, int8_shifted_rows: bool = False,
                 unsigned_shifted_rows: bool = False, shifted_rows_max_extra: int = 0,
                 im2col_min_input_channels: int = 0) -> Tuple[str, ...]:
    """linalg from the importer -> Cuvil's form, weights split into main_prepack.

    First torch-mlir's tm_tensor ops (scatter / index_put, sort / topk, cumsum /
    cumprod scans; held by a stand-in dialect) become scf loops on tensors. Then linalg ops whose loops run zero times (K = 0 matmuls) become their
    inits (upstream tiling asserts on them), and slices of a concat that lie in one
    of its operands read that operand (a complex pair's parts); then the asserts torch-mlir puts inside linalg bodies (embedding bounds,
    BatchNorm's empty check) go: they have side effects and block elementwise
    fusion (gathers' data-dependent indices are clamped and checked by a
    reduction next to the op before); integer divisions get safe divisors and a zero-divisor report
    (the op's divisor input reduced next to it); and @main's weight arguments (cuvil.kind other than user_input)
    are marked cuvil.weight, which the conv rewrites and the prepack split read.
    Elementwise fusion runs while the contractions are still cuvil.matmul ops:
    linalg-fuse-elementwise-ops also propagates reshapes through linalg ops and
    fuses elementwise producers into reductions, which would turn a linalg.matmul
    into a higher-rank generic (or fold the softmax division into attention's
    p.v) that the matmul schedules no longer match. Then the convolutions become
    transposes, 1-D transforms and (batch) matmuls with weight-only filter
    transforms, and i1 tensors between linalg ops become i8 so the schedules
    vectorize them; the conv results stay channels-last through the
    elementwise ops and pads after them (the NHWC -> NCHW transpose of one conv
    cancels against the next conv's NCHW -> NHWC one; with `int8_k_multiple`, AMX-INT8
    hosts, an int8 conv's windows are gathered with K a multiple of the tile rows, and
    with `int8_shifted_rows` a stride-1 int8 conv with channels in whole tile rows is one
    contraction over shifted rows of its padded input, no windows gathered: AMX-INT8
    and AVX512-VNNI hosts; `shifted_rows_max_extra` bounds the extra rows that form computes, in percent;
    `im2col_min_input_channels` 1: f32 convs with few input channels too, where
    precision="bf16" puts the matmul on vdpbf16ps). Contractions then take bf16 / f16 operands where the model
    extends them from bf16 / f16 (a bf16 model), or where `narrow_type`
    ("bf16", "f16": precision=) asks; they accumulate in f32 (attention's batched
    products too where `narrow_batched`: AMX-BF16 or AVX512-BF16 hosts). pack_cpu.mlir packs the rhs of each large matmul into
    64-column panels before cuvil-split-prepack, so that packing a weight runs
    once, in main_prepack (VNNI pair / quad panels for the bf16 / int8
    matmuls of a host with those dot products; int8 ones then read an
    unsigned lhs, cuvil-unsigned-int8-lhs, with B's column sums also
    weight-only; with `unsigned_shifted_rows`, hosts with vpdpbusd and no
    AMX-INT8, the convs over shifted rows too). The elementwise chains those steps leave (a bias add, a
    head transpose and a bf16 truncation; softmax's mask add and the three
    ops reading it) are fused once more, under narrower rules than upstream's
    (cuvil-fuse-elementwise-chains: never into a contraction, never repeating
    per-row work per element), before and after the unit dims go; an int8
    quantize at the end of a chain then clamps before it rounds, converts to
    i32 and adds its zero point as an integer, and loses a ReLU in front of it
    where its lower clamp does the same (cuvil-simplify-requantize). Unit dimensions are dropped late (1x128x768 -> 128x768: the
    schedules see rank <= 4 ops with projected-permutation maps), but for the
    VNNI contractions' panel loop (cuvil-fold-unit-extent-dims), and
    elementwise ops on short rows have their trailing loops merged (512x7x7
    -> 512x49: cuvil-collapse-short-rows).
    Last, every linalg op goes into a private kernel function, identical ones
    shared: repeated layers are scheduled, lowered and compiled once.
    """
    return ("cuvil-lower-tm-tensor",
            "func.func(cuvil-fold-zero-trip-linalg,cuvil-fold-concat-slices,cuvil-check-gather-indices,cuvil-strip-asserts)",
            "cuvil-guard-integer-division",
            "cuvil-mark-weights",
            "func.func(cuvil-raise-linalg)", "canonicalize", "cse",
            "linalg-fuse-elementwise-ops", "canonicalize", "cse",
            "cuvil-lower-to-linalg", "canonicalize", "cse",
            "func.func(cuvil-widen-bool-tensors,cuvil-winograd-conv,cuvil-im2col-conv"
            + _options({"min-input-channels": im2col_min_input_channels, "int8-k-multiple": int8_k_multiple,
                        "int8-shifted-rows": int8_shifted_rows, "shifted-rows-max-extra": shifted_rows_max_extra})
            + ",cuvil-propagate-channels-last)",
            "canonicalize", "cse",
            "func.func(cuvil-narrow-contraction-operands"
            + (f"{{element-type={narrow_type}" + (" batched-contractions" if narrow_batched else "") + "}"
               if narrow_type else "") + ")", "canonicalize", "cse",
            f"transform-preload-library{{transform-library-paths={pack_script}}}",
            f"transform-interpreter{{entry-point={pack_entry}}}", "canonicalize", "cse",
            "func.func(cuvil-unsigned-int8-lhs" + _options({"shifted-rows": unsigned_shifted_rows}) + ")",
            "canonicalize", "cse",
            "cuvil-split-prepack", "canonicalize", "cse",
            "func.func(cuvil-fuse-elementwise-chains)",
            "cuvil-fold-unit-extent-dims", "canonicalize",
            "func.func(cuvil-fuse-elementwise-chains,cuvil-collapse-short-rows,cuvil-simplify-requantize)",
            "canonicalize", "cse",
            "cuvil-outline-kernels", "canonicalize", "cse")


#: Cuvil ops (and sparse layouts) -> upstream linalg / tensor / arith / scf on
#: tensors: for IR written in the Cuvil dialect directly (the model pipeline
#: raises to Cuvil ops and lowers them back inside its raise step).
CUVIL_OPS_TO_LINALG = ("cuvil-lower-to-linalg",)

#: The entry points' C interface, and their arguments read-only (the caller's
#: memory: with writable arguments an op whose init is an argument
#: accumulates into it, e.g. a conv's bias broadcast hoisted into the packed
#: weights); then bufferize with identity layouts; results become
#: caller-allocated out-params (no allocation crosses the ABI); temporaries
#: are freed.
BUFFERIZE = (
    "cuvil-prepare-entry-points",
    "canonicalize", "cse",
    # A while loop's carried tensors (torch.while_loop) may be new buffers
    # each iteration: loops may yield allocations, which the ownership-based
    # deallocation below frees.
    "one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}",
    # Kernels (cuvil-outline-kernels) write into their destination argument;
    # canonicalize first so the returned buffer is seen to be that argument.
    "canonicalize", "drop-equivalent-buffer-results",
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
    # ...and reshaped results too (a packed matmul's product returned as [M, N]).
    "func.func(cuvil-results-in-place)",
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
    # Free at the last use, not at the end of main: the next buffer of that
    # size is then memory still in cache (see the pass). Copies of strided
    # views (into a kernel's identity-layout argument) as memcpy'd blocks,
    # not the runtime's per-element memrefCopy.
    "func.func(cuvil-early-dealloc,cuvil-strided-copies-as-rows)",
    "canonicalize", "cse",
)

#: profile=True: time every kernel call (after the deallocations have moved
#: next to the calls, so a kernel's time does not include a free).
PROFILE = ("cuvil-profile-kernels",)


def parallel_passes(num_threads: int) -> Tuple[str, ...]:
    """scf.forall (from the schedules) -> sequential loops, or async tasks."""
    if num_threads <= 1:
        return ("scf-forall-to-for",)
    # With 2 threads, one contiguous half per thread instead of 8 tasks per
    # thread taken by whichever is free: the caller always runs part 0 and the
    # one worker part 1, so each thread rereads what it wrote in the previous
    # kernel from its own caches (benchmarks/README.md has the measurements).
    # With more threads the shared task queue hands parts to any worker, so
    # there is no such locality to win, and upstream's oversharding balances
    # load better: not applied.
    partition = ",cuvil-partition-parallel-loops{parts=2}" if num_threads == 2 else ""
    return ("scf-forall-to-parallel", f"func.func(cuvil-collapse-parallel-loops{partition})",
            f"async-parallel-for{{async-dispatch=false num-workers={num_threads} min-task-size=1}}",
            "async-to-async-runtime", "async-runtime-ref-counting", "async-runtime-ref-counting-opt",
            "convert-async-to-llvm")


#: The math ops math-expand-ops rewrites into arith: upstream's whole list but
#: roundeven (see TO_LLVM), fma and ceil. math.fma is what the polynomial erf /
#: exp / tanh are made of (cuvil-math-approx): expanded, each became a multiply
#: and an add (GELU's erf, softmax's exp); as llvm.fma it is one vfmadd on
#: every x86-64 host with AVX2 and on AArch64. ceil's expansion (through an
#: integer conversion) turned NaN into 9.2e18 and -0.7 into +0 (div with
#: rounding_mode="trunc" of NaN); llvm.ceil is one vroundps / frintp.
MATH_EXPANDED = ("ctlz", "sinh", "cosh", "tan", "tanh", "asinh", "acosh", "atanh",
                 "exp2", "powf", "fpowi", "round", "rsqrt", "clampf")


TO_LLVM = (
    # A row chain tile's small intermediates: on the stack, restored per
    # iteration. Here, once the loops are final (after the threads' rewrites).
    "func.func(cuvil-stack-tile-buffers)",
    # Polynomial erf/exp/tanh while still on vectors: LLVM would scalarize
    # their intrinsics into one libm call per lane.
    "func.func(cuvil-math-approx)",
    # Round-and-convert (a quantize's, after cuvil-simplify-requantize) as
    # one vcvtps2dq.
    "func.func(cuvil-round-to-nearest-int)",
    # The int8 dot-product kernel's cuvil.x86.dot_u8s8 -> its LLVM intrinsic.
    "func.func(cuvil-lower-x86-dot)",
    "convert-vector-to-scf{full-unroll}",
    "lower-affine", "convert-scf-to-cf", "expand-strided-metadata", "lower-affine",
    # Math first, while arith is still arith: expand what has no intrinsic,
    # the rest to LLVM intrinsics or libm (f32/f64 only: f16 erf is computed
    # in f32 by the lowering; math-extend-to-supported-types emits fpext with
    # an arith fastmath attribute that LLVM translation rejects). Not
    # roundeven: llvm.roundeven is one instruction (vrndscaleps, frintn), its
    # expansion ~20 per vector (an int8 requantize ran 4x slower).
    "math-expand-ops{ops=" + ",".join(MATH_EXPANDED) + "}",
    "convert-math-to-llvm", "convert-math-to-libm",
    # enable-x86vector: the bf16 dot-product kernel's x86vector.avx512.dot;
    # enable-amx: cuvil-amx-matmul's tile ops.
    "convert-vector-to-llvm{enable-x86vector enable-amx}", "finalize-memref-to-llvm{use-generic-functions}",
    "convert-arith-to-llvm",
    "convert-index-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm", "convert-ub-to-llvm",
    # bf16 vectors of length 8k + 1 (a copy of 33-element rows) abort llc on
    # AVX-512 hosts: loaded and stored as i16 vectors instead.
    "reconcile-unrealized-casts", "cuvil-bf16-vector-memory-as-i16", "canonicalize", "cse",
)


#: The AMX schedule's marked tiles -> tile code, and the per-call VNNI packs of
#: bf16 batched products' rhs (AMX and AVX512-BF16 hosts) -> vector
#: interleaves (no-ops without them): on buffers, before the linalg ops left
#: become loops.
AMX = ("func.func(cuvil-vnni-interleave,cuvil-amx-matmul)",)
#: The same, without software prefetch of the weights (see
#: scheduling.prefetch_weights).
AMX_NO_PREFETCH = ("func.func(cuvil-vnni-interleave,cuvil-amx-matmul{prefetch-groups=0})",)


def lower_passes(num_threads: int = 1, profile: bool = False, prefetch_weights: bool = True) -> Tuple[str, ...]:
    """Scheduled linalg on tensors -> LLVM dialect."""
    return (*BUFFERIZE, *(AMX if prefetch_weights else AMX_NO_PREFETCH), *(PROFILE if profile else ()),
            "convert-linalg-to-loops", "cuvil-widen-bool-memrefs", *parallel_passes(num_threads), *TO_LLVM)


# -- the pipeline ----------------------------------------------------------------

@dataclass(frozen=True)
class Pipeline:
    """The steps after import, for one set of options."""
    steps: tuple

    def step(self, name: str):
        return next(s for s in self.steps if s.name == name)

    def fingerprint(self) -> str:
        """Everything in the pipeline that decides the generated code (script
        texts, not paths): part of the cache key."""
        return "\n".join(s.fingerprint() for s in self.steps)

    def replay_script(self, tools: Optional[Tools] = None, generic_linalg: bool = False) -> str:
        """A shell script that rebuilds, in the folder it is run from, every
        stage after `torch` of an exported model (model.<stage>.mlir, model.ll,
        model.so) from model.torch.mlir, with the tools Cuvil uses.
        `generic_linalg`: the linalg stage crossed in the generic form (it
        holds torch-mlir's tm_tensor ops: importer.crossing_text)."""
        tools = tools or Tools.installed()
        lines = ["#!/bin/sh",
                 "# Rebuilds every stage of this model from model.torch.mlir with the tools",
                 "# Cuvil used (written by `cuvil compile`; pipeline: cuvil.pipeline).",
                 "set -eu", 'cd "$(dirname "$0")"']
        from . import tools as tool_paths
        lines.append("export LD_LIBRARY_PATH=" + shlex.quote(
            f"{tool_paths.llvm_lib_dir()}:{tool_paths.mlir_lib_dir()}") + '"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"')
        lines.append(shlex.join([tools.torch_mlir_opt, "model.torch.mlir",
                                 f"--pass-pipeline={module_pipeline(TO_LINALG)}",
                                 *(["--mlir-print-op-generic"] if generic_linalg else []), "-o", "model.linalg.mlir"]))
        src = "model.linalg.mlir"
        for s in self.steps:
            if isinstance(s, Codegen):
                lines.append(f"cat > exports.map <<'EOF'\n{EXPORTS_MAP}EOF")
                lines += [shlex.join(c) for c in s.commands("model.ll", "model.o", "model.so", "exports.map", tools)]
                continue
            dst = "model.ll" if isinstance(s, Translate) else f"model.{s.produces}.mlir"
            lines += s.replay(src, dst, tools)
            src = dst
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The steps as documentation (tool names without paths)."""
        tools = Tools.placeholders()
        out = []
        for s in self.steps:
            out.append(f"### {s.name} -> {s.produces}\n")
            if isinstance(s, PassPipeline):
                out.append("```\ncuvil-opt IN --pass-pipeline='builtin.module(\n  "
                           + ",\n  ".join(_short_paths(p) for p in s.passes) + ")'\n```\n")
            elif isinstance(s, TransformSchedule):
                out += [f"- `{sc.path.name}` @{sc.entry}" for sc in s.scripts]
                out.append("")
            elif isinstance(s, Translate):
                out.append("```\n" + " ".join(s.command(tools)) + " IN -o model.ll\n```\n")
            elif isinstance(s, Codegen):
                out.append("```\n" + "\n".join(" ".join(c) for c in s.commands(
                    "model.ll", "model.o", "model.so", "exports.map", tools)) + "\n```\n")
        return "\n".join(out)


def _short_paths(p: str) -> str:
    import re
    return re.sub(r"=(/[^}\s]*/)([^/}\s]+\.mlir)", r"=transform_scripts/\2", p)


def compile_pipeline(num_threads: int = 1, opt_level: int = 3, profile: bool = False,
                     schedule: Optional[Sequence[Tuple[str, str]]] = None, cpu: str = "native",
                     precision: str = "fp32", features: Optional[FrozenSet[str]] = None,
                     weight_bytes: Optional[int] = None) -> Pipeline:
    """The pipeline `cuvil.compile` runs for these options. `schedule`: (transform
    script, entry sequence) pairs, default cuvil.scheduling.default_schedule for
    the target; opt_level 0 runs none (scalar loops). `precision`
    (cuvil.options.PRECISIONS) sets the contractions' operand type. `features`:
    the target's CPU features the kernels are picked from (default: the
    host's, cuvil.cpu_features; frozenset() for portable code). `weight_bytes`:
    the model's weights at that precision, if known
    (cuvil.scheduling.prefetch_weights)."""
    from . import cpu_features, scheduling
    from .options import PRECISIONS
    from .transform import script_path
    host = features is None
    target = cpu_features.features() if features is None else features
    schedule = scheduling.default_schedule(target) if schedule is None else schedule
    pack = script_path("pack_cpu")
    scripts = tuple(ScheduleScript(_script(s), e) for s, e in schedule) if opt_level > 0 else ()
    return Pipeline(steps=(
        PassPipeline("raise", "cuvil", raise_passes(
            pack, PRECISIONS[precision], scheduling.pack_entry(target, PRECISIONS[precision]),
            scheduling.batched_bf16_contractions(target, PRECISIONS[precision]),
            scheduling.int8_k_multiple(target), scheduling.int8_shifted_rows(target),
            scheduling.unsigned_shifted_rows(target), scheduling.shifted_rows_max_extra(target),
            scheduling.im2col_min_input_channels(target, PRECISIONS[precision])),
                     libraries=(pack,)),
        TransformSchedule("schedule", "scheduled", scripts),
        PassPipeline("lower", "llvm", lower_passes(num_threads, profile,
                                                   scheduling.prefetch_weights(weight_bytes))),
        Translate(),
        Codegen(num_threads=num_threads, cpu=cpu, profile=profile,
                mattr=cpu_features.llvm_mattr() if cpu == "native" and host else ""),
    ))


def _script(name_or_path: str) -> Path:
    from .transform import script_path
    path = Path(name_or_path)
    if path.suffix == ".mlir":
        return path.absolute()
    return script_path(name_or_path)


MARKDOWN_BEGIN = "<!-- BEGIN generated by `python -m cuvil.pipeline --markdown`: do not edit -->"
MARKDOWN_END = "<!-- END generated -->"


def markdown(pipe: Optional[Pipeline] = None) -> str:
    """The generated part of transform_scripts/PIPELINE.md: the import
    pipelines, then the steps of the 1-thread pipeline, then what changes
    for more threads and for profile builds."""
    from . import scheduling
    # The same text on every host: the pipeline for a CPU with no optional
    # features, then what the host's features change.
    pipe = pipe or compile_pipeline(1, features=frozenset())
    parts = [MARKDOWN_BEGIN, "",
             "### import -> torch, linalg (torch-mlir's context)\n",
             "```\ntorch-mlir-opt IN --pass-pipeline='" + module_pipeline(TORCH_BACKEND) + "'   # -> model.torch.mlir\n"
             "torch-mlir-opt model.torch.mlir --pass-pipeline='" + module_pipeline(TO_LINALG)
             + "'   # -> model.linalg.mlir\n```\n",
             pipe.markdown(),
             "### with N > 1 threads\n",
             "`scf-forall-to-for` in `lower` becomes (N = 2; for N > 2 without the partition pass):\n",
             "```\n" + ",\n".join(parallel_passes(2)) + "\n```\n",
             "and `codegen` runs `opt -passes=" + Codegen.CORO_PASSES + "` before `llc` and links "
             "`parallel_runtime.c` with `-pthread -DCUVIL_NUM_THREADS=N`.\n",
             "### on hosts with AVX512-BF16 / AVX512-VNNI (cuvil.cpu_features)\n",
             f"`raise` runs pack_cpu's `{scheduling.PACK_ENTRIES[True, True]}` (both), "
             f"`{scheduling.PACK_ENTRIES[True, False]}` or `{scheduling.PACK_ENTRIES[False, True]}` "
             f"instead of `{scheduling.PACK_ENTRY}` (bf16 / int8 matmuls' weights in VNNI panels; with "
             "AVX512-BF16 also attention's bf16 batched products and Winograd's bf16 batch matmuls, per batch), "
             "and `schedule` starts with "
             + ", ".join(f"`{s}.mlir` @{e}" for s, e in scheduling.DOT_SCHEDULE) + ". "
             "With AVX512-BF16 and `precision=\"bf16\"`, `cuvil-narrow-contraction-operands` gets "
             "`batched-contractions`: attention's products run on vdpbf16ps too; without AMX-BF16, "
             "`cuvil-im2col-conv` also gets `min-input-channels=1` (a few-channel conv, a ResNet's stem, "
             "is an im2col matmul on vdpbf16ps, not a direct conv converting bf16 to f32). "
             "With AVX512-VNNI and without AMX-INT8, `cuvil-im2col-conv` gets `int8-shifted-rows shifted-rows-max-extra="
             f"{scheduling.VNNI_SHIFTED_ROWS_MAX_EXTRA_PERCENT}` (a stride-1 int8 conv whose padded width adds "
             "few rows reads its padded input in place, no windows gathered) and `cuvil-unsigned-int8-lhs` "
             "`shifted-rows` (those convs read it flipped to unsigned, for vpdpbusd).\n",
             "### on hosts with AMX-BF16 / AMX-INT8\n",
             "`schedule` runs "
             + ", ".join(f"`{s}.mlir` @{e}" for s, e in scheduling.AMX_BF16_SCHEDULE + scheduling.AMX_INT8_SCHEDULE)
             + " first: their matmul tiles are marked `cuvil.amx`, and `cuvil-amx-matmul` in `lower` "
             "writes them as AMX tile code; the runtime library asks Linux for the tile state when it loads. "
             "On AMX-BF16 hosts `raise` runs "
             + " or ".join(f"`{e}`" for e in scheduling.AMX_BF16_PACK_ENTRIES.values())
             + " (no int8 dot products / int8 on vpdpbusd / on AMX-INT8 tiles), which also packs attention's "
             "batched products and Winograd's bf16 batch matmuls and pads the K of the matmuls the tiles take to whole 64-byte tile rows "
             "(on AMX-INT8 hosts `cuvil-im2col-conv` gets `int8-k-multiple=64 int8-shifted-rows`: int8 convs' "
             "windows are gathered that way, stride-1 ones are read in place), and with "
             "`precision=\"bf16\"` `cuvil-narrow-contraction-operands` gets `batched-contractions`: "
             "those products run on the tiles too. A model whose weights at the compiled precision are at most "
             f"{scheduling.PREFETCH_MIN_WEIGHT_BYTES >> 20} MB gets `" + AMX_NO_PREFETCH[0] + "` instead "
             "(they stay in cache between calls: prefetching them only costs; cuvil.scheduling.prefetch_weights).\n",
             "### with profile=True\n",
             "`" + "`, `".join(PROFILE) + "` right after the bufferization passes; `-DCUVIL_PROFILE` at link.\n",
             MARKDOWN_END]
    return "\n".join(parts)


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="python -m cuvil.pipeline", description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--markdown", action="store_true", help="the steps as markdown (PIPELINE.md)")
    args = p.parse_args(argv)
    pipe = compile_pipeline(args.threads, profile=args.profile)
    print(markdown() if args.markdown else pipe.fingerprint())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
