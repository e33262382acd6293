"""transform_scripts/conv_cpu.mlir (@cuvil_conv_cpu, in the default schedule)
through the whole compile path (cuvil.compiler.CompiledModule), against
torch eager.

Raising rewrites batch-1 convolutions with >= 16 input and >= 32 output
channels as Winograd or im2col matmuls (test_conv_rewrites.py), so the cases
here have fewer channels on one side (or batch > 1): each checks that the
convolution is still a `linalg.conv_2d` in the `cuvil`-stage IR, i.e. that the
direct-convolution schedule is what ran, and that none is left after it.

The schedule packs output channels by 16/32 (odd channel counts are padded),
register-tiles output columns by 24 (stride 1, peeled + masked remainder) or
7 (strided, unrolled), and reassociates the channel sums: results are within
5 fp32 epsilons of the output scale of eager's (measured, Zen 4), checked with
32 (ULPS)."""
import pytest
import torch
import torch.nn as nn

from conftest import compile_and_compare
from models import BasicBlock, ResNet18, randomize_bn

ULPS = 32


def compile_conv(model, x, threads=1, direct_convs=1):
    """Compiles and compares; returns the scheduled IR. `direct_convs`: how
    many convolutions the cuvil stage must still hold (not rewritten)."""
    fast, _, _ = compile_and_compare(model, x, num_threads=threads, use_cache=False, ulps=ULPS)
    raised = fast.stage_ir("cuvil")
    assert raised.count("linalg.conv_2d_nchw_fchw") >= direct_convs, "rewritten before conv_cpu"
    scheduled = fast.stage_ir("scheduled")
    assert "linalg.conv_2d" not in scheduled
    assert "linalg.pooling" not in scheduled
    assert "tensor.pad" not in scheduled
    return scheduled


# (C, F, H, W, kernel, stride, padding, bias, dilation); every one with
# C < 16 or F < 32, so that raising leaves the convolution to conv_cpu.
CONVS = [
    pytest.param(3, 8, 17, 19, 3, 1, 1, False, 1, id="3x3-s1-odd-spatial"),
    pytest.param(5, 19, 23, 23, 3, 1, 1, True, 1, id="3x3-s1-odd-channels-bias"),
    pytest.param(12, 64, 9, 9, 3, 1, 1, False, 1, id="3x3-s1-narrow"),
    # 58 output columns: two full 24-column tiles and a masked 10-column rest.
    pytest.param(12, 32, 30, 58, 3, 1, 1, False, 1, id="3x3-s1-ow-remainder"),
    pytest.param(7, 35, 17, 17, 3, 2, 1, False, 1, id="3x3-s2-odd"),
    pytest.param(24, 31, 29, 27, 3, 2, 1, True, 1, id="3x3-s2-bias"),
    pytest.param(32, 24, 15, 15, 1, 2, 0, False, 1, id="1x1-s2-downsample"),
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
    compile_conv(model, torch.randn(1, C, H, W))


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_conv_numerics_on_several_threads(threads):
    """The output-row loop split over threads (3 and 4 take the pipeline
    without the 2-way partition), with a column remainder and batch 2."""
    torch.manual_seed(0)
    model = nn.Conv2d(12, 40, 3, 1, 1, bias=True)
    compile_conv(model, torch.randn(2, 12, 19, 29), threads=threads)


def test_conv_is_vectorized():
    """The stride-1 kernel is FMAs on zmm-sized vectors inside an scf.forall."""
    torch.manual_seed(0)
    scheduled = compile_conv(nn.Conv2d(15, 32, 3, 1, 1, bias=False), torch.randn(1, 15, 20, 20))
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
    compile_conv(pool, torch.randn(*shape), direct_convs=0)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_resnet_block(threads):
    """Stem (7x7 s2, max pool) and a strided block with channels the
    rewrites leave alone (3 -> 24 -> 31)."""
    torch.manual_seed(0)
    stem = nn.Sequential(nn.Conv2d(3, 24, 7, 2, 3, bias=False), nn.BatchNorm2d(24), nn.ReLU(),
                         nn.MaxPool2d(3, 2, 1), BasicBlock(24, 31, 2))
    compile_conv(randomize_bn(stem), torch.randn(1, 3, 61, 67), threads=threads, direct_convs=4)


def test_resnet18():
    """The benchmark's ResNet-18 (batch 1, 224x224): direct, Winograd and
    im2col convolutions, batch norms folded. Error within 64 fp32 epsilons
    of the output scale (measured: 5.2, Zen 4)."""
    torch.manual_seed(0)
    model = randomize_bn(ResNet18().eval())
    x = torch.randn(1, 3, 224, 224)
    compile_and_compare(model, x, use_cache=False, ulps=64)
