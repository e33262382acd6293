"""cuvil-winograd-conv and cuvil-im2col-conv through the whole compile path,
against torch eager.

Batch-1 convolutions with >= 16 input / >= 32 output channels are rewritten:
3x3 stride-1 ones with outputs of at least 14x14 as Winograd F(4x4, 3x3) or F(2x2, 3x3),
the others as im2col + one matmul. Winograd's transform constants (up to 8
and 1/24) cost accuracy: ~1e-5 relative to the output magnitude at 64-256
channels, so the check is rtol = atol = 1e-4 (as for the direct conv
schedule, whose reassociated sums are ~1e-6 off)."""
import re

import pytest
import torch
import torch.nn as nn

import cuvil.compiler as cc
from conftest import compile_and_compare
from models import randomize_bn

TOL = dict(rtol=1e-4, atol=1e-4)


def compile_conv(model, x, threads=1):
    """Compiles and compares with eager; returns the IR of every stage."""
    fast, _, _ = compile_and_compare(model, x, num_threads=threads, use_cache=False, **TOL)
    return fast.last_signature.ir


# positions: (m+2)^2, 36 for F(4x4) (>= 32 tiles of 4x4), else 16 for F(2x2).
@pytest.mark.parametrize("C, F, H, W, bias, positions", [
    pytest.param(16, 32, 32, 32, False, 36, id="whole-tiles-f4"),
    pytest.param(16, 32, 16, 16, False, 16, id="whole-tiles-f2"),
    pytest.param(24, 40, 15, 17, True, 16, id="partial-tiles-bias"),
    pytest.param(64, 64, 56, 56, False, 36, id="resnet-layer1"),
    pytest.param(256, 256, 14, 14, False, 16, id="resnet-layer3"),
])
def test_winograd_numerics(C, F, H, W, bias, positions):
    torch.manual_seed(0)
    ir = compile_conv(nn.Conv2d(C, F, 3, 1, 1, bias=bias), torch.randn(1, C, H, W))
    cuvil_ir = ir["cuvil"]
    assert "linalg.conv_2d_nchw_fchw" not in cuvil_ir
    assert "linalg.batch_matmul" in cuvil_ir
    # The filter transform ran in main_prepack: @main gets the transformed
    # filter, positions x C x F, as a packed argument instead of the weight.
    main_sig = re.search(r"func\.func @main\((.*?)\) ->", cuvil_ir).group(1)
    assert f"tensor<{positions}x{C}x{F}xf32> {{cuvil.packed" in main_sig
    assert f"tensor<{F}x{C}x3x3xf32>" not in main_sig


@pytest.mark.parametrize("threads", [1, 2])
def test_winograd_in_a_block(threads):
    """stride-2 conv (im2col) -> BN -> ReLU -> conv -> BN -> ReLU -> conv (Winograd)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.Conv2d(64, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.Conv2d(64, 128, 3, 1, 1))
    ir = compile_conv(randomize_bn(model), torch.randn(1, 32, 57, 59), threads=threads)
    assert ir["cuvil"].count("linalg.batch_matmul") == 2
    assert "linalg.conv_2d_nchw_fchw" not in ir["cuvil"]
    assert ir["cuvil"].count("linalg.matmul") == 1  # the strided one


@pytest.mark.parametrize("C, F, k, stride, pad, dil, bias", [
    pytest.param(64, 128, 3, 2, 1, 1, False, id="3x3-s2"),
    pytest.param(64, 128, 1, 2, 0, 1, True, id="1x1-s2-bias"),
    pytest.param(128, 128, 3, 1, 1, 1, False, id="3x3-s1-7x7-output"),
    pytest.param(16, 32, 3, 1, 2, 2, False, id="3x3-dilation2"),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_im2col_numerics(C, F, k, stride, pad, dil, bias, threads):
    torch.manual_seed(0)
    model = nn.Conv2d(C, F, k, stride, pad, dilation=dil, bias=bias)
    x = torch.randn(1, C, 14 if stride == 2 else 7, 14 if stride == 2 else 7)
    ir = compile_conv(model, x, threads=threads)["cuvil"]
    assert "linalg.conv_2d_nchw_fchw" not in ir
    # The transposed filter is prepacked: @main no longer takes the weight.
    main_sig = re.search(r"func\.func @main\((.*?)\) ->", ir).group(1)
    assert f"tensor<{F}x{C}x{k}x{k}xf32>" not in main_sig


class _ConvsAndPool(nn.Module):
    """im2col conv -> ReLU -> pool -> residual add -> im2col conv: between the
    convs everything runs channels-last (cuvil-propagate-channels-last), the
    pool as linalg.pooling_nhwc_* (odd sizes: the schedule's peeled tiles)."""

    def __init__(self, pool):
        super().__init__()
        self.conv1 = nn.Conv2d(16, 64, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(64, 48, 1, stride=2)
        self.pool = pool

    def forward(self, x):
        y = self.pool(torch.relu(self.conv1(x)))
        return self.conv2(y + y.flip(-1))


@pytest.mark.parametrize("pool", [
    pytest.param(nn.MaxPool2d(3, 2, 1), id="max-3x3-s2"),
    pytest.param(nn.AvgPool2d(3, 1, 1), id="avg-3x3-s1"),
    pytest.param(nn.MaxPool2d(2, 2, dilation=2), id="max-dilated"),
])
@pytest.mark.parametrize("threads", [1, 2])
def test_channels_last_between_convs(pool, threads):
    torch.manual_seed(0)
    ir = compile_conv(_ConvsAndPool(pool), torch.randn(1, 16, 61, 59), threads=threads)["cuvil"]
    assert "linalg.pooling_nhwc_" in ir and "linalg.pooling_nchw_" not in ir
    # NHWC -> NCHW only where an op cannot take NHWC in: the flip (it reads
    # by index) and the model's output.
    assert re.findall(r"permutation = \[0, 3, 1, 2\]", ir) == ["permutation = [0, 3, 1, 2]"] * 2


@pytest.mark.parametrize("C, F", [(16, 4), (8, 4), (64, 8)])
def test_one_pixel_convs_are_matrix_vector_products(C, F):
    """A squeeze-and-excitation block's 1x1 convs on a pooled [C, 1, 1]
    tensor, with fewer channels than the im2col thresholds: the direct conv
    schedule's channel packing of them aborted the process (an upstream
    tensor.pad canonicalization assertion; HF RegNet)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(C, F, 1), nn.ReLU(), nn.Conv2d(F, C, 1))
    ir = compile_conv(model, torch.randn(1, C, 5, 5))["cuvil"]
    assert "linalg.conv_2d_nchw_fchw" not in ir


@pytest.mark.parametrize("batch", [12, 36])
def test_two_thread_batch_matmul_runs_each_tile_once(batch):
    """A 36 x 2 scf.forall whose tiles zero-fill and accumulate: upstream
    async-parallel-for's block-aligned dispatch ran some tiles twice at once
    (doubled results) until cuvil-collapse-parallel-loops."""
    torch.manual_seed(0)

    class BMM(nn.Module):
        def forward(self, a, b):
            return torch.bmm(a, b)

    a, b = torch.randn(batch, 128, 64), torch.randn(batch, 64, 64)
    fast = cc.CompiledModule(BMM(), (a, b), num_threads=2, use_cache=False)
    want = torch.bmm(a, b)
    for _ in range(20):
        torch.testing.assert_close(fast(a, b), want, rtol=1e-4, atol=1e-4)
