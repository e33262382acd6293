"""transform_scripts/conv_cpu.mlir (@cuvil_conv_cpu) through the whole compile
path (cuvil.compiler.CompiledModule), against torch eager.

The schedule packs output channels by 16/32 (odd channel counts are padded),
register-tiles output columns by 24 (stride 1, peeled + masked remainder) or
7 (strided, unrolled), and reassociates the channel sums: results match eager
to ~1e-6 relative, checked with rtol = atol = 1e-4. Odd sizes, strides,
1x1 / 7x7 / rectangular kernels, padding, bias and pooling are covered; each
case also checks that no scalar linalg.conv / pooling op is left."""
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import cuvil.compiler as cc
from cuvil import scheduling, transform

TOL = dict(rtol=1e-4, atol=1e-4)
ENTRY = "cuvil_conv_cpu"


def conv_script():
    """The shipped script when installed, else the one in the source tree."""
    try:
        transform.script_path("conv_cpu")
        return "conv_cpu"
    except Exception:  # noqa: BLE001 - not installed yet
        return str(Path(__file__).resolve().parents[2] / "transform_scripts" / "conv_cpu.mlir")


def schedule():
    """DEFAULT_SCHEDULE with the conv schedule in front of the elementwise one
    (which would otherwise vectorize the convs' zero fills first)."""
    base = list(scheduling.DEFAULT_SCHEDULE)
    if any(entry == ENTRY for _, entry in base):
        return tuple(base)
    at = next((i for i, (s, _) in enumerate(base) if s == "elementwise_cpu"), len(base))
    base.insert(at, (conv_script(), ENTRY))
    return tuple(base)


def compile_and_compare(model, x, threads=1):
    model = model.eval()
    with torch.no_grad():
        want = model(x)
        fast = cc.CompiledModule(model, (x,), schedule=schedule(), num_threads=threads, use_cache=False)
        got = fast(x)
    torch.testing.assert_close(got, want, **TOL)
    scheduled = fast._last.ir["scheduled"]
    assert "linalg.conv_2d" not in scheduled
    assert "linalg.pooling" not in scheduled
    assert "tensor.pad" not in scheduled
    return scheduled


def randomize_bn(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5, generator=g)
            m.running_var.uniform_(0.5, 2.0, generator=g)
            m.weight.data.uniform_(0.5, 1.5, generator=g)
            m.bias.data.uniform_(-0.5, 0.5, generator=g)
    return model


# (C, F, H, W, kernel, stride, padding, bias, dilation)
CONVS = [
    pytest.param(3, 8, 17, 19, 3, 1, 1, False, 1, id="3x3-s1-odd-spatial"),
    pytest.param(5, 19, 23, 23, 3, 1, 1, True, 1, id="3x3-s1-odd-channels-bias"),
    pytest.param(64, 64, 9, 9, 3, 1, 1, False, 1, id="3x3-s1-narrow"),
    pytest.param(16, 32, 30, 58, 3, 1, 1, False, 1, id="3x3-s1-ow-remainder"),
    pytest.param(7, 35, 17, 17, 3, 2, 1, False, 1, id="3x3-s2-odd"),
    pytest.param(24, 40, 29, 27, 3, 2, 1, True, 1, id="3x3-s2-bias"),
    pytest.param(32, 48, 15, 15, 1, 2, 0, False, 1, id="1x1-s2-downsample"),
    pytest.param(16, 24, 13, 11, 1, 1, 0, True, 1, id="1x1-s1-bias"),
    pytest.param(3, 16, 40, 38, 7, 2, 3, False, 1, id="7x7-s2-stem"),
    pytest.param(8, 16, 12, 12, 5, 1, 2, False, 1, id="5x5-s1"),
    pytest.param(6, 20, 14, 10, (3, 1), 2, (1, 0), False, 1, id="3x1-s2"),
    pytest.param(6, 20, 14, 10, (1, 3), 1, (0, 1), False, 1, id="1x3-s1"),
    pytest.param(4, 12, 16, 16, 3, 1, 2, False, 2, id="3x3-dilation2"),
]


@pytest.mark.parametrize("C, F, H, W, k, stride, pad, bias, dil", CONVS)
def test_conv_numerics(C, F, H, W, k, stride, pad, bias, dil):
    torch.manual_seed(0)
    model = nn.Conv2d(C, F, k, stride, pad, dilation=dil, bias=bias)
    x = torch.randn(1, C, H, W)
    compile_and_compare(model, x)


def test_conv_is_vectorized():
    """The stride-1 kernel is FMAs on zmm-sized vectors inside an scf.forall."""
    torch.manual_seed(0)
    scheduled = compile_and_compare(nn.Conv2d(32, 32, 3, 1, 1, bias=False), torch.randn(1, 32, 20, 20))
    assert "scf.forall" in scheduled
    assert "vector.fma" in scheduled


@pytest.mark.parametrize("pool, shape", [
    pytest.param(nn.MaxPool2d(3, 2, 1), (1, 64, 56, 56), id="max-3x3-s2-p1"),
    pytest.param(nn.MaxPool2d(3, 2, 1), (1, 5, 23, 19), id="max-3x3-s2-odd"),
    pytest.param(nn.MaxPool2d(2, 2), (1, 20, 14, 18), id="max-2x2-s2"),
    pytest.param(nn.AvgPool2d(3, 1, 1), (1, 17, 9, 11), id="avg-3x3-s1"),
])
def test_pool_numerics(pool, shape):
    torch.manual_seed(0)
    compile_and_compare(pool, torch.randn(*shape))


class Block(nn.Module):
    """ResNet basic block with a strided 1x1 downsample."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.down(x))


@pytest.mark.parametrize("threads", [1, 2])
def test_resnet_block(threads):
    torch.manual_seed(0)
    stem = nn.Sequential(nn.Conv2d(3, 24, 7, 2, 3, bias=False), nn.BatchNorm2d(24), nn.ReLU(),
                         nn.MaxPool2d(3, 2, 1), Block(24, 40, 2))
    compile_and_compare(randomize_bn(stem), torch.randn(1, 3, 61, 67), threads=threads)


def test_resnet18():
    """The benchmark's ResNet-18 (batch 1, 224x224) within 1e-3 of eager."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import workloads
    torch.manual_seed(0)
    model = randomize_bn(workloads.ResNet18().eval())
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        want = model(x)
        got = cc.CompiledModule(model, (x,), schedule=schedule(), use_cache=False)(x)
    assert (got - want).abs().max().item() <= 1e-3
