"""Contractions over an empty dimension compile (upstream tiling asserts on
them: cuvil-fold-zero-trip-linalg replaces them first) and match eager; so do
ops on tensors without elements and slices of no extent (canonicalization
folded those into slices their own verifier rejects)."""
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


class Roll(torch.nn.Module):
    def __init__(self, shifts, dims):
        super().__init__()
        self.shifts, self.dims = shifts, dims

    def forward(self, x):
        return torch.roll(x, self.shifts, self.dims) * 2


@pytest.mark.parametrize("shape, shifts, dims", [
    ((0, 0, 0), (0, 0), (0, 1)),    # all empty
    ((5, 5, 5), (0, 0), (0, 1)),    # a shift of 0: a concat with an empty piece
    ((4, 0, 3), (2,), (0,)),        # empty middle dim
    ((5, 6), (2, -7), (0, 1)),      # |shift| > size: taken modulo the size (was wrong)
    ((5, 6), (13,), ()),            # no dims: the flattened tensor
], ids=["empty", "shift0", "empty-middle", "shifted", "flattened"])
def test_roll_matches_eager(shape, shifts, dims):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    model = Roll(shifts, dims)
    got = cuvil.compile(model)(x)
    want = model(x)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want)


class BoolTranspose(torch.nn.Module):
    def forward(self, x):
        return x.t().logical_not()


@pytest.mark.parametrize("shape", [(1, 2), (0, 3), (37, 19)])
def test_bool_transpose_matches_eager(shape):
    """A transpose of bools is vectorized: its vector transfers read and
    write the i8 buffers bools are stored in (cuvil-widen-bool-memrefs)."""
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(1)) > 0.5
    got = cuvil.compile(BoolTranspose())(x)
    want = BoolTranspose()(x)
    assert got.dtype == torch.bool and got.shape == want.shape
    assert torch.equal(got, want)


class EmptyViews(torch.nn.Module):
    def forward(self, x):
        return x.flatten(1), x.reshape(0, 5, 5) + 1, torch.nn.functional.unfold(x, kernel_size=2), x.sum(0)


def test_views_of_empty_tensors_match_eager():
    """torch-mlir's view lowering divides by the empty extent (SIGFPE):
    the importer writes results without elements as empty tensors of their shape."""
    x = torch.randn(0, 1, 5, 5)
    for got, want in zip(cuvil.compile(EmptyViews())(x), EmptyViews()(x)):
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want)
