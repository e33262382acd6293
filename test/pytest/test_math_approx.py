"""cuvil-math-approx's polynomial erf / exp / tanh against libm (torch in
float64), on dense grids and the special values: the approximations replace
every f32 call of these functions in compiled models."""
import pytest
import torch
import torch.nn.functional as F

import cuvil


class Unary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


SPECIAL = [0.0, -0.0, 1e-30, -1e-30, 1e-6, -1e-6, 3.9999, 4.0, 4.0001, -4.0001, 1e4, -1e4,
           float("inf"), -float("inf")]


def _grid(lo, hi):
    return torch.cat([torch.linspace(lo, hi, 1 << 20), torch.tensor(SPECIAL)])


@pytest.mark.parametrize("name,fn,lo,hi,ulps", [
    # erf: x P(x^2) / Q(x^2) on x clamped to [-4, 4]; measured 3.5 ulp at most.
    ("erf", torch.erf, -6.0, 6.0, 4),
    ("tanh", torch.tanh, -10.0, 10.0, 4),
    ("exp", torch.exp, -87.0, 88.0, 4),
])
def test_f32_function_within_ulps_of_libm(name, fn, lo, hi, ulps):
    x = _grid(lo, hi)
    got = cuvil.compile(Unary(fn), example_inputs=(x,))(x)
    want = fn(x.double())
    # Error in units of the float32 spacing at the result (normal range).
    spacing = want.abs().clamp_min(2.0 ** -126) * torch.finfo(torch.float32).eps
    finite = torch.isfinite(want)
    err = ((got.double() - want).abs() / spacing)[finite]
    assert err.max().item() <= ulps, f"{name}: {err.max().item():.1f} ulp at x = {x[finite][err.argmax()].item()}"
    assert torch.equal(got[~finite], want[~finite].float())


def test_erf_keeps_nan_and_signed_zero():
    x = torch.tensor([float("nan"), 0.0, -0.0, 1.0])
    got = cuvil.compile(Unary(torch.erf), example_inputs=(x,))(x)
    assert torch.isnan(got[0])
    assert torch.equal(torch.signbit(got[1:3]), torch.tensor([False, True]))


def test_gelu_on_a_dense_grid():
    # GELU's erf(x / sqrt(2)) is computed as erf(x * M_SQRT1_2), as eager's
    # kernel does. x (1 + erf) cancels for x < -3: there eager's own float32
    # GELU is 1.2e-6 off the float64 one, Cuvil's 1.5e-6.
    x = torch.linspace(-8.0, 8.0, 1 << 20)
    got = cuvil.compile(Unary(F.gelu), example_inputs=(x,))(x)
    torch.testing.assert_close(got.double(), F.gelu(x.double()), rtol=0, atol=2e-6)
    torch.testing.assert_close(got, F.gelu(x))   # float32 tolerances
