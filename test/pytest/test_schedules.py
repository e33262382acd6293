"""Scheduled code (the transform scripts of scheduling.DEFAULT_SCHEDULE, then
the native pipeline of cuvil.lowering) run natively on odd shapes, against
numpy. Odd sizes exercise the peeled/masked boundary tiles of every script:
the full tiles are unmasked, so a wrong remainder shows up here only.

Tolerances: elementwise exact or 1e-6; reductions, softmax, layer norm and
contractions rtol = atol = 1e-5 (the schedules reassociate sums: 16-wide
partial accumulators, register-tiled matmuls)."""
import numpy as np
import pytest

from cuvil import artifact, execution, lowering, scheduling
from cuvil.ir import Context, FunctionType, Module, RankedTensorType, UnitAttr

EXACT = dict(rtol=1e-6, atol=1e-6)
RED = dict(rtol=1e-5, atol=1e-5)
rng = np.random.default_rng(0)


def _spec(type_):
    t = RankedTensorType(type_)
    return execution.TensorSpec(tuple(t.get_dim_size(i) for i in range(t.rank)), str(t.element_type))


def compile_scheduled(src, schedule=scheduling.DEFAULT_SCHEDULE, threads=1):
    """Schedules and lowers a module with one func.func; returns (callable,
    the scheduled IR text)."""
    with Context():
        module = Module.parse(src)
        func = [op for op in module.body.operations if op.operation.name == "func.func"][0]
        func.attributes["llvm.emit_c_interface"] = UnitAttr.get()
        name = func.attributes["sym_name"].value
        ftype = FunctionType(func.attributes["function_type"].value)
        ins, outs = [_spec(t) for t in ftype.inputs], [_spec(t) for t in ftype.results]
        scheduling.apply_schedule(module, schedule)
        scheduled = str(module)
        lowering.to_llvm_dialect(module, threads)
        llvm_ir = lowering.translate_to_llvm_ir(str(module))
    lib = artifact.build_shared_library(llvm_ir, artifact.cache_key(llvm_ir, "schedules"), threads)
    return execution.Library(lib).function(name, ins, outs), scheduled


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def generic(ins, out, maps, iterators, body, init=None):
    """Text of one linalg.generic: ins = [(name, type)], out = type."""
    names = ", ".join(n for n, _ in ins)
    types = ", ".join(t for _, t in ins)
    args = ", ".join(f"%in{i}: {t.split('x')[-1].rstrip('>')}" for i, (_, t) in enumerate(ins))
    elt = out.split("x")[-1].rstrip(">")
    init = init or "%empty"
    return (f"linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = {iterators}}} "
            f"ins({names} : {types}) outs({init} : {out}) {{\n"
            f"^bb0({args}, %acc: {elt}):\n{body}\n}} -> {out}")


# -- elementwise ---------------------------------------------------------------
def test_elementwise_broadcast_odd_shape():
    op = generic([("%x", "tensor<7x129xf32>"), ("%b", "tensor<129xf32>"), ("%r", "tensor<7xf32>")],
                 "tensor<7x129xf32>",
                 ["affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (j)>", "affine_map<(i, j) -> (i)>",
                  "affine_map<(i, j) -> (i, j)>"], '["parallel", "parallel"]',
                 "  %s = arith.addf %in0, %in1 : f32\n  %m = arith.mulf %s, %in2 : f32\n"
                 "  %e = math.exp %m : f32\n  linalg.yield %e : f32")
    src = f"""func.func @f(%x: tensor<7x129xf32>, %b: tensor<129xf32>, %r: tensor<7xf32>) -> tensor<7x129xf32> {{
  %empty = tensor.empty() : tensor<7x129xf32>
  %y = {op}
  return %y : tensor<7x129xf32>
}}"""
    f, ir = compile_scheduled(src)
    assert "vector<64xf32>" in ir and "linalg.generic" not in ir
    x, b, r = randn(7, 129), randn(129), randn(7) * 0.3
    np.testing.assert_allclose(f(x, b, r)[0], np.exp((x + b) * r[:, None]), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 5, 17), (2, 3, 5, 70)])
def test_elementwise_rank3_rank4(shape):
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    r = len(shape)
    dims = ", ".join(f"d{i}" for i in range(r))
    ident = f"affine_map<({dims}) -> ({dims})>"
    last = f"affine_map<({dims}) -> (d{r - 1})>"
    op = generic([("%x", t), ("%b", f"tensor<{shape[-1]}xf32>")], t, [ident, last, ident],
                 str(["parallel"] * r).replace("'", '"'),
                 "  %s = arith.subf %in0, %in1 : f32\n  %m = arith.maximumf %s, %in1 : f32\n  linalg.yield %m : f32")
    src = f"""func.func @f(%x: {t}, %b: tensor<{shape[-1]}xf32>) -> {t} {{
  %empty = tensor.empty() : {t}
  %y = {op}
  return %y : {t}
}}"""
    f, ir = compile_scheduled(src)
    assert "linalg.generic" not in ir
    x, b = randn(*shape), randn(shape[-1])
    np.testing.assert_allclose(f(x, b)[0], np.maximum(x - b, b), **EXACT)


def test_integer_elementwise_and_gather():
    """Embedding-style gather (tensor.extract in the body) and i64 arithmetic."""
    src = """func.func @f(%ids: tensor<9xi64>, %table: tensor<50x70xf32>) -> (tensor<9x70xf32>, tensor<9xi64>) {
  %empty = tensor.empty() : tensor<9x70xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<9xi64>) outs(%empty : tensor<9x70xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<50x70xf32>
    linalg.yield %v : f32
  } -> tensor<9x70xf32>
  %ei = tensor.empty() : tensor<9xi64>
  %c3 = arith.constant 3 : i64
  %k = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%ids : tensor<9xi64>) outs(%ei : tensor<9xi64>) {
  ^bb0(%id: i64, %o: i64):
    %m = arith.muli %id, %c3 : i64
    linalg.yield %m : i64
  } -> tensor<9xi64>
  return %g, %k : tensor<9x70xf32>, tensor<9xi64>
}"""
    f, _ = compile_scheduled(src)
    ids = rng.integers(0, 50, size=9).astype(np.int64)
    table = randn(50, 70)
    g, k = f(ids, table)
    np.testing.assert_array_equal(g, table[ids])
    np.testing.assert_array_equal(k, ids * 3)


# -- reductions ------------------------------------------------------------------
SOFTMAX = """func.func @softmax(%x: tensor<{R}x{C}xf32>) -> tensor<{R}x{C}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<{R}xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<{R}xf32>) -> tensor<{R}xf32>
  %max = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<{R}x{C}xf32>) outs(%fm : tensor<{R}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }} -> tensor<{R}xf32>
  %e = tensor.empty() : tensor<{R}x{C}xf32>
  %ex = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}}
      ins(%x, %max : tensor<{R}x{C}xf32>, tensor<{R}xf32>) outs(%e : tensor<{R}x{C}xf32>) {{
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  }} -> tensor<{R}x{C}xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<{R}xf32>) -> tensor<{R}xf32>
  %sum = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}}
      ins(%ex : tensor<{R}x{C}xf32>) outs(%fs : tensor<{R}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }} -> tensor<{R}xf32>
  %y = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%ex, %sum : tensor<{R}x{C}xf32>, tensor<{R}xf32>) outs(%e : tensor<{R}x{C}xf32>) {{
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }} -> tensor<{R}x{C}xf32>
  return %y : tensor<{R}x{C}xf32>
}}"""


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("rows,cols", [(13, 100), (8, 128), (1, 7), (17, 33)])
def test_softmax(rows, cols):
    f, ir = compile_scheduled(SOFTMAX.format(R=rows, C=cols))
    assert "linalg.generic" not in ir
    x = randn(rows, cols) * 3
    np.testing.assert_allclose(f(x)[0], np_softmax(x), **RED)


def test_softmax_two_threads():
    """The scf.forall loops of the schedules as async tasks."""
    f, _ = compile_scheduled(SOFTMAX.format(R=29, C=100), threads=2)
    x = randn(29, 100) * 3
    np.testing.assert_allclose(f(x)[0], np_softmax(x), **RED)


def test_big_ops_two_threads():
    """Ops big enough for an scf.forall (async tasks with 2 threads): an
    attention-sized rank-3 row sum and a 64 x 3100 elementwise op."""
    t3, t2 = "tensor<4x128x130xf32>", "tensor<4x128xf32>"
    src = f"""func.func @f(%x: {t3}, %y: tensor<64x3100xf32>) -> ({t2}, tensor<64x3100xf32>) {{
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : {t2}
  %z = linalg.fill ins(%zero : f32) outs(%er : {t2}) -> {t2}
  %sum = linalg.generic {{indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%x : {t3}) outs(%z : {t2}) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }} -> {t2}
  %e = tensor.empty() : tensor<64x3100xf32>
  %g = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%y : tensor<64x3100xf32>) outs(%e : tensor<64x3100xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  }} -> tensor<64x3100xf32>
  return %sum, %g : {t2}, tensor<64x3100xf32>
}}"""
    f, ir = compile_scheduled(src, threads=2)
    assert ir.count("scf.forall") >= 2 and "linalg.generic" not in ir
    x, y = randn(4, 128, 130), randn(64, 3100)
    got_sum, got_tanh = f(x, y)
    np.testing.assert_allclose(got_sum, x.sum(-1), **RED)
    np.testing.assert_allclose(got_tanh, np.tanh(y), rtol=1e-5, atol=1e-6)


def test_layer_norm_rank3():
    """Mean and variance as rank-3 row reductions (batch x seq x hidden), odd sizes."""
    B, S, H = 2, 5, 77
    t, tr = f"tensor<{B}x{S}x{H}xf32>", f"tensor<{B}x{S}xf32>"
    m3 = "affine_map<(b, s, h) -> (b, s, h)>"
    m2 = "affine_map<(b, s, h) -> (b, s)>"
    mh = "affine_map<(b, s, h) -> (h)>"
    src = f"""func.func @ln(%x: {t}, %g: tensor<{H}xf32>, %beta: tensor<{H}xf32>) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {float(H)} : f32
  %eps = arith.constant 1.0e-5 : f32
  %er = tensor.empty() : {tr}
  %z = linalg.fill ins(%zero : f32) outs(%er : {tr}) -> {tr}
  %sum = linalg.generic {{indexing_maps = [{m3}, {m2}], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%x : {t}) outs(%z : {tr}) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }} -> {tr}
  %e = tensor.empty() : {t}
  %d = linalg.generic {{indexing_maps = [{m3}, {m2}, {m3}], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%x, %sum : {t}, {tr}) outs(%e : {t}) {{
  ^bb0(%a: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %c = arith.subf %a, %mean : f32
    linalg.yield %c : f32
  }} -> {t}
  %var = linalg.generic {{indexing_maps = [{m3}, {m2}], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%d : {t}) outs(%z : {tr}) {{
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %o : f32
    linalg.yield %s : f32
  }} -> {tr}
  %y = linalg.generic {{indexing_maps = [{m3}, {m2}, {mh}, {mh}, {m3}], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%d, %var, %g, %beta : {t}, {tr}, tensor<{H}xf32>, tensor<{H}xf32>) outs(%e : {t}) {{
  ^bb0(%a: f32, %v: f32, %gg: f32, %bb: f32, %o: f32):
    %vm = arith.divf %v, %n : f32
    %ve = arith.addf %vm, %eps : f32
    %r = math.rsqrt %ve : f32
    %xn = arith.mulf %a, %r : f32
    %xs = arith.mulf %xn, %gg : f32
    %xo = arith.addf %xs, %bb : f32
    linalg.yield %xo : f32
  }} -> {t}
  return %y : {t}
}}"""
    f, ir = compile_scheduled(src)
    assert "linalg.generic" not in ir
    x, g, beta = randn(B, S, H) * 2 + 1, randn(H), randn(H)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * g + beta
    np.testing.assert_allclose(f(x, g, beta)[0], want, **RED)


def test_bool_ops_are_left_scalar_and_correct():
    """An i1 reduction (softmax's all-masked row check) feeding a select: not
    vectorized (i1 buffers are bytes), still correct next to vectorized ops."""
    src = """func.func @f(%x: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<6xi1>
  %t = linalg.fill ins(%true : i1) outs(%eb : tensor<6xi1>) -> tensor<6xi1>
  %all = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x40xf32>) outs(%t : tensor<6xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf oeq, %a, %ninf : f32
    %r = arith.andi %c, %o : i1
    linalg.yield %r : i1
  } -> tensor<6xi1>
  %e = tensor.empty() : tensor<6x40xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%all, %x : tensor<6xi1>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %s = arith.select %m, %zero, %a : f32
    linalg.yield %s : f32
  } -> tensor<6x40xf32>
  return %y : tensor<6x40xf32>
}"""
    f, ir = compile_scheduled(src)
    assert ir.count("linalg.generic") == 2          # both touch i1: left for the loops
    x = randn(6, 40)
    x[2, :] = -np.inf
    want = np.where(np.all(x == -np.inf, axis=1, keepdims=True), 0.0, x)
    np.testing.assert_array_equal(f(x)[0], want)


# -- transposes -------------------------------------------------------------------
@pytest.mark.parametrize("shape,perm", [((1, 33, 3, 17), (0, 2, 3, 1)),   # k^T of attention
                                        ((1, 33, 3, 17), (0, 2, 1, 3)),   # head split
                                        ((5, 19, 35), (2, 0, 1)),
                                        ((37, 21), (1, 0))])
def test_transpose(shape, perm):
    t_in = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    out_shape = tuple(shape[p] for p in perm)
    t_out = "tensor<" + "x".join(map(str, out_shape)) + "xf32>"
    src = f"""func.func @t(%x: {t_in}) -> {t_out} {{
  %e = tensor.empty() : {t_out}
  %y = linalg.transpose ins(%x : {t_in}) outs(%e : {t_out}) permutation = {list(perm)}
  return %y : {t_out}
}}"""
    f, ir = compile_scheduled(src)
    assert "linalg.transpose" not in ir
    x = randn(*shape)
    np.testing.assert_array_equal(f(x)[0], np.transpose(x, perm))



def test_schedule_params_reach_the_scripts_that_have_them():
    """apply_schedule(params=...) binds each name in the scripts declaring it
    (transform.parameters) and refuses names no script has; the scripts' text
    is not edited."""
    from cuvil import transform
    from cuvil.errors import TransformError

    def schedule(params=None):
        with Context():
            module = Module.parse(SOFTMAX.format(R=13, C=100))
            reports = scheduling.apply_schedule(module, params=params)
            return str(module), reports

    default, _ = schedule()
    ir, reports = schedule({"RED_ROWS": 4, "EW_VEC": 32, "TM": 32})
    assert [r.params.get("TM") for r in reports] == [32, 32, None, None]
    assert reports[2].params == {**transform.parameters(transform.load("elementwise_cpu"), "cuvil_elementwise"),
                                 "RED_ROWS": 4, "EW_VEC": 32}
    assert "vector<4x16xf32>" in ir and "vector<32xf32>" in ir
    assert "vector<4x16xf32>" not in default and "vector<8x16xf32>" in default
    with pytest.raises(TransformError, match=r"no script of the schedule has parameters named \['NOPE'\]"):
        schedule({"NOPE": 1, "TM": 32})

# -- batched matmuls ----------------------------------------------------------------
BMKN = """func.func @bmm(%a: tensor<{B}x{M}x{K}xf32>, %b: tensor<{B}x{K}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{B}x{M}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{B}x{M}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (b, k, n)>,
                                         affine_map<(b, m, k, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
      ins(%a, %b : tensor<{B}x{M}x{K}xf32>, tensor<{B}x{K}x{N}xf32>) outs(%f : tensor<{B}x{M}x{N}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }} -> tensor<{B}x{M}x{N}xf32>
  return %r : tensor<{B}x{M}x{N}xf32>
}}"""

BATCH_MATMUL = """func.func @bmm(%a: tensor<{B}x{M}x{K}xf32>, %b: tensor<{B}x{K}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{B}x{M}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{B}x{M}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<{B}x{M}x{K}xf32>, tensor<{B}x{K}x{N}xf32>)
                           outs(%f : tensor<{B}x{M}x{N}xf32>) -> tensor<{B}x{M}x{N}xf32>
  return %r : tensor<{B}x{M}x{N}xf32>
}}"""


@pytest.mark.parametrize("template", [BMKN, BATCH_MATMUL], ids=["bmkn_generic", "batch_matmul"])
@pytest.mark.parametrize("B,M,K,N", [(12, 128, 64, 128), (3, 7, 5, 70), (2, 65, 33, 129), (1, 1, 1, 1)])
def test_batched_matmul(template, B, M, K, N):
    f, ir = compile_scheduled(template.format(B=B, M=M, K=K, N=N))
    assert "linalg.generic" not in ir and "linalg.batch_matmul" not in ir
    assert "vector.fma" in ir
    a, b = randn(B, M, K), randn(B, K, N)
    np.testing.assert_allclose(f(a, b)[0], a @ b, **RED)


MATMUL = """func.func @mm(%a: tensor<{M}x{K}xf32>, %b: tensor<{K}x{N}xf32>) -> tensor<{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>)
                     outs(%f : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  return %r : tensor<{M}x{N}xf32>
}}"""


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("kind", ["matmul", "batch_matmul"])
def test_contractions_on_several_threads(kind, threads):
    """The schedules' scf.forall loops as async tasks: 2 threads take the
    2-way partition, 3 and 4 upstream's async-parallel-for with that many
    workers (on this 2-core machine, oversubscribed). Odd sizes: boundary
    tiles land in different tasks."""
    if kind == "matmul":
        f, ir = compile_scheduled(MATMUL.format(M=197, K=130, N=259), threads=threads)
        a, b = randn(197, 130), randn(130, 259)
    else:
        f, ir = compile_scheduled(BATCH_MATMUL.format(B=7, M=65, K=33, N=129), threads=threads)
        a, b = randn(7, 65, 33), randn(7, 33, 129)
    assert "scf.forall" in ir and "vector.fma" in ir
    for _ in range(5):   # tasks race differently from call to call
        np.testing.assert_allclose(f(a, b)[0], a @ b, **RED)


# -- B-packed matmuls (pack_cpu.mlir in RAISE_PIPELINE + matmul_cpu) ------------------
@pytest.mark.parametrize("batch,sizes", [(37, (33, 200, 130)),       # odd M, K; N padded to 256 / 192
                                         (64, (96, 128, 64)),        # N = 128 packed, then N = 64 plain
                                         (16, (300, 1000)),           # N = 1000 -> 1024 (16 panels)
                                         (99, (64, 768, 130)),        # row tiles of 64 and 35: 35 % 4 rows alone
                                         (605, (64, 256, 130))])      # tall: 6-row tiles; 605 = 6 x 96 + 29 (4 alone)
def test_packed_linear_layers(tmp_path, batch, sizes):
    """nn.Linear layers through cuvil.compile: W^T packed into 64-column
    panels in main_prepack, the packed kernel in main, numerics vs torch."""
    import torch
    import cuvil

    torch.manual_seed(0)
    dims = (sizes[0],) + sizes
    layers = [torch.nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])][1:]
    model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.GELU())]).eval()
    x = torch.randn(batch, sizes[0])
    fast = cuvil.compile(model, example_inputs=(x,))
    fast.export_ir(str(tmp_path / "cuvil.mlir"), stage="cuvil")
    text = (tmp_path / "cuvil.mlir").read_text()
    main = text[text.index("func.func @main("):text.index("func.func @main_prepack")]
    assert "linalg.transpose" not in main                       # W^T and the panels: prepack
    assert "x64xf32> {cuvil.packed" in main                     # a [N/64][K][64] weight
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(fast(x), want, rtol=1e-4, atol=1e-5)


def test_packed_linear_result_is_written_in_place(tmp_path):
    """A model whose result is a packed matmul's product ([M, N/64, 64] seen
    as [M, N]): the kernel writes the caller's output buffer (no temporary
    copied out: cuvil-results-in-place), and the values are right."""
    import torch
    import cuvil

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(96, 256), torch.nn.ReLU(), torch.nn.Linear(256, 192)).eval()
    x = torch.randn(37, 96)
    fast = cuvil.compile(model, example_inputs=(x,))
    fast.export_ir(str(tmp_path / "llvm.mlir"), stage="llvm")
    text = (tmp_path / "llvm.mlir").read_text()
    main = text[text.index("llvm.func @main("):]
    main = main[:main.index("\n  }\n")]
    assert "@cuvil_kernel_" in main and "memcpy" not in main and "memrefCopy" not in main
    with torch.no_grad():
        torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)
