"""Quantized models from PyTorch's PT2E flow (torchao's X86InductorQuantizer):
compiled int8 against the quantized model run eagerly (its reference).

Tolerance: one quantization step of the coarsest activation quantizer in the
graph. Cuvil sums the integer products exactly where the reference sums
dequantized floats, so a value that lands on a rounding boundary of a later
quantize can round the other way: one step there, carried through the
layers after it. Measured: the MLP and the conv block agree to 3e-7 (a few
float roundings), the decoder block to 1.2e-3 with a step of ~2e-2."""
import logging
import re

import pytest
import torch

import cuvil
from cuvil import cpu_features
import models

pytest.importorskip("torchao", reason="PT2E quantization needs torchao (pip install cuvil[quant])")

HAS_VNNI = "avx512_vnni" in cpu_features.features("")
HAS_AMX_INT8 = {"amx_tile", "amx_int8"} <= cpu_features.features("")


def pt2e(model, example, calibration, dynamic=False):
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    exported = torch.export.export(model.eval(), example)
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config(is_dynamic=dynamic))
    prepared = prepare_pt2e(exported.module(), quantizer)
    for inputs in calibration:
        prepared(*inputs)
    return convert_pt2e(prepared)


def coarsest_step(converted) -> float:
    steps = [float(n.args[1]) for n in converted.graph.nodes
             if n.op == "call_function" and "quantize_per_tensor" in str(n.target)
             and isinstance(n.args[1], float)]
    assert steps, "no static activation quantizer in the graph"
    return max(steps)


def _check(model, make_input, rounds=3):
    torch.manual_seed(0)
    converted = pt2e(model, make_input(), [make_input() for _ in range(8)])
    fast = cuvil.compile(converted)
    step = coarsest_step(converted)
    for _ in range(rounds):
        x = make_input()
        with torch.no_grad():
            want, got = converted(*x), fast(*x)
        assert got.dtype == want.dtype and got.shape == want.shape
        err = float((got - want).abs().max())
        assert err <= step, f"max error {err} > one quantization step {step}"
    return converted, fast


def test_mlp_runs_integer_matmuls():
    converted, fast = _check(models.MLP(models.SMALL_MLP), lambda: (torch.randn(8, 64),))
    linalg = fast.stage_ir("linalg")
    # Every linear layer became an int8 x int8 -> int32 matmul.
    assert linalg.count("linalg.matmul") == 3
    assert linalg.count("xi8>, tensor<") >= 3 and "-> tensor<8x32xf32>" in linalg


@pytest.mark.skipif(not HAS_VNNI, reason="host CPU has no avx512_vnni: no unsigned-lhs correction to place")
def test_int8_matmul_correction_is_written_by_the_kernel_not_packed_per_row():
    """The u8 x s8 form's correction (-128 x the weight's column sums) is one
    value per column: packed as a vector and broadcast inside the matmul's
    kernel, not packed as a full [rows x columns] int32 tensor that every call
    copies into the accumulator (1.5 MB per BERT-base FFN matmul)."""
    _, fast = _check(models.MLP((256, 512, 256)), lambda: (torch.randn(32, 256),))
    raised = fast.stage_ir("cuvil")
    main = raised[raised.index("func.func @main("):]
    main = main[:main.index("{\n")]
    packed_i32 = re.findall(r"tensor<([0-9x]+)xi32> \{cuvil\.packed", main)
    assert packed_i32, "no packed int32 column sums: the int8 matmuls were not VNNI-packed"
    assert all(not shape.startswith("32x") for shape in packed_i32), packed_i32
    assert re.search(r"linalg\.generic[^\n]*\n[^\n]*\n[^\n]*linalg\.yield %in : i32", raised), \
        "no broadcast of the correction inside a kernel"


class _StemWithPool(torch.nn.Module):
    """ResNet's stem (conv, BatchNorm, ReLU, 3x3 / 2 max pool, padded) and a
    residual block: X86InductorQuantizer then quantizes the pool's input, and
    its output with the same scale and zero point."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        self.block = models.BasicBlock(16, 16, 1)
        models.randomize_bn(self)

    def forward(self, x):
        return self.block(self.stem(x))


def test_max_pool_between_quantizers_pools_the_int8_values():
    """quantize(max_pool(dequantize(q))) with one scale and zero point is
    max_pool(q): no float pool, no dequantize / quantize around it."""
    converted, fast = _check(_StemWithPool(), lambda: (torch.randn(2, 3, 20, 20),))
    linalg = fast.stage_ir("linalg")
    pools = re.findall(r"linalg\.pooling_nchw_max [^\n]*", linalg)
    assert len(pools) == 1 and "xi8>" in pools[0] and "xf32>" not in pools[0], pools


def test_decoder_block():
    _check(models.DecoderBlock(64, 4), lambda: (torch.randn(2, 16, 64),))


def test_conv_block_with_batch_norm_and_residual():
    torch.manual_seed(0)
    block = models.BasicBlock(16, 16, 1)
    models.randomize_bn(block)
    _check(block, lambda: (torch.randn(2, 16, 12, 12),))


def test_operators_without_integer_form_run_in_float_with_a_log_line(caplog):
    torch.manual_seed(0)
    block = models.BasicBlock(8, 8, 1)
    models.randomize_bn(block)
    converted = pt2e(block, (torch.randn(1, 8, 8, 8),), [(torch.randn(1, 8, 8, 8),)])
    logger = logging.getLogger("cuvil")
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="cuvil"):
            fast = cuvil.compile(converted)
            x = torch.randn(1, 8, 8, 8)
            torch.testing.assert_close(fast(x), converted(x), rtol=0, atol=coarsest_step(converted))
    finally:
        logger.setLevel(old)
    floats = [r.getMessage() for r in caplog.records if "runs in float" in r.getMessage()]
    assert any(m.startswith("cuvil: add ") for m in floats), floats


def test_exported_module_is_not_switched_with_eval():
    """PT2E's modules refuse .eval(); compiling one does not call it."""
    converted = pt2e(models.MLP(models.SMALL_MLP), (torch.randn(4, 64),), [(torch.randn(4, 64),)])
    with pytest.raises(NotImplementedError):
        converted.eval()
    fast = cuvil.compile(converted)
    x = torch.randn(4, 64)
    assert float((fast(x) - converted(x)).abs().max()) <= coarsest_step(converted)


class _IntMatmul(torch.nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.register_buffer("weight", weight)

    def forward(self, a):
        return torch._int_mm(a, self.weight)


@pytest.mark.parametrize("features", [
    pytest.param("", marks=pytest.mark.skipif(not HAS_AMX_INT8, reason="host CPU has no AMX-INT8")),
    pytest.param("-amx", marks=pytest.mark.skipif(not HAS_VNNI, reason="host CPU has no avx512_vnni (vpdpbusd)")),
    "-avx512_vnni,-amx"], ids=["amx", "vnni", "no-vnni"])
@pytest.mark.parametrize("m,k,n", [(32, 256, 192), (17, 100, 130), (7, 100, 130), (2, 64, 192), (5, 64, 48)])
def test_int8_matmul_is_exact(m, k, n, features, monkeypatch):
    """int8 x int8 -> int32 with the extreme values (the products' range), on
    the packed kernels (N >= 64; AMX tiles for M >= 16, vpdpbusd for any M,
    where the host has them; K = 100 padded to quads; AMX: 16-row blocks and
    the last row through a 16-row buffer), their row remainder (7 rows: one
    4-row register tile and 3 rows one at a time; 2 rows), and the plain one."""
    monkeypatch.setenv("CUVIL_CPU_FEATURES", features)
    g = torch.Generator().manual_seed(0)
    w = torch.randint(-128, 128, (k, n), dtype=torch.int8, generator=g)
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=g)
    a[0], w[:, 0] = -128, -128
    a[1], w[:, 1] = 127, -128
    fast = cuvil.compile(_IntMatmul(w))
    want = a.to(torch.int32) @ w.to(torch.int32)
    assert torch.equal(fast(a), want)
    packed = n >= 64 and (m >= 16 or features == "-amx")
    kernel = fast.stage_ir("scheduled")
    if features == "" and packed:
        # Marked for cuvil-amx-matmul, which writes it as tile code.
        assert "cuvil.amx" in kernel
        assert "llvm.x86.tdpbusd.internal" in fast.last_signature.ir["llvm_ir"]
        # K padded to whole 64-byte tile rows (100 -> 128: 32 quads), so the
        # tiles read A in place.
        assert f"x{-(-k // 64) * 16}x4xi8>" in kernel
        return
    # Scheduled, not left to scalar loops: the products are vector code.
    assert not re.search(r"arith\.muli [^\n]*: i32\n", kernel)
    dots = "cuvil.x86.dot_u8s8" in kernel
    assert dots == (features == "-amx" and packed)
    assert dots or re.search(r"arith\.muli[^\n]*vector<", kernel)


class _Int8Conv(torch.nn.Module):
    def __init__(self, weight, stride, padding, dilation):
        super().__init__()
        self.register_buffer("weight", weight)
        self.geometry = stride, padding, dilation

    def forward(self, q):
        from cuvil.importer_quantized import int8_conv2d
        return int8_conv2d(q, 1.0, 3, self.weight, 1.0, None, *self.geometry)


@pytest.mark.parametrize("shape,kernel,stride,padding,dilation", [
    ((1, 3, 20, 20), 7, 2, 3, 1),      # a ResNet stem: 3 channels, im2col
    ((1, 16, 9, 9), 3, 1, 1, 1),
    ((1, 16, 9, 9), 1, 2, 0, 1),       # the strided 1x1 downsample
    ((1, 8, 11, 11), 3, 1, 2, 2),      # dilated
    ((2, 8, 6, 6), 3, 1, 1, 1),        # batch 2: not an im2col matmul
])
def test_int8_conv_is_exact(shape, kernel, stride, padding, dilation):
    """The integer sums of an int8 conv (zero point 3, padding with it) equal
    the float conv of the dequantized values, computed in float64."""
    g = torch.Generator().manual_seed(0)
    cout = 32
    w = torch.randint(-128, 128, (cout, shape[1], kernel, kernel), dtype=torch.int8, generator=g)
    q = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    geometry = [stride] * 2, [padding] * 2, [dilation] * 2
    fast = cuvil.compile(_Int8Conv(w, *geometry))
    want = torch.nn.functional.conv2d(q.double() - 3, w.double(), None, stride, padding, dilation)
    assert torch.equal(fast(q).double(), want)


@pytest.mark.parametrize("features", [
    pytest.param("", marks=pytest.mark.skipif(not HAS_AMX_INT8, reason="host CPU has no AMX-INT8")),
    pytest.param("-amx", marks=pytest.mark.skipif(not HAS_VNNI, reason="host CPU has no avx512_vnni (vpdpbusd)")),
    "-amx,-avx512_vnni"], ids=["amx", "vnni", "no-dot-product"])
@pytest.mark.parametrize("shape,cout,kernel,padding,vnni_rows", [
    # 32 x 32 x 9 x 64 = 590 KB gathered: over shifted rows on AMX; on VNNI
    # too (32 x 34 rows computed for 32 x 32 pixels: 6% extra)
    ((1, 64, 32, 32), 128, 3, 1, True),
    ((1, 64, 32, 32), 64, 3, 1, True),     # one output panel: the panel loop the unit-dim folding keeps
    # 5 x 5 taps, a non-square input, one panel; 24 x 44 -> 1088 rows for
    # 960 pixels: 13% extra, too many for the dot-product kernel
    ((1, 64, 24, 40), 64, 5, 2, False),
    ((1, 64, 34, 34), 64, 3, 0, False),  # no pad in front: an im2col matmul everywhere
])
def test_int8_conv_over_shifted_rows_is_exact(shape, cout, kernel, padding, vnni_rows, features, monkeypatch):
    """Stride-1 int8 convs with 64-byte channel rows: on AMX-INT8 hosts one
    contraction over shifted rows of the padded input (signed x signed
    tiles, tdpbssd); on hosts with vpdpbusd and no AMX the same where the
    padded width adds at most 8% rows (u8 x s8: the input flipped, B's sums
    over the window); else (and without a pad to add rows to) an im2col
    matmul; the same exact integer sums every way."""
    monkeypatch.setenv("CUVIL_CPU_FEATURES", features)
    g = torch.Generator().manual_seed(0)
    w = torch.randint(-128, 128, (cout, shape[1], kernel, kernel), dtype=torch.int8, generator=g)
    q = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    q[0, :, 0, 0], w[0] = -128, -128     # the extreme product, summed over the whole window
    geometry = [1, 1], [padding] * 2, [1, 1]
    fast = cuvil.compile(_Int8Conv(w, *geometry))
    want = torch.nn.functional.conv2d(q.double() - 3, w.double(), None, 1, padding)
    assert torch.equal(fast(q).double(), want)
    ir = fast.last_signature.ir
    on_amx = "llvm.x86.tdpbssd.internal" in ir["llvm_ir"]
    assert on_amx == (features == "" and padding > 0)
    # The shifted-rows form's weights: [F/64][KH][KW][C/4][64][4].
    over_shifted_rows = re.search(rf"tensor<{cout // 64}x{kernel}x{kernel}x16x64x4xi8>", ir["cuvil"]) is not None
    assert over_shifted_rows == (on_amx or (features == "-amx" and vnni_rows))


class _Quantize(torch.nn.Module):
    def __init__(self, scale, zero_point, relu):
        super().__init__()
        self.scale, self.zero_point, self.relu = scale, zero_point, relu

    def forward(self, x):
        if self.relu:
            x = torch.relu(x)
        return torch.ops.quantized_decomposed.quantize_per_tensor.default(
            x, self.scale, self.zero_point, -128, 127, torch.int8)


@pytest.mark.parametrize("zero_point,relu", [(3, False), (-128, True), (-100, True)])
def test_quantize_is_exact_at_ties_and_beyond_the_range(zero_point, relu):
    """quantize_per_tensor compiled (cuvil-simplify-requantize: clamp before
    rounding, the zero point added as an integer, a ReLU dropped where the
    clamp at qmin does its work; cuvil-round-to-nearest-int: one vcvtps2dq)
    equals eager on every value: halfway cases (x / scale = k + 0.5, rounded
    to even), values far outside the int8 range, zeros of both signs."""
    scale = 0.5
    ties = torch.arange(-300, 300, dtype=torch.float32) * scale + scale / 4
    x = torch.cat([ties, torch.tensor([0.0, -0.0, 1e30, -1e30, 3e9, -3e9, 63.75, 64.25, -64.25]),
                   torch.randn(1000) * 80]).reshape(1, -1)
    model = _Quantize(scale, zero_point, relu)
    fast = cuvil.compile(model, (x,))
    assert torch.equal(fast(x), model(x))
    assert "llvm.lrint" in fast.last_signature.ir["llvm_ir"]


def _relative_error(got, want) -> float:
    return float((got - want).norm() / want.norm())


@pytest.mark.parametrize("precision", ["int8", "int8-dynamic"])
@pytest.mark.parametrize("name", ["mlp", "conv_block", "decoder_block"])
def test_precision_int8_stays_near_fp32(name, precision):
    """cuvil.compile(model, precision=...) quantizes the fp32 model itself
    (PT2E) and stays within 6% relative (L2) of fp32 eager. Measured (Zen 5):
    MLP 1.2% / 1.1% (static / dynamic), conv block 0.9% (static; dynamic
    leaves convolutions float: fp32's numerics), decoder block 0.4% / 0.3%."""
    torch.manual_seed(0)
    if name == "mlp":
        model, make = models.MLP(models.SMALL_MLP), lambda: torch.randn(16, 64)
    elif name == "conv_block":
        model, make = models.BasicBlock(16, 16, 1), lambda: torch.randn(1, 16, 12, 12)
        models.randomize_bn(model)
    else:
        model, make = models.DecoderBlock(64, 4), lambda: torch.randn(2, 16, 64)
    model.eval()
    calibration = [(make(),) for _ in range(8)] if precision == "int8" else None
    fast = cuvil.compile(model, example_inputs=(make(),), precision=precision, calibration=calibration)
    x = make()
    with torch.no_grad():
        want = model(x)
    got = fast(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    err = _relative_error(got, want)
    assert err < 0.06, f"{precision} {name}: {err:.3%} relative to fp32"
    if name == "conv_block" and precision == "int8-dynamic":   # convolutions stay float
        assert "xi8>" not in fast.stage_ir("linalg") and err < 1e-5, err
        return
    assert "xi8>" in fast.stage_ir("linalg"), "no int8 tensors: the model was not quantized"


class _ConvHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Linear(8 * 6 * 6, 32)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).flatten(1))


def test_int8_dynamic_quantizes_linear_layers_and_leaves_convolutions_float(caplog):
    """precision="int8-dynamic": the linear layer is int8, the convolution
    float (a run-time input scale, which Cuvil's int8 convolutions cannot
    take), and the log says so."""
    torch.manual_seed(0)
    model = _ConvHead().eval()
    x = torch.randn(2, 3, 6, 6)
    logger = logging.getLogger("cuvil")
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        with caplog.at_level(logging.INFO, logger="cuvil"):
            fast = cuvil.compile(model, example_inputs=(x,), precision="int8-dynamic")
    finally:
        logger.setLevel(old)
    linalg = fast.stage_ir("linalg")
    assert re.search(r"linalg\.matmul[^\n]*xi8>", linalg), "the linear layer is not int8"
    assert re.search(r"linalg\.conv_2d_nchw_fchw[^\n]*xf32>", linalg) and not re.search(
        r"linalg\.conv_2d\w*[^\n]*xi8>", linalg), "the convolution is not float"
    assert any("leaves _ConvHead's convolutions in float" in r.getMessage() for r in caplog.records)
    with torch.no_grad():
        want = model(x)
    assert _relative_error(fast(x), want) < 0.06


@pytest.mark.parametrize("precision", ["int8", "int8-weight"])
def test_a_model_cuvil_quantizes_keeps_its_compile_time_weights(precision):
    """Such a module holds a copy quantized when compiled, whose weights are
    not checked on every call (cuvil.weights.rebind_if_changed): a later
    change to the model, its float biases too (PT2E's converted module held
    the model's own bias tensors before the copy), is seen by a new compile
    only."""
    torch.manual_seed(0)
    model, x = models.MLP(models.SMALL_MLP).eval(), torch.randn(16, 64)
    calibration = [(torch.randn(16, 64),) for _ in range(4)] if precision == "int8" else None
    fast = cuvil.compile(model, example_inputs=(x,), precision=precision, calibration=calibration)
    assert fast.last_signature.weights_fixed
    before = fast(x)
    with torch.no_grad():
        for layer in model.layers:
            if isinstance(layer, torch.nn.Linear):
                layer.weight.mul_(-1)
                layer.bias.add_(1)
        want = model(x)
    assert torch.equal(fast(x), before)
    again = cuvil.compile(model, example_inputs=(x,), precision=precision, calibration=calibration)
    assert _relative_error(again(x), want) < 0.06


def test_a_model_that_cannot_be_copied_is_refused_with_what_to_do():
    import threading

    class Locked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear, self.lock = torch.nn.Linear(8, 8), threading.Lock()

        def forward(self, x):
            return self.linear(x)
    with pytest.raises(cuvil.CompileError, match=r"quantizes a copy of Locked, and copy\.deepcopy failed: TypeError"
                                                 r".*quantize the model yourself"):
        cuvil.compile(Locked(), example_inputs=(torch.randn(2, 8),), precision="int8-dynamic")


def test_precision_int8_needs_calibration():
    with pytest.raises(ValueError, match="calibration="):
        cuvil.compile(models.MLP(models.SMALL_MLP), example_inputs=(torch.randn(4, 64),), precision="int8")


def test_precision_int8_on_hugging_face_bert():
    """torchao's linear + GELU fusion pattern fails on BertModel (IndexError,
    torchao 0.18); cuvil.quantize annotates those linears alone, and every
    linear layer runs in int8."""
    torch.manual_seed(0)
    bert = models.LastHidden(models.bert(**models.SMALL_BERT)).eval()
    make = lambda: torch.randint(0, 1000, (1, 16))  # noqa: E731
    fast = cuvil.compile(bert, example_inputs=(make(),), precision="int8",
                         calibration=[(make(),) for _ in range(4)])
    x = make()
    with torch.no_grad():
        want = bert(x)
    assert _relative_error(fast(x), want) < 0.06
    layers = models.SMALL_BERT["layers"]
    assert fast.stage_ir("linalg").count("linalg.matmul ins(%") >= 6 * layers   # q, k, v, out, ffn x2
    assert fast.stage_ir("linalg").count("xi8>, tensor<") >= 6 * layers


class _PaddedIntMatmul(torch.nn.Module):
    """An int8 lhs computed elementwise, then padded by the model itself."""

    def __init__(self, weight):
        super().__init__()
        self.register_buffer("weight", weight)

    def forward(self, a):
        lhs = torch.nn.functional.pad(a + 1, (0, 4), value=5)
        return torch._int_mm(lhs, self.weight)


def test_int8_matmul_after_a_pad_of_the_model_is_exact():
    """The unsigned flip of the dot-product kernel goes into the op writing
    the lhs and into the padding value: the model's pad meets real weights."""
    g = torch.Generator().manual_seed(0)
    w = torch.randint(-128, 128, (64, 64), dtype=torch.int8, generator=g)
    a = torch.randint(-128, 127, (32, 60), dtype=torch.int8, generator=g)
    fast = cuvil.compile(_PaddedIntMatmul(w))
    lhs = torch.nn.functional.pad(a.to(torch.int32) + 1, (0, 4), value=5)
    assert torch.equal(fast(a), lhs @ w.to(torch.int32))


def test_int8_precisions_take_quantized_and_exported_modules():
    """A convert_pt2e model compiles as it is under an int8 precision (no
    second quantization, no calibration asked for); an exported module, which
    refuses .eval(), quantizes."""
    torch.manual_seed(0)
    mlp = models.MLP(models.SMALL_MLP).eval()
    x = torch.randn(8, 64)
    converted = pt2e(mlp, (x,), [(torch.randn(8, 64),)])
    fast = cuvil.compile(converted, example_inputs=(x,), precision="int8")
    with torch.no_grad():
        assert float((fast(x) - converted(x)).abs().max()) <= coarsest_step(converted)
    exported = torch.export.export(mlp, (x,)).module()
    dyn = cuvil.compile(exported, example_inputs=(x,), precision="int8-dynamic")
    with torch.no_grad():
        assert _relative_error(dyn(x), mlp(x)) < 0.06
