"""cuvil-winograd-conv through the whole compile path, against torch eager.

3x3 stride-1 convolutions with >= 16 input / >= 32 output channels and
outputs of at least 14x14 are computed as Winograd F(4x4, 3x3). Its transform
constants (up to 8 and 1/24) cost accuracy: ~1e-5 relative to the output
magnitude at 64-256 channels, so the check is rtol = atol = 1e-4 (as for
the direct conv schedule, whose reassociated sums are ~1e-6 off)."""
import re

import pytest
import torch
import torch.nn as nn

import cuvil.compiler as cc

TOL = dict(rtol=1e-4, atol=1e-4)


def compile_and_compare(model, x, threads=1):
    model = model.eval()
    with torch.no_grad():
        want = model(x)
        fast = cc.CompiledModule(model, (x,), num_threads=threads, use_cache=False)
        got = fast(x)
    torch.testing.assert_close(got, want, **TOL)
    return fast._last.ir


@pytest.mark.parametrize("C, F, H, W, bias", [
    pytest.param(16, 32, 16, 16, False, id="whole-tiles"),
    pytest.param(24, 40, 15, 17, True, id="partial-tiles-bias"),
    pytest.param(64, 64, 56, 56, False, id="resnet-layer1"),
])
def test_winograd_numerics(C, F, H, W, bias):
    torch.manual_seed(0)
    ir = compile_and_compare(nn.Conv2d(C, F, 3, 1, 1, bias=bias), torch.randn(1, C, H, W))
    cuvil_ir = ir["cuvil"]
    assert "linalg.conv_2d_nchw_fchw" not in cuvil_ir
    assert "linalg.batch_matmul" in cuvil_ir
    # The filter transform ran in main_prepack: @main gets the transformed
    # filter, 36 x C x F, as a packed argument instead of the F x C x 3 x 3 weight.
    main_sig = re.search(r"func\.func @main\((.*?)\) ->", cuvil_ir).group(1)
    assert f"tensor<36x{C}x{F}xf32> {{cuvil.packed" in main_sig
    assert f"tensor<{F}x{C}x3x3xf32>" not in main_sig


@pytest.mark.parametrize("threads", [1, 2])
def test_winograd_in_a_block(threads):
    """conv -> BN -> ReLU -> conv (+ the direct stride-2 conv in front)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.Conv2d(64, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.Conv2d(64, 128, 3, 1, 1))
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    ir = compile_and_compare(model, torch.randn(1, 32, 57, 59), threads=threads)
    assert ir["cuvil"].count("linalg.batch_matmul") == 2
    assert "linalg.conv_2d_nchw_fchw" in ir["cuvil"]  # the strided one stays direct
