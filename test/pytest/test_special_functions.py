"""The special functions torch-mlir has no lowering of, through Cuvil's
decompositions of them (cuvil.importer_special): Bessel J0, J1, Y0, Y1,
modified Bessel I0, I1, K0, K1 and scaled K0, K1, erfinv, ndtri and Airy Ai,
compiled and compared with eager on grids over their range and its edges
(0, -0, 1e-30, +-1e30, +-inf, NaN; for erfinv and ndtri inputs in and out
of the domain and its ends), for float32, int64 and bool inputs.
Tolerance: within rtol 1e-5 / atol 1e-5 of eager (the op database suite's),
NaN where eager has NaN, and eager's dtype. The grids also hold the inputs
where eager's float32 kernels round visibly (a large argument's phase,
exp(|x|) overflowing in I0 / I1), which the decompositions reproduce."""
import math

import pytest
import torch

import cuvil

inf, nan = math.inf, math.nan
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e30, -1e30, inf, -inf, nan]
# Past |x| ~ 1e5 eager's float32 phase (x - pi/4, 2/3 |x|^1.5) is off by
# more than the tolerance; I0 / I1 overflow in float32 from |x| = 88.72.
ROUNDING = [1e5, -3e6, 1.2345678e7, -2e4, -1e8, -2e25, -5e25, 88.7228317, 88.7228394, 90.0, -91.0, 92.0]
GRID = torch.cat([torch.linspace(-30, 30, 2001), torch.tensor(EDGES + ROUNDING)])
ERFINV_GRID = torch.cat([torch.linspace(-1.2, 1.2, 2001), torch.tensor(EDGES + [1 - 6e-8, -1 + 6e-8])])
NDTRI_GRID = torch.cat([torch.linspace(-0.1, 1.1, 2001),
                        torch.tensor(EDGES + [1 - 1e-7, 1e-45, 1e-20, 0.13533528, 1 - 0.13533528])])
INTEGERS = torch.arange(-40, 41)
BOOLS = torch.tensor([True, False])

special = torch.special
OPS = {
    "bessel_j0": (special.bessel_j0, GRID),
    "bessel_j1": (special.bessel_j1, GRID),
    "bessel_y0": (special.bessel_y0, GRID),
    "bessel_y1": (special.bessel_y1, GRID),
    "modified_bessel_i0": (special.modified_bessel_i0, GRID),
    "modified_bessel_i1": (special.modified_bessel_i1, GRID),
    "modified_bessel_k0": (special.modified_bessel_k0, GRID),
    "modified_bessel_k1": (special.modified_bessel_k1, GRID),
    "scaled_modified_bessel_k0": (special.scaled_modified_bessel_k0, GRID),
    "scaled_modified_bessel_k1": (special.scaled_modified_bessel_k1, GRID),
    "erfinv": (torch.erfinv, ERFINV_GRID),
    "ndtri": (special.ndtri, NDTRI_GRID),
    "airy_ai": (special.airy_ai, GRID),
}


class OnEach(torch.nn.Module):
    """`fn` of each input: one compiled module covers the three input dtypes."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return tuple(self.fn(x) for x in xs)


@pytest.mark.parametrize("name", list(OPS))
def test_matches_eager_on_float_int_and_bool_inputs(name):
    fn, grid = OPS[name]
    model = OnEach(fn)
    inputs = (grid, INTEGERS, BOOLS)
    want = model(*inputs)
    got = cuvil.compile(model)(*inputs)
    for x, g, w in zip(inputs, got, want):
        assert g.dtype == w.dtype == torch.float32 and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5, equal_nan=True,
                                   msg=lambda m: f"{name} of {x.dtype}: {m}")


def test_float64_stays_unsupported():
    # A float64 evaluation cannot promise float64's last bits (as for the
    # decompositions in cuvil.importer_decompositions): the op stays refused.
    with pytest.raises(cuvil.UnsupportedOpError):
        cuvil.compile(OnEach(special.bessel_j0))(torch.linspace(0, 10, 5, dtype=torch.float64))


def assert_polynomial_matches_eager(fn, x, n):
    """fn(x, n) over every pair of x and n, with a scalar degree and of
    integer inputs, against eager (dtypes exactly)."""
    xs, ns = torch.broadcast_tensors(x[:, None], n[None, :])

    class M(torch.nn.Module):
        def forward(self, x, n):
            return fn(x, n), fn(x, 5), fn(x.to(torch.int64), n.to(torch.int64))
    for got, want in zip(cuvil.compile(M())(xs, ns), M()(xs, ns)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


CHEBYSHEV = [getattr(special, f"{shift}chebyshev_polynomial_{kind}") for shift in ("", "shifted_") for kind in "tuvw"]


@pytest.mark.parametrize("fn", CHEBYSHEV, ids=lambda f: f.__name__)
def test_chebyshev_polynomials_of_tensor_degrees(fn):
    """Closed forms vs eager's recurrence: degrees 0..12 (eager switches
    methods past 6), negative and fractional ones, x across +-1 and the
    shifted forms' 0 and 1. Not within 1e-5 of +-1: eager's float32
    sin(n acos x) / sin(acos x) is 1e-3 off there (U_10 at -1 + 1e-6:
    eager 10.99821, float64 10.99955, Cuvil 10.99955)."""
    x = torch.cat([torch.linspace(-2.5, 2.5, 201), torch.tensor([1.0, -1.0, 0.0, 0.5, 1 - 1e-4, -1 + 1e-4])])
    n = torch.tensor([float(d) for d in range(13)] + [-1.0, -3.0, 3.6, -0.5])
    assert_polynomial_matches_eager(fn, x, n)


RECURRENCES = [special.hermite_polynomial_h, special.hermite_polynomial_he, special.laguerre_polynomial_l,
               special.legendre_polynomial_p]


@pytest.mark.parametrize("fn", RECURRENCES, ids=lambda f: f.__name__)
def test_recurrence_polynomials_loop_to_each_elements_degree(fn):
    """Eager's three-term recurrence, n - 1 steps per element (a while
    loop as long as the largest degree): degrees 0..25, negative and
    fractional ones, x at 0 and +-1 (Laguerre's and Legendre's special
    cases), a scalar degree, integer inputs."""
    x = torch.cat([torch.linspace(-2.5, 2.5, 41), torch.tensor([1.0, -1.0, 0.0, 0.5])])
    n = torch.tensor([float(d) for d in range(26)] + [-1.0, -3.0, 3.6, -0.5])
    assert_polynomial_matches_eager(fn, x, n)


def test_zeta_and_polygamma_of_every_order():
    """Eager's Cephes zeta (direct sum, then Euler-Maclaurin), trigamma and
    n! zeta(n + 1, x) for higher orders, negative x included (x > -40: the
    unrolled direct sum covers it)."""
    x = torch.cat([torch.linspace(-39.7, 30, 1001), torch.tensor([0.0, -0.0, 1.0, -1.0, -2.5, 0.5, 1e-3, 1e4, inf, nan])])
    q = torch.cat([torch.linspace(0.01, 20, 1001), torch.tensor([0.0, -1.0, -2.5, 3.0, 1.0, 0.5, 100.0, 1e4, inf, nan])])

    class M(torch.nn.Module):
        def forward(self, x, q):
            # (each zeta is a 60-term unrolled sum: few of them, for the suite's time)
            return special.zeta(x.abs() + 1, q), special.zeta(3.0, x), torch.polygamma(1, x), torch.polygamma(3, x)
    for i, (got, want) in enumerate(zip(cuvil.compile(M())(x, q), M()(x, q))):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True, msg=lambda m: f"output {i}: {m}")


def test_zeta_rounds_a_scalar_argument_as_eager():
    # 1 + 1e-8 is 1.0 in float32: zeta is inf there, as in eager.
    class M(torch.nn.Module):
        def forward(self, q):
            return special.zeta(1 + 1e-8, q), torch.polygamma(171, q)
    q = torch.tensor([1.0, 2.0, 7.5])
    for got, want in zip(cuvil.compile(M())(q), M()(q)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
