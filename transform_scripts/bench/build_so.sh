#!/usr/bin/env bash
# Build a shared library from a linalg-on-tensors .mlir file with the Cuvil
# transform schedule + the pass pipeline documented in ../PIPELINE.md.
#
#   build_so.sh <input.mlir> <output.so> [threads=1] [transform_library.mlir]
#
# threads=1 : scf.forall -> scf.for (sequential code, no runtime deps besides libc)
# threads>1 : scf.forall -> scf.parallel -> async-parallel-for (num-workers=threads),
#             needs `opt` for the coroutine passes and links libmlir_async_runtime.so.
# Env: VENV (default /work/main/.venv), MCPU (default native; e.g. znver4, znver5),
#      ASYNC_DISPATCH (default false), MIN_TASK_SIZE (default 1).
# Intermediates are kept next to the output: <out>.llvm.mlir, <out>.ll, <out>.o
set -euo pipefail
IN=$1; OUT=$2; THREADS=${3:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
TLIB=$(realpath "${4:-$HERE/../matmul_cpu.mlir}")
VENV=${VENV:-/work/main/.venv}
SP=$(echo "$VENV"/lib/python3*/site-packages)
MLIR_BIN=$SP/mlir/bin; MLIR_LIB=$SP/mlir/lib; LLVM_BIN=$SP/llvm/bin
MCPU=${MCPU:-native}

if [ "$THREADS" = 1 ]; then
  PAR="scf-forall-to-for"
else
  PAR="scf-forall-to-parallel,async-parallel-for{async-dispatch=${ASYNC_DISPATCH:-false} num-workers=$THREADS min-task-size=${MIN_TASK_SIZE:-1}},async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,convert-async-to-llvm"
fi

PIPE="builtin.module(\
transform-preload-library{transform-library-paths=$TLIB},\
transform-interpreter,\
canonicalize,cse,\
one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},\
buffer-results-to-out-params{hoist-static-allocs modify-public-functions},\
buffer-deallocation-pipeline,\
convert-bufferization-to-memref,\
canonicalize,cse,\
convert-linalg-to-loops,\
$PAR,\
convert-vector-to-scf{full-unroll},\
lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,\
convert-vector-to-llvm,finalize-memref-to-llvm,convert-arith-to-llvm,convert-math-to-llvm,\
convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,convert-ub-to-llvm,\
reconcile-unrealized-casts,canonicalize,cse)"

"$MLIR_BIN/mlir-opt" "$IN" --pass-pipeline="$PIPE" -o "$OUT.llvm.mlir"
"$MLIR_BIN/mlir-translate" --mlir-to-llvmir "$OUT.llvm.mlir" -o "$OUT.ll"
LLC_IN="$OUT.ll"
if [ "$THREADS" != 1 ]; then
  # async.execute is lowered to LLVM coroutines; llc alone cannot codegen
  # llvm.coro.* intrinsics, the CoroSplit/CoroCleanup passes must run first.
  "$LLVM_BIN/opt" -passes='default<O3>' -mcpu="$MCPU" "$OUT.ll" -o "$OUT.bc"
  LLC_IN="$OUT.bc"
fi
"$LLVM_BIN/llc" -O3 -mcpu="$MCPU" -filetype=obj --relocation-model=pic "$LLC_IN" -o "$OUT.o"
LIBS=(-L"$MLIR_LIB" -Wl,-rpath,"$MLIR_LIB" -lmlir_c_runner_utils)
[ "$THREADS" != 1 ] && LIBS+=(-lmlir_async_runtime)
gcc -shared "$OUT.o" -o "$OUT" "${LIBS[@]}"
