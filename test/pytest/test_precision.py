"""bf16 / fp16: models converted with .to(torch.bfloat16) / .half(), and
cuvil.compile(precision=...) on fp32 models. Numerics against fp32 eager:
a bf16 model's error must stay within 2x eager bf16's own error (plus one
bf16 rounding of the output scale: both round the same values, once more or
less), and precision="bf16" within 3% of the output scale; dtypes are kept."""
import copy

import pytest
import torch

import cuvil
from cuvil import cpu_features, scheduling
from cuvil.compiler import CompiledModule
from models import CNN, MLP, SMALL_BERT, SMALL_GPT2, SMALL_MLP, BasicBlock, LastHidden, bert, gpt2, randomize_bn

LOW = {"bf16": torch.bfloat16, "fp16": torch.float16}


def _max_error(got, want) -> float:
    return float((got.double() - want.double()).abs().max())


def _models():
    torch.manual_seed(0)
    mlp = MLP(SMALL_MLP)
    block = randomize_bn(BasicBlock(16, 32, 2))
    return [
        ("mlp", mlp, lambda: torch.randn(16, SMALL_MLP[0])),
        ("cnn", randomize_bn(CNN()), lambda: torch.randn(2, 3, 16, 16)),
        ("resnet_block", block, lambda: torch.randn(1, 16, 14, 14)),
        ("gpt2", LastHidden(gpt2(**SMALL_GPT2)), lambda: torch.randint(0, 1000, (1, 32))),
        ("bert", LastHidden(bert(**SMALL_BERT)), lambda: torch.randint(0, 1000, (1, 32))),
    ]


MODELS = {name: (model.eval(), make) for name, model, make in _models()}


def _inputs(make, dtype):
    x = make()
    return x.to(dtype) if x.is_floating_point() else x


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "gpt2", "bert"])
def test_low_precision_model_matches_fp32_eager_like_eager_does(name, dtype):
    model32, make = MODELS[name]
    low = copy.deepcopy(model32).to(LOW[dtype]).eval()
    torch.manual_seed(1)
    x32 = make()
    x = _inputs(lambda: x32, LOW[dtype])
    with torch.no_grad():
        ref, eager = model32(x32), low(x)
        got = CompiledModule(low, (x,))(x)
    assert got.dtype == eager.dtype == LOW[dtype] and got.shape == eager.shape
    eager_err, err = _max_error(eager, ref), _max_error(got, ref)
    one_rounding = torch.finfo(LOW[dtype]).eps * float(ref.abs().max())
    assert err <= 2 * eager_err + one_rounding, (err, eager_err)


def test_bf16_model_contractions_read_bf16_and_weights_are_packed_once():
    model32, make = MODELS["mlp"]
    low = copy.deepcopy(model32).to(torch.bfloat16)
    x = make().bfloat16()
    fast = CompiledModule(low, (x,), use_cache=False)
    ir = fast.stage_ir("cuvil")
    # Every matmul kernel reads bf16 activations and bf16 packed weights into f32.
    kernels = [line for line in ir.splitlines() if "linalg.generic" in line and "reduction" in line
               and "tensor<16x" in line]
    assert kernels and all("xbf16>, tensor<" in k and "xf32>)" in k for k in kernels), kernels
    prepack = ir[ir.index("func.func @main_prepack"):].splitlines()[0]
    assert "xbf16>" in prepack.split("->")[1] and "xf32>" not in prepack.split("->")[1], prepack


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("name", ["mlp", "resnet_block", "gpt2", "bert"])
def test_precision_option_on_fp32_models(name, precision):
    model32, make = MODELS[name]
    torch.manual_seed(2)
    x = make()
    with torch.no_grad():
        ref = model32(x)
        fast = CompiledModule(model32, (x,), precision=precision)
        got = fast(x)
    assert got.dtype == ref.dtype == torch.float32
    rel = _max_error(got, ref) / float(ref.abs().max())
    assert rel <= (0.03 if precision == "bf16" else 0.005), rel
    # ... and it is not fp32 in disguise: the error of rounding the operands shows.
    assert rel > 1e-5, rel


# K = 33 and 17: A's rows are copied as 33- / 17-element bf16 vectors into
# their even-K padding, a vector length (8k + 1) that aborted llc on AVX-512
# hosts (cuvil-bf16-vector-memory-as-i16).
@pytest.mark.parametrize("k", [33, 17])
def test_precision_bf16_with_odd_k(k):
    torch.manual_seed(3)
    layer = torch.nn.Linear(k, 200, bias=False).eval()
    x = torch.randn(37, k)
    with torch.no_grad():
        ref = layer(x)
        got = CompiledModule(layer, (x,), precision="bf16")(x)
    rel = _max_error(got, ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel


def test_precision_truncates_operands_not_accumulators():
    model32, make = MODELS["mlp"]
    x = make()
    fast = CompiledModule(model32, (x,), precision="bf16", use_cache=False)
    raised = fast.stage_ir("cuvil")
    contractions = [line for line in raised.splitlines() if "linalg.generic" in line and "reduction" in line
                    and "tensor<16x" in line and "outs(" in line]
    assert contractions and all("bf16>" in c.split("outs(")[0] and "xf32>" in c.split("outs(")[1]
                                for c in contractions), contractions
    # The weights are truncated once, in main_prepack.
    prepack = raised[raised.index("func.func @main_prepack"):]
    assert "arith.truncf" in prepack


# Loops of a batched VNNI contraction [b, m, n/64, k/2, 64, 2] in the raised IR.
BATCHED_VNNI = '"parallel", "parallel", "parallel", "reduction", "parallel", "reduction"'


@pytest.mark.parametrize("features", ["", "-amx", "-amx,-avx512_bf16"], ids=["host", "no-amx", "no-bf16-unit"])
def test_attention_products_take_bf16_where_a_bf16_unit_runs_them(features, monkeypatch):
    """precision="bf16" narrows attention's q.k^T and p.v too where AMX tiles
    or vdpbf16ps take them (packed per call); elsewhere they stay f32
    products."""
    target = cpu_features.features(features)
    bf16_unit = scheduling.amx_bf16(target) or scheduling.bf16_dot_product(target)
    if features == "-amx" and not bf16_unit:
        pytest.skip("host CPU has no AVX512-BF16: without AMX this is the no-bf16-unit case")
    monkeypatch.setenv("CUVIL_CPU_FEATURES", features)
    model32, make = MODELS["bert"]
    torch.manual_seed(4)
    x = make()
    fast = CompiledModule(model32, (x,), precision="bf16", use_cache=False)
    raised = fast.stage_ir("cuvil")
    assert (BATCHED_VNNI in raised) == bf16_unit
    with torch.no_grad():
        ref = model32(x)
    rel = _max_error(fast(x), ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel


class StemAndBlock(torch.nn.Module):
    """A ResNet's 3-channel 7x7 stem and a 64-channel basic block (its 3x3
    stride-1 convs: Winograd batch matmuls)."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        self.block = BasicBlock(64, 64, 1)

    def forward(self, x):
        return self.block(self.stem(x))


@pytest.mark.parametrize("features", ["", "-amx,-avx512_bf16"], ids=["host", "no-bf16-unit"])
def test_precision_bf16_convs_take_the_bf16_unit(features, monkeypatch):
    """precision="bf16" on a host with vdpbf16ps and no AMX: the stem (3
    input channels) is an im2col matmul, not a direct conv, and Winograd's
    batch matmuls are packed per batch for the bf16 kernels (AMX hosts pack
    those too); elsewhere both stay as they were (f32 FMAs)."""
    target = cpu_features.features(features)
    dot = scheduling.bf16_dot_product(target) and not scheduling.amx_bf16(target)
    bf16_unit = scheduling.amx_bf16(target) or scheduling.bf16_dot_product(target)
    monkeypatch.setenv("CUVIL_CPU_FEATURES", features)
    torch.manual_seed(5)
    model32 = randomize_bn(StemAndBlock()).eval()
    x = torch.randn(1, 3, 64, 64)
    fast = CompiledModule(model32, (x,), precision="bf16", use_cache=False)
    raised = fast.stage_ir("cuvil")
    assert ("linalg.conv_2d_nchw_fchw" in raised) == (not dot)
    assert (BATCHED_VNNI in raised) == bf16_unit
    with torch.no_grad():
        ref = model32(x)
    rel = _max_error(fast(x), ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel


# Loops of a VNNI-packed matmul [m, n/64, k/v, 64, v] in the raised IR.
VNNI = '"parallel", "parallel", "reduction", "parallel", "reduction"]'


def test_precision_fp16_keeps_the_fallback_panels():
    """precision="fp16" packs no VNNI panels (pack_cpu's bf16 entries would
    take its f16 contractions by their bit widths; no dot-product kernel
    runs them: packed, the MLP took 1.14x the time on Zen 5)."""
    model32, make = MODELS["mlp"]
    x = make()
    fast = CompiledModule(model32, (x,), precision="fp16", use_cache=False)
    raised = fast.stage_ir("cuvil")
    assert "xf16>" in raised and VNNI not in raised


def test_precision_is_part_of_the_cache_key(tmp_path):
    model32, make = MODELS["mlp"]
    x = make()
    a = CompiledModule(model32, (x,))
    b = CompiledModule(model32, (x,), precision="bf16")
    assert a.library_path != b.library_path
    assert not torch.equal(a(x), b(x))


def test_bad_precision_is_a_clear_error():
    with pytest.raises(ValueError, match=r"precision must be one of \['bf16', 'fp16', 'fp32', 'int4-weight', "
                                         r"'int8', 'int8-dynamic', 'int8-weight'\], got 'int4'"):
        cuvil.compile(torch.nn.Linear(4, 4), precision="int4")


def test_bf16_inputs_and_outputs_cross_without_numpy_bfloat16():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2, x.float()

    x = torch.randn(3, 5).bfloat16()
    got = cuvil.compile(Scale())(x)
    assert got[0].dtype == torch.bfloat16 and torch.equal(got[0], x * 2)
    assert got[1].dtype == torch.float32 and torch.equal(got[1], x.float())
    # A non-contiguous bf16 input is made contiguous, not misread.
    xt = torch.randn(5, 3).bfloat16().t()
    assert torch.equal(cuvil.compile(Scale())(xt)[0], xt * 2)


def test_cpu_features_edits():
    host = cpu_features.features("")
    assert "avx512_bf16" not in cpu_features.features("-avx512_bf16")
    assert not any(f.startswith("amx_") for f in cpu_features.features("-amx"))
    assert cpu_features.features("-amx,+avx2") >= host - {f for f in host if f.startswith("amx_")}
    if "avx512_bf16" in host:
        assert cpu_features.llvm_mattr("-avx512_bf16") == "-avx512bf16"
    assert cpu_features.llvm_mattr("-not_a_flag") == ""
    with pytest.raises(ValueError, match="empty feature name"):
        cpu_features.features("-")


def test_removed_features_reach_the_code_generator(monkeypatch):
    host = cpu_features.features("")
    if "avx512_bf16" not in host:
        pytest.skip("host has no avx512_bf16 to remove")
    monkeypatch.setenv("CUVIL_CPU_FEATURES", "-avx512_bf16")
    from cuvil import pipeline
    codegen = pipeline.compile_pipeline(1).step("codegen")
    assert codegen.mattr == "-avx512bf16"
    assert "-mattr=-avx512bf16" in codegen.fingerprint()


def _cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "cuvil.cli", *args], capture_output=True, text=True,
                          timeout=600)


MLP_FACTORY = """
import sys; sys.path.insert(0, {examples!r})
import torch
from models import MLP
def make():
    torch.manual_seed(0)
    return MLP((256, 512, 64)).eval()
def make_bf16():
    return make().to(torch.bfloat16)
"""


def test_cli_precision_flag_and_bf16_inputs(tmp_path):
    import json
    from pathlib import Path
    factory = tmp_path / "mlp.py"
    factory.write_text(MLP_FACTORY.format(examples=str(Path(__file__).parents[2] / "examples")))
    # fp32's default rtol (1e-4) is far below bf16's rounding: the bf16 default is 3e-2.
    proc = _cli("compile", f"{factory}:make", "--input", "8x256xf32", "--precision", "bf16", "-o", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["within_tolerance"] and report["max_abs_error_vs_eager"] > 1e-5
    assert "xbf16>" in (tmp_path / "a" / "model.cuvil.mlir").read_text()
    # ... and with fp32's tolerance the same build is refused.
    proc = _cli("compile", f"{factory}:make", "--input", "8x256xf32", "--precision", "bf16", "--rtol", "1e-6",
                "-o", str(tmp_path / "b"))
    assert proc.returncode == 1 and "exceeds the tolerance" in proc.stderr
    proc = _cli("compile", f"{factory}:make_bf16", "--input", "8x256xbf16", "-o", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    proc = _cli("compile", f"{factory}:make", "--input", "8x256xf32", "--precision", "int3", "-o", str(tmp_path / "d"))
    assert proc.returncode == 2 and "invalid choice: 'int3'" in proc.stderr


def test_dynamo_backend_precision_option():
    model32, make = MODELS["mlp"]
    x = make()
    torch._dynamo.reset()
    fast = torch.compile(model32, backend="cuvil", options={"precision": "bf16", "strict": True})
    with torch.no_grad():
        got, ref = fast(x), model32(x)
    rel = _max_error(got, ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel
    torch._dynamo.reset()
    with pytest.raises(Exception, match="precision must be one of"):
        torch.compile(model32, backend="cuvil", options={"precision": "fp8", "strict": True})(x)
    torch._dynamo.reset()



@pytest.mark.parametrize("features,kernel", [
    ("", "amx"), ("-amx", "dot"), ("-amx,-avx512_bf16", "fma")], ids=["host", "no-amx", "no-avx512_bf16"])
def test_bf16_kernel_is_picked_from_the_cpu_features(features, kernel, monkeypatch):
    """AMX tiles where the (possibly edited) features have AMX-BF16, the
    dot-product kernel where they have AVX512-BF16, the f32-FMA fallback
    elsewhere; each matches eager."""
    host = cpu_features.features("")
    needs = {"amx": {"amx_tile", "amx_bf16"}, "dot": {"avx512_bf16"}, "fma": set()}[kernel]
    if not needs <= host:
        pytest.skip(f"host CPU lacks {sorted(needs - host)}: the {kernel} kernel cannot run here")
    monkeypatch.setenv("CUVIL_CPU_FEATURES", features)
    model32, make = MODELS["mlp"]
    x = make()
    fast = CompiledModule(model32, (x,), precision="bf16", use_cache=False)
    llvm_ir = fast.last_signature.ir["llvm_ir"]
    used = {"amx": "llvm.x86.tdpbf16ps.internal" in llvm_ir,
            "dot": "llvm.x86.avx512bf16.dpbf16ps.512" in llvm_ir}
    assert used == {"amx": kernel == "amx", "dot": kernel == "dot"}, (features, used)
    with torch.no_grad():
        ref = model32(x)
    rel = _max_error(fast(x), ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel


def test_direct_convolution_keeps_its_vector_kernel_with_bf16_operands(monkeypatch):
    """The few-channel convolutions conv_cpu schedules directly (a ResNet
    stem, on hosts without a bf16 unit: elsewhere it is an im2col matmul,
    test_precision_bf16_convs_take_the_bf16_unit) read bf16 and run the same
    16/32-lane FMA kernel as in f32 (without sink_ops in conv_cpu's vector
    lowering they were unrolled to scalars: ResNet-18's stem 57 ms instead
    of 3)."""
    monkeypatch.setenv("CUVIL_CPU_FEATURES", "-amx,-avx512_bf16")
    torch.manual_seed(0)
    model = torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False).eval()
    x = torch.randn(1, 3, 64, 64)
    fast = CompiledModule(model, (x,), precision="bf16", use_cache=False)
    assert "linalg.conv_2d_nchw_fchw" in fast.stage_ir("cuvil") and "xbf16>" in fast.stage_ir("cuvil")
    import re
    lanes = [int(n) for n in re.findall(r"vector\.fma .*: vector<(\d+)xf32>", fast.stage_ir("scheduled"))]
    assert lanes and min(lanes) >= 16, lanes[:8]
    with torch.no_grad():
        ref = model(x)
    rel = _max_error(fast(x), ref) / float(ref.abs().max())
    assert 1e-5 < rel <= 0.03, rel


class SumAndMean(torch.nn.Module):
    def forward(self, x):
        return x.sum(dim=1), x.mean(dim=1), x.mean()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_narrow_float_reductions_accumulate_in_f32_like_eager(dtype):
    # 2^18 values near 1: summed in bf16 they lose almost everything (the
    # sum stops growing at 256 + ...); eager's kernels accumulate in f32.
    g = torch.Generator().manual_seed(0)
    x = (torch.rand(2, 1 << 18, generator=g) * 0.01 + 0.5).to(dtype)
    got, want, exact = cuvil.compile(SumAndMean())(x), SumAndMean()(x), SumAndMean()(x.float())
    for g_, w, e in zip(got, want, exact):
        assert g_.dtype == w.dtype
        err, eager_err = ((g_.float() - e).abs().max() / e.abs().max()).item(), \
            ((w.float() - e).abs().max() / e.abs().max()).item()
        assert err <= 2 * eager_err + 2 ** -8, (err, eager_err)


class TwoInputMatmul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


@pytest.mark.parametrize("k,n", [(256, 128), (66, 200)], ids=["panels", "odd"])
def test_matmul_of_two_inputs_packs_its_rhs_with_interleaves(k, n):
    """On a bf16 unit the rhs of a product of two inputs is packed into VNNI
    pairs on every call; cuvil-vnni-interleave writes that pack as row loads
    and interleaves (vectorized as a transpose it was one element per cycle:
    0.49 ms of a 1024^3 product's 5.5)."""
    target = cpu_features.features("")
    if not (scheduling.amx_bf16(target) or scheduling.bf16_dot_product(target)):
        pytest.skip("host CPU has no AMX-BF16 / AVX512-BF16: the rhs is not packed per call")
    torch.manual_seed(5)
    a, b = torch.randn(64, k), torch.randn(k, n)
    fast = CompiledModule(TwoInputMatmul(), (a, b), precision="bf16", use_cache=False)
    assert "shufflevector <64 x bfloat>" in fast.last_signature.ir["llvm_ir"]
    ref = a.bfloat16().float() @ b.bfloat16().float()
    rel = _max_error(fast(a, b), ref) / float(ref.abs().max())
    assert rel <= 1e-5, rel
