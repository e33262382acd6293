"""Weight-only quantization (precision="int8-weight" / "int4-weight",
cuvil.quantize_weights): f32 activations times integer weights.

Two references:
  * the quantized model run eagerly (the same integer weights and scales):
    Cuvil must agree to float rounding (2e-5 relative, L2), since both
    compute the same sums of products;
  * the fp32 model: the quantization error itself. Measured on these models
    (relative L2): int8 per channel 0.3-0.6%; int4 in groups of 32 on
    Gaussian-like weights ~8-10% per layer, which is what round-to-nearest
    int4 gives (a 16-level quantizer's step is ~0.3 of the weights' std).
The kernels must read the integer weights: the packed weight arguments of
@main are i8, and no weight is converted to f32 in main_prepack."""
import re

import pytest
import torch

import cuvil
import models


def _relative_error(got, want) -> float:
    return float((got.double() - want.double()).norm() / want.double().norm())


def _assert_kernels_read_int8_weights(fast):
    """@main's packed weights (cuvil.packed: what main_prepack made of the
    weights) include int8 panels, and main_prepack converts no integer
    weight to float (it would, were the conversion not in the kernels)."""
    cuvil_ir = fast.stage_ir("cuvil")
    main = re.search(r"func\.func @main\((.*?)\)\s*(->|attributes|\{)", cuvil_ir, re.S).group(1)
    packed = re.findall(r"tensor<([0-9x?]*)x(\w+)>\s*\{[^}]*cuvil\.packed", main)
    assert any(elem == "i8" for _, elem in packed), f"no int8 packed weight: {packed}"
    assert not any(elem != "i8" and shape.count("x") >= 2 for shape, elem in packed), \
        f"a float weight was packed into panels: {packed}"
    prepack = cuvil_ir.split("func.func @main_prepack")[1].split("\n  }")[0]
    kernels = re.findall(r"call @(\w+)", prepack)
    for k in kernels:
        body = cuvil_ir.split(f"func.func private @{k}(")[1].split("\n  }")[0]
        assert "arith.sitofp" not in body, f"main_prepack's {k} converts a weight to float"


class Decoder(torch.nn.Module):
    """A decode step's shapes: one token through a pre-norm MLP block."""

    def __init__(self, d=256, hidden=512):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def _cases():
    torch.manual_seed(0)
    return {
        "mlp": (models.MLP(models.SMALL_MLP), lambda: torch.randn(16, models.SMALL_MLP[0])),
        "mlp_batch1": (models.MLP((256, 512, 256)), lambda: torch.randn(1, 256)),
        "decoder_token": (Decoder(), lambda: torch.randn(1, 1, 256)),
        "decoder_block": (models.DecoderBlock(64, 4), lambda: torch.randn(2, 16, 64)),
    }


CASES = _cases()


@pytest.mark.parametrize("bits,group_size", [(8, None), (4, None), (8, 64), (4, 32)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_quantized_model_run_eagerly(name, bits, group_size):
    model, make = CASES[name]
    quantized = cuvil.quantize_weights(model.eval(), bits=bits, group_size=group_size)
    fast = cuvil.compile(quantized)
    for _ in range(2):
        x = make()
        with torch.no_grad():
            want = quantized(x)
        got = fast(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert _relative_error(got, want) < 2e-5


@pytest.mark.parametrize("name", sorted(CASES))
def test_int8_weight_stays_near_fp32_and_reads_int8_weights(name):
    model, make = CASES[name]
    model.eval()
    fast = cuvil.compile(model, example_inputs=(make(),), precision="int8-weight")
    x = make()
    with torch.no_grad():
        want = model(x)
    err = _relative_error(fast(x), want)
    assert err < 0.01, f"int8-weight {name}: {err:.3%} relative to fp32"
    _assert_kernels_read_int8_weights(fast)


def test_int4_weight_error_is_that_of_its_quantized_weights():
    """int4 in groups of 128: the compiled model is as far from fp32 as the
    eagerly run int4 model (the error is the weights', not the kernel's)."""
    model, make = CASES["decoder_token"]
    model.eval()
    fast = cuvil.compile(model, example_inputs=(make(),), precision="int4-weight")
    reference = cuvil.quantize_weights(model, bits=4, group_size=128)
    x = make()
    with torch.no_grad():
        want, quantized = model(x), reference(x)
    got = fast(x)
    assert _relative_error(got, quantized) < 2e-5
    err = _relative_error(got, want)
    assert 1e-4 < err < 0.15, f"int4-weight: {err:.3%} relative to fp32"
    _assert_kernels_read_int8_weights(fast)


def test_quantize_weights_leaves_the_model_alone_and_checks_its_arguments():
    torch.manual_seed(0)
    model = models.MLP(models.SMALL_MLP).eval()
    before = [p.clone() for p in model.parameters()]
    quantized = cuvil.quantize_weights(model, bits=4, group_size=32)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert isinstance(model.layers[0], torch.nn.Linear)
    layer = quantized.layers[0]
    assert layer.qweight.dtype == torch.int8 and int(layer.qweight.abs().max()) <= 7
    # the scale is what the weights dequantize with: w ~ q * s, error at most half a step per group
    w = model.layers[0].weight
    step = layer.scale.t().repeat_interleave(32, dim=1)
    assert float(((layer.dequantized_weight() - w).abs() / step).max()) <= 0.5 + 1e-5
    with pytest.raises(ValueError, match="bits must be 8 or 4"):
        cuvil.quantize_weights(model, bits=3)
    with pytest.raises(ValueError, match="group_size"):
        cuvil.quantize_weights(model, group_size=0)


def test_a_group_size_that_does_not_divide_keeps_per_channel_scales(caplog):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(48, 64)).eval()
    with caplog.at_level("INFO", logger="cuvil"):
        quantized = cuvil.quantize_weights(model, bits=8, group_size=32)
    assert quantized[0].groups == 1
    assert "does not divide" in caplog.text


def test_torch_compile_option_points_to_quantize_weights():
    model, make = CASES["mlp"]
    compiled = torch.compile(model, backend="cuvil", options={"precision": "int8-weight", "strict": True})
    with pytest.raises(Exception, match="quantize_weights"):
        compiled(make())


def test_one_build_serves_every_batch():
    """A dynamic batch (dynamic_dims): one library for a decode step's one
    row and a prefill's many, each matching the quantized model."""
    torch.manual_seed(0)
    quantized = cuvil.quantize_weights(models.MLP((256, 512, 256)).eval(), bits=8)
    fast = cuvil.compile(quantized, example_inputs=(torch.randn(2, 256),), dynamic_dims={0: 0})
    for batch in (1, 3, 17):
        x = torch.randn(batch, 256)
        with torch.no_grad():
            want = quantized(x)
        assert _relative_error(fast(x), want) < 2e-5
    assert fast.num_signatures == 1, "one build for every batch"


def test_hugging_face_gpt2_conv1d_layers_are_quantized():
    """GPT-2's linear layers are transformers' Conv1D (y = x @ W + b, W
    [in, out]): they become int8 layers too, and the compiled model matches
    the quantized one and stays near fp32."""
    torch.manual_seed(0)
    gpt2 = models.LastHidden(models.gpt2(**models.SMALL_GPT2)).eval()
    quantized = cuvil.quantize_weights(gpt2, bits=8)
    layers = [m for m in quantized.modules() if type(m).__name__ == "WeightOnlyLinear"]
    assert len(layers) == 4 * models.SMALL_GPT2["layers"]   # c_attn, c_proj, c_fc, mlp c_proj
    fast = cuvil.compile(quantized)
    ids = torch.randint(0, 1000, (1, 16))
    with torch.no_grad():
        want, reference = quantized(ids), gpt2(ids)
    got = fast(ids)
    assert _relative_error(got, want) < 2e-5
    assert _relative_error(got, reference) < 0.01
