"""bf16 x bf16 -> f32 matmuls (the contractions the raise step narrows to bf16)
through the transform schedules, run natively, against torch.

Three paths:
  * fallback (every AVX-512 host): pack_cpu.mlir's @cuvil_pack_matmul_rhs
    (64-column panels) + matmul_cpu.mlir / batch_matmul_cpu.mlir: bf16 rows
    extended to f32, FMAs;
  * dot (hosts with avx512_bf16): @cuvil_pack_matmul_rhs_bf16_vnni (VNNI
    panels) + matmul_dot_cpu.mlir: vdpbf16ps; lowered with
    convert-vector-to-llvm{enable-x86vector}.
  * amx (hosts with AMX-BF16): the same VNNI panels, matmul_dot_cpu.mlir's
    @cuvil_amx_bf16 tiles, written as tdpbf16ps tile code by
    cuvil-amx-matmul.
Odd sizes exercise the peeled rows, the zero-padded columns and (dot path)
the zero k row of an odd K.

Tolerance: the products of two bf16 values are exact in f32, so the only
error is the f32 summation order (register tiles, vdpbf16ps adding two
products at once): rtol = 1e-5, atol = 1e-5 x the output's largest magnitude.
vdpbf16ps also flushes denormals to zero, which these inputs do not have."""
import numpy as np
import pytest
import torch

from cuvil import artifact, cpu_features, execution, lowering, pipeline, scheduling, transform
from cuvil.ir import Context, FunctionType, Module, RankedTensorType, UnitAttr

HOST = cpu_features.features("")
HAS_AVX512_BF16 = scheduling.bf16_dot_product(HOST)
HAS_AMX_BF16 = scheduling.amx_bf16(HOST)
needs_amx = pytest.mark.skipif(not HAS_AMX_BF16, reason="host CPU has no AMX-BF16 (tdpbf16ps)")
needs_bf16 = pytest.mark.skipif(not HAS_AVX512_BF16, reason="host CPU has no avx512_bf16 (vdpbf16ps)")

FALLBACK = ("cuvil_pack_matmul_rhs", scheduling.DEFAULT_SCHEDULE[:2], False)
DOT = ("cuvil_pack_matmul_rhs_bf16_vnni",
       (("matmul_dot_cpu", "__transform_main"),) + scheduling.DEFAULT_SCHEDULE[:2], True)

AMX = ("cuvil_pack_matmul_rhs_bf16_vnni",
       (("matmul_dot_cpu", "cuvil_amx_bf16"), ("matmul_dot_cpu", "__transform_main")) + scheduling.DEFAULT_SCHEDULE[:2],
       True)


def _spec(type_):
    t = RankedTensorType(type_)
    return execution.TensorSpec(tuple(t.get_dim_size(i) for i in range(t.rank)), str(t.element_type))


def _lower_passes(x86vector):
    passes = pipeline.lower_passes(1)
    if x86vector:
        passes = tuple("convert-vector-to-llvm{enable-x86vector}" if p == "convert-vector-to-llvm" else p
                       for p in passes)
    return passes


def compile_matmuls(src, path):
    """Packs (the raise step's pack_cpu entry), splits the weight-only work
    into <f>_prepack, schedules and lowers; returns ({name: Function},
    scheduled IR, LLVM IR)."""
    pack_entry, schedule, x86vector = path
    with Context():
        module = Module.parse(src)
        transform.apply(module, transform.load("pack_cpu"), entry=pack_entry)
        pipeline.PassPipeline("prepack", "cuvil", ("canonicalize", "cse", "cuvil-split-prepack",
                                                    "canonicalize", "cse")).run(module)
        fns = {}
        for op in module.body.operations:
            if op.operation.name == "func.func":
                op.attributes["llvm.emit_c_interface"] = UnitAttr.get()
                ft = FunctionType(op.attributes["function_type"].value)
                fns[op.attributes["sym_name"].value] = ([_spec(t) for t in ft.inputs],
                                                        [_spec(t) for t in ft.results])
        scheduling.apply_schedule(module, schedule)
        scheduled = str(module)
        pipeline.PassPipeline("lower", "llvm", _lower_passes(x86vector)).run(module)
        llvm_ir = lowering.translate_to_llvm_ir(str(module))
    lib = execution.Library(artifact.build_shared_library(llvm_ir, artifact.cache_key(llvm_ir, "bf16"), 1))
    return {n: lib.function(n, i, o) for n, (i, o) in fns.items()}, scheduled, llvm_ir


def linear(m, k, n):
    """x @ W^T with W a weight (W^T packed in linear_prepack)."""
    return f"""func.func @linear(%x: tensor<{m}x{k}xbf16>, %w: tensor<{n}x{k}xbf16> {{cuvil.weight}}) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<{k}x{n}xbf16>
  %wt = linalg.transpose ins(%w : tensor<{n}x{k}xbf16>) outs(%et : tensor<{k}x{n}xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<{m}x{k}xbf16>, tensor<{k}x{n}xbf16>) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}"""


def bits(t):
    return t.contiguous().view(torch.int16).numpy()


def check_linear(m, k, n, path):
    fns, scheduled, llvm_ir = compile_matmuls(linear(m, k, n), path)
    torch.manual_seed(m * 7 + k * 3 + n)
    x, w = torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()
    (wp,) = fns["linear_prepack"](bits(w))
    (got,) = fns["linear"](bits(x), wp)
    want = (x.float() @ w.float().T).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
    return scheduled, llvm_ir


# 100x33x70 and 8x64x256: not packed (N < 128, M < 16): the plain schedule,
# peeled rows and masked columns; the others packed (37x33x200: N padded).
@pytest.mark.parametrize("m,k,n", [(100, 33, 70), (8, 64, 256), (37, 33, 200), (64, 256, 512)])
def test_fallback(m, k, n):
    scheduled, _ = check_linear(m, k, n, FALLBACK)
    assert "vector.fma" in scheduled and "vector<1xf32>" not in scheduled


def test_fallback_batch_matmul():
    src = """func.func @bmm(%a: tensor<3x37x33xbf16>, %b: tensor<3x33x70xbf16>) -> tensor<3x37x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x37x70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x37x70xf32>) -> tensor<3x37x70xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x37x33xbf16>, tensor<3x33x70xbf16>) outs(%f : tensor<3x37x70xf32>) -> tensor<3x37x70xf32>
  return %r : tensor<3x37x70xf32>
}"""
    fns, scheduled, _ = compile_matmuls(src, FALLBACK)
    assert "vector.fma" in scheduled and "vector<1xf32>" not in scheduled
    torch.manual_seed(0)
    a, b = torch.randn(3, 37, 33).bfloat16(), torch.randn(3, 33, 70).bfloat16()
    (got,) = fns["bmm"](bits(a), bits(b))
    want = (a.float() @ b.float()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


# 128x768x3072: BERT's FFN; 64x4096x256: K/2 = 2048, two K blocks of DOT_TK2;
# 37/65/130 rows: peeled rows; 8 / 7 rows: a few rows (M >= 4), 7 = one
# register tile and 3 rows one at a time; odd K (33, 1, 1025): a zero k row;
# N = 200, 257: padded panels.
@needs_bf16
@pytest.mark.parametrize("m,k,n", [(128, 768, 3072), (37, 33, 200), (65, 1, 128), (130, 1025, 257),
                                   (64, 4096, 256), (8, 64, 256), (7, 33, 200)])
def test_dot(m, k, n):
    scheduled, llvm_ir = check_linear(m, k, n, DOT)
    assert "x86vector.avx512.dot" in scheduled and "vector.contract" not in scheduled
    assert "llvm.x86.avx512bf16.dpbf16ps.512" in llvm_ir


@needs_bf16
def test_dot_leaves_fallback_matmuls():
    """Matmuls the VNNI entry does not pack (M < 4: a decode step, which the
    f32 kernel's few-rows panels stream as fast) still take the fallback."""
    scheduled, llvm_ir = check_linear(3, 64, 256, DOT)
    assert "vector.fma" in scheduled and "x86vector" not in scheduled


# The AMX kernel's pieces: 32-row blocks (64, 128 rows), a 16-row block (48,
# 130 = 4 x 32 + 2), the last rows % 16 through C's 16-row buffer (17, 37,
# 130); K a whole number of 8-product chunks (4096), chunks and a rest
# (768 = 24 products: 3 chunks; 1040 = 32 products and a 8-group tail),
# only a zero-padded K tail (33, 1); several panels (200, 257: padded).
# Rows a multiple of 1 KB apart (4096, 1024, 2048) are read from a copy of
# A in whole tiles, made before the forall: 37 rows zero-padded to 48 there,
# 130 rows in forall tiles of 128 and 2 rows (tile row offsets 0 and 128).
@needs_amx
@pytest.mark.parametrize("m,k,n", [(128, 768, 3072), (37, 33, 200), (17, 1, 128), (130, 1040, 257),
                                   (64, 4096, 256), (48, 768, 128), (37, 1024, 200), (130, 2048, 128)])
def test_amx(m, k, n):
    scheduled, llvm_ir = check_linear(m, k, n, AMX)
    assert "cuvil.amx" in scheduled and "llvm.x86.tdpbf16ps.internal" in llvm_ir


AMX_BATCHED = ("cuvil_pack_matmul_rhs_amx_bf16",) + AMX[1:]


# The AMX hosts' packing pads K to whole 32-value tile rows first (33 -> 64,
# 1040 -> 1056): the kernel then reads A in place, with no K tail; 768 has
# nothing to pad.
@needs_amx
@pytest.mark.parametrize("m,k,n", [(37, 33, 200), (130, 1040, 257), (128, 768, 256)])
def test_amx_pads_k_to_tile_rows(m, k, n):
    scheduled, llvm_ir = check_linear(m, k, n, AMX_BATCHED)
    padded = -(-k // 32) * 32
    assert f"tensor<{m}x{padded // 2}x2xbf16>" in scheduled
    assert ("tensor.pad" in scheduled) == (padded != k)
    assert "cuvil.amx" in scheduled and "llvm.x86.tdpbf16ps.internal" in llvm_ir


def batched_generic(b, m, k, n, loops):
    """C[b] = A[b] @ B[b] as cuvil-lower-to-linalg's batched linalg.generic
    (loops [b, m, k, n], or [b, m, n, k]) after
    cuvil-narrow-contraction-operands{batched-contractions}: bf16 operands
    extended in the body, an f32 accumulator."""
    if loops == "bmkn":
        maps = "(d0, d1, d2, d3) -> (d0, d1, d2)", "(d0, d1, d2, d3) -> (d0, d2, d3)", "(d0, d1, d2, d3) -> (d0, d1, d3)"
        iterators = '"parallel", "parallel", "reduction", "parallel"'
    else:
        maps = "(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)"
        iterators = '"parallel", "parallel", "parallel", "reduction"'
    a, bt, c = f"tensor<{b}x{m}x{k}xbf16>", f"tensor<{b}x{k}x{n}xbf16>", f"tensor<{b}x{m}x{n}xf32>"
    return f"""func.func @bmm(%a: {a}, %b: {bt}) -> {c} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {c}
  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}
  %r = linalg.generic {{indexing_maps = [affine_map<{maps[0]}>, affine_map<{maps[1]}>, affine_map<{maps[2]}>],
                       iterator_types = [{iterators}]}} ins(%a, %b : {a}, {bt}) outs(%f : {c}) {{
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> {c}
  return %r : {c}
}}"""


def check_batched(b, m, k, n, loops, path):
    fns, scheduled, llvm_ir = compile_matmuls(batched_generic(b, m, k, n, loops), path)
    torch.manual_seed(b + m * 7 + k * 3 + n)
    x, y = torch.randn(b, m, k).bfloat16(), torch.randn(b, k, n).bfloat16()
    (got,) = fns["bmm"](bits(x), bits(y))
    want = (x.float() @ y.float()).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
    return scheduled, llvm_ir


# Attention's products on AMX hosts (precision="bf16"): BERT-base's q.k^T
# (12x128x64 @ 12x64x128: two panels, two K steps) and p.v (one panel, K =
# 128); odd shapes: rows % 16 (37), a padded panel (70), an odd K (33: a
# zero k row in A's and B's packs), one batch. Each rhs is packed per call
# by cuvil-vnni-interleave.
@needs_amx
@pytest.mark.parametrize("b,m,k,n,loops", [(12, 128, 64, 128, "bmkn"), (12, 128, 128, 64, "bmkn"),
                                           (3, 37, 33, 70, "bmkn"), (1, 48, 64, 200, "bmnk")])
def test_amx_batched(b, m, k, n, loops):
    scheduled, llvm_ir = check_batched(b, m, k, n, loops, AMX_BATCHED)
    assert "cuvil.amx" in scheduled and "llvm.x86.tdpbf16ps.internal" in llvm_ir
    assert "shufflevector <64 x bfloat>" in llvm_ir   # the rhs's pack: cuvil-vnni-interleave


# The same generics elsewhere (no batched packing): batch_matmul_cpu's FMA kernel.
@pytest.mark.parametrize("b,m,k,n,loops", [(3, 37, 33, 70, "bmkn"), (2, 16, 64, 128, "bmnk")])
def test_fallback_batched_generic(b, m, k, n, loops):
    scheduled, _ = check_batched(b, m, k, n, loops, FALLBACK)
    assert "vector.fma" in scheduled and "cuvil.amx" not in scheduled


# The same products on the dot-product kernel (hosts with avx512_bf16 and no
# AMX: pack_cpu's bf16 VNNI entry packs them per batch, matmul_dot_cpu's
# @cuvil_vnni_bmm_cpu tiles one head at a time and fold_unit_batch makes each
# tile the matmul's rank-5 contraction): the same shapes as on AMX.
@needs_bf16
@pytest.mark.parametrize("b,m,k,n,loops", [(12, 128, 64, 128, "bmkn"), (12, 128, 128, 64, "bmkn"),
                                           (3, 37, 33, 70, "bmkn"), (1, 48, 64, 200, "bmnk")])
def test_dot_batched(b, m, k, n, loops):
    scheduled, llvm_ir = check_batched(b, m, k, n, loops, DOT)
    assert "x86vector.avx512.dot" in scheduled and "vector.contract" not in scheduled
    assert "linalg.generic" not in scheduled.split("func.func @bmm(")[1]   # nothing left as loops
    assert "llvm.x86.avx512bf16.dpbf16ps.512" in llvm_ir
