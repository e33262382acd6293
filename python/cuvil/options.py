"""What a compile is asked to do (CompileOptions, frozen and validated once)
and Cuvil's environment variables (Environment: every CUVIL_* read here).

    CUVIL_NUM_THREADS       threads of compiled code (default: the cores this process may use)
    CUVIL_CACHE_DIR         the library cache (default $XDG_CACHE_HOME/cuvil, ~/.cache/cuvil)
    CUVIL_CACHE_STRUCTURAL  0: no warm start from the model's structure (always import)
    CUVIL_REPRO_DIR         where failing stages save their IR (default $TMPDIR/cuvil-repro)
    CUVIL_CACHE_MAX_BYTES   size cap of the cache's libraries (default 5e9); least recently used go first
    CUVIL_CPU_FEATURES      edits the host CPU features kernels are picked from, e.g. -amx,-avx512_bf16
                            (cuvil.cpu_features)
    CUVIL_LOGS              comma-separated: `stages` logs each compile stage with its time (stderr)
    CUVIL_DUMP_DIR          every compile writes its IR after every pass, the pass timings and the
                            LLVM IR there (like dump_dir=; see cuvil.compiler)
"""
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

from . import pipeline as pipeline_module


@dataclass(frozen=True)
class Environment:
    """The CUVIL_* variables as they are now (read anew on each call of
    `environment()`, so a changed variable takes effect at the next compile)."""
    num_threads: Optional[int]
    cache_dir: Path
    structural_cache: bool
    repro_dir: Path
    cache_max_bytes: int = 5 * 10 ** 9
    cpu_features: str = ""
    logs: Tuple[str, ...] = ()
    dump_dir: Optional[Path] = None

    @classmethod
    def read(cls) -> "Environment":
        env = os.environ
        threads = env.get("CUVIL_NUM_THREADS")
        cache = env.get("CUVIL_CACHE_DIR") or os.path.join(
            env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cuvil")
        try:
            num_threads = max(1, int(threads)) if threads else None
        except ValueError:
            raise ValueError(f"CUVIL_NUM_THREADS={threads!r} is not a number of threads") from None
        cap = env.get("CUVIL_CACHE_MAX_BYTES")
        try:
            cache_max_bytes = int(float(cap)) if cap else 5 * 10 ** 9
        except ValueError:
            raise ValueError(f"CUVIL_CACHE_MAX_BYTES={cap!r} is not a number of bytes") from None
        return cls(num_threads=num_threads, cache_dir=Path(cache), cache_max_bytes=cache_max_bytes,
                   structural_cache=env.get("CUVIL_CACHE_STRUCTURAL", "1") != "0",
                   cpu_features=env.get("CUVIL_CPU_FEATURES", ""), logs=_logs(env.get("CUVIL_LOGS", "")),
                   dump_dir=Path(env["CUVIL_DUMP_DIR"]) if env.get("CUVIL_DUMP_DIR") else None,
                   repro_dir=Path(env.get("CUVIL_REPRO_DIR") or os.path.join(tempfile.gettempdir(), "cuvil-repro")))


#: What CUVIL_LOGS may name.
LOGS = ("stages",)


def _logs(spec: str) -> Tuple[str, ...]:
    names = tuple(n.strip().lstrip("+") for n in spec.split(",") if n.strip())
    unknown = [n for n in names if n not in LOGS]
    if unknown:
        raise ValueError(f"CUVIL_LOGS={spec!r}: unknown log {unknown[0]!r}; known: {', '.join(LOGS)}")
    return names


def environment() -> Environment:
    return Environment.read()


#: cuvil.compile(precision=...): the element type matmuls, batch matmuls and
#: convolutions read their operands in (weights converted once, in
#: main_prepack; accumulation, softmax, norms, reductions, GELU stay f32;
#: inputs and outputs keep the model's dtype). A bf16 / fp16 model computes
#: its contractions on bf16 / fp16 operands whatever this says. "int8" /
#: "int8-dynamic" quantize the model first (cuvil.quantize: PT2E), their
#: linear layers and convolutions then run on int8 operands (no float
#: narrowing: ""). "int8-weight" / "int4-weight" quantize only the linear
#: layers' weights (cuvil.quantize_weights): f32 activations times integer
#: weights converted in the kernel.
PRECISIONS = {"fp32": "", "bf16": "bf16", "fp16": "f16", "int8": "", "int8-dynamic": "",
              "int8-weight": "", "int4-weight": ""}

# Bytes per weight element at each precision (int4 weights: a byte a value
# in the kernels' unpacked operand).
WEIGHT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1, "int8-dynamic": 1, "int8-weight": 1,
                "int4-weight": 1}

# {input index: {dim: symbol name}} as a hashable, ordered tuple.
DynamicDims = Tuple[Tuple[int, Tuple[Tuple[int, str], ...]], ...]


def _dim_names(i, dims) -> Dict[int, str]:
    """dynamic_dims entry -> {dim: symbol name}: an int, a list, or a dict."""
    if isinstance(dims, int):
        dims = [dims]
    if isinstance(dims, dict):
        return {int(d): str(n) for d, n in dims.items()}
    return {int(d): f"in{i}_dim{d}" for d in dims}


@dataclass(frozen=True)
class CompileOptions:
    """Everything besides the model and its inputs that decides what is built."""
    target: str = "host"
    opt_level: int = 3
    num_threads: Optional[int] = None     # None: cuvil.get_num_threads() when compiling
    profile: bool = False                 # kernel timers compiled in
    dynamic_dims: DynamicDims = ()
    schedule: Optional[Tuple[Tuple[str, str], ...]] = None   # None: the default schedule
    use_cache: bool = True
    # Contractions' operand type (accumulation stays f32; see PRECISIONS).
    precision: str = "fp32"
    # The CPU features kernels may use: None for the host's (cuvil.cpu_features),
    # () for code any CPU of the architecture runs (cross builds: cuvil.export).
    target_features: Optional[Tuple[str, ...]] = None
    # Where the IR after every pass goes (not part of what is built: a
    # compile with a dump folder skips the cache lookup so that it dumps).
    dump_dir: Optional[str] = None

    def __post_init__(self):
        if self.target != "host":
            raise ValueError(f"target {self.target!r} is not supported; use target='host'")
        if self.opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0..3, got {self.opt_level!r}")
        if self.num_threads is not None and int(self.num_threads) < 1:
            raise ValueError(f"num_threads must be >= 1, got {self.num_threads}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {self.precision!r}")

    @classmethod
    def make(cls, target="host", opt_level=3, num_threads=None, profile=False, dynamic_dims=None,
             schedule=None, use_cache=True, precision="fp32", target_features=None,
             dump_dir=None) -> "CompileOptions":
        """From the arguments users pass (dynamic_dims as {input: dim | [dims] | {dim: name}})."""
        dyn = tuple(sorted((int(i), tuple(sorted(_dim_names(i, d).items())))
                           for i, d in (dynamic_dims or {}).items()))
        return cls(target=target, opt_level=opt_level, num_threads=num_threads, profile=bool(profile),
                   dynamic_dims=dyn, schedule=None if schedule is None else tuple(map(tuple, schedule)),
                   use_cache=use_cache, precision=precision,
                   target_features=None if target_features is None else tuple(sorted(target_features)),
                   dump_dir=None if dump_dir is None else str(dump_dir))

    @property
    def dynamic(self) -> Dict[int, Dict[int, str]]:
        """{input index: {dim: symbol name}}: one build serves every size of
        these dims; dims sharing a name are the same size."""
        return {i: dict(dims) for i, dims in self.dynamic_dims}

    def threads(self) -> int:
        from . import threads
        return int(self.num_threads or threads.get_num_threads())

    def pipeline(self, threads: int, weight_elements: Optional[int] = None) -> pipeline_module.Pipeline:
        """`weight_elements`: the model's parameter count, if known (its
        weights' size at this precision picks the AMX kernels' prefetching)."""
        weight_bytes = None if weight_elements is None else weight_elements * WEIGHT_BYTES[self.precision]
        return pipeline_module.compile_pipeline(threads, opt_level=self.opt_level, profile=self.profile,
                                                schedule=self.schedule, precision=self.precision,
                                                features=self.features(), weight_bytes=weight_bytes)

    def features(self):
        from . import cpu_features
        return cpu_features.features() if self.target_features is None else frozenset(self.target_features)

    def cache_key_parts(self, pipe: pipeline_module.Pipeline) -> Sequence[str]:
        """What decides the generated code besides the model's IR: the pipeline
        (passes, script texts, threads), the dynamic dims, the C runtime linked
        into every library, the build of the passes themselves, the Python
        front end (for warm starts, which skip the import), the host CPU."""
        from . import artifact
        return (pipe.fingerprint(), f"dynamic={list(self.dynamic_dims)}",
                artifact.runtime_sources(), artifact.compiler_build(), artifact.front_end_sources(),
                artifact.host_cpu(),
                "features=" + ",".join(sorted(self.features())))
