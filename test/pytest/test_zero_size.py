"""Contractions over an empty dimension compile (upstream tiling asserts on
them: cuvil-fold-zero-trip-linalg replaces them first) and match eager."""
import pytest
import torch

import cuvil


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b) + 1.0


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 0), (0, 4)),          # mm, K = 0
    ((2, 3, 0), (2, 0, 5)),    # bmm, K = 0
    ((0, 3, 6), (0, 6, 5)),    # empty batch
    ((4, 6), (6, 0)),          # N = 0
], ids=["mm-k0", "bmm-k0", "bmm-batch0", "mm-n0"])
def test_empty_contractions_match_eager(a_shape, b_shape):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(*a_shape, generator=g), torch.randn(*b_shape, generator=g)
    got = cuvil.compile(MatMul())(a, b)
    want = MatMul()(a, b)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)
