"""Stage 4, lower: scheduled linalg-on-tensors -> LLVM IR text.

The pipeline is data (a list of pass strings), so it can be printed,
exported and replayed with `cuvil-opt --pass-pipeline=...`:
bufferize with identity layouts, results become caller-allocated out-params
(no allocation crosses the ABI), temporaries are freed, then everything goes
to the LLVM dialect and through `mlir-translate` to LLVM IR.
"""
import subprocess

from . import tools
from .diagnostics import run_pipeline, save_reproducer
from .errors import CompileError

BUFFERIZE = [
    "canonicalize", "cse",
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
    # Kernels (cuvil-outline-kernels) write into their destination argument;
    # canonicalize first so the returned buffer is seen to be that argument.
    "canonicalize", "drop-equivalent-buffer-results",
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
    # Free at the last use, not at the end of main: the next buffer of that
    # size is then memory still in cache (see the pass).
    "func.func(cuvil-early-dealloc)",
    "canonicalize", "cse",
]

# profile=True: time every kernel call (after the deallocations have moved
# next to the calls, so a kernel's time does not include a free).
PROFILE = ["cuvil-profile-kernels"]


def parallel_passes(num_threads: int) -> list:
    """scf.forall (from the schedules) -> sequential loops, or async tasks."""
    if num_threads <= 1:
        return ["scf-forall-to-for"]
    # With 2 threads, one contiguous half per thread instead of 8 tasks per
    # thread taken by whichever is free: the caller always runs part 0 and the
    # one worker part 1, so each thread rereads what it wrote in the previous
    # kernel from its own caches. Measured (2 threads, same process,
    # interleaved): ResNet-18 19.4 -> 18.5 ms, GPT-2 117.6 -> 112.8, BERT-base
    # 114.9 -> 111.9; with the VM's vCPUs on two core complexes (170 ns
    # core-to-core) ResNet-18 32-35 -> 27.7 ms. With more threads the shared
    # task queue hands parts to any worker, so there is no such locality to
    # win, and upstream's oversharding balances load better: not applied.
    partition = ["cuvil-partition-parallel-loops{parts=2}"] if num_threads == 2 else []
    return [
        "scf-forall-to-parallel", "cuvil-collapse-parallel-loops", *partition,
        f"async-parallel-for{{async-dispatch=false num-workers={num_threads} min-task-size=1}}",
        "async-to-async-runtime", "async-runtime-ref-counting", "async-runtime-ref-counting-opt",
        "convert-async-to-llvm",
    ]


TO_LLVM = [
    # Polynomial erf/exp/tanh while still on vectors: LLVM would scalarize
    # their intrinsics into one libm call per lane.
    "cuvil-math-approx",
    "convert-vector-to-scf{full-unroll}",
    "lower-affine", "convert-scf-to-cf", "expand-strided-metadata", "lower-affine",
    # Math first, while arith is still arith: expand what has no intrinsic,
    # the rest to LLVM intrinsics or libm (f32/f64 only: f16 erf is computed
    # in f32 by the lowering; math-extend-to-supported-types emits fpext with
    # an arith fastmath attribute that LLVM translation rejects).
    "math-expand-ops",
    "convert-math-to-llvm", "convert-math-to-libm",
    "convert-vector-to-llvm", "finalize-memref-to-llvm{use-generic-functions}", "convert-arith-to-llvm",
    "convert-index-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm", "convert-ub-to-llvm",
    "reconcile-unrealized-casts", "canonicalize", "cse",
]


def pipeline(num_threads: int = 1, profile: bool = False) -> str:
    passes = BUFFERIZE + (PROFILE if profile else []) \
        + ["convert-linalg-to-loops", "cuvil-widen-bool-memrefs"] \
        + parallel_passes(num_threads) + TO_LLVM
    return "builtin.module(" + ",".join(passes) + ")"


# What to_llvm_dialect does to the entry points' arguments before the
# pipeline: part of the cache key (libraries built before it accumulated).
ENTRY_ARGUMENTS = "entry-arguments=read-only"


def read_only_entry_arguments(module) -> None:
    """Marks every argument of the public functions (main, main_prepack)
    `bufferization.writable = false`. They are the caller's memory (user
    inputs, the model's weights, the packed weights every call reuses); with
    writable arguments bufferization lets an op whose init is an argument
    accumulate into it (a conv's bias broadcast, hoisted into the packed
    weights, grew by the conv's output on every call). Bufferization copies
    such an init instead."""
    from .ir import ArrayAttr, BoolAttr, DictAttr
    with module.context:
        for op in module.body.operations:
            if op.operation.name != "func.func" or "sym_visibility" in op.attributes:
                continue
            n_args = len(op.regions[0].blocks[0].arguments)
            old = list(op.arg_attrs) if "arg_attrs" in op.attributes else [DictAttr.get({})] * n_args
            op.attributes["arg_attrs"] = ArrayAttr.get([
                DictAttr.get({**{a.name: a.attr for a in DictAttr(attrs)},
                              "bufferization.writable": BoolAttr.get(False)})
                for attrs in old])


def to_llvm_dialect(module, num_threads: int = 1, profile: bool = False) -> None:
    """In place: tensors -> memrefs -> LLVM dialect (entry arguments read-only)."""
    read_only_entry_arguments(module)
    run_pipeline(module, pipeline(num_threads, profile), "lower")


def translate_to_llvm_ir(llvm_dialect_text: str) -> str:
    """LLVM dialect -> LLVM IR, with the mlir-translate of the MLIR wheel."""
    tool = tools.mlir_bin("mlir-translate")
    proc = subprocess.run([str(tool), "--mlir-to-llvmir"], input=llvm_dialect_text,
                          capture_output=True, text=True, env=tools.tool_env())
    if proc.returncode != 0:
        path = save_reproducer(llvm_dialect_text, "translate")
        raise CompileError("translate", proc.stderr.strip(),
                           reproducer=f"{tool} --mlir-to-llvmir {path}")
    return proc.stdout
