"""Small dense linear algebra compiles (cuvil.importer_linalg: LU with
LAPACK's pivoting, Householder QR, Cholesky and triangular solves unrolled
over the matrix size) and matches eager: factors, pivots, signs and infos exactly as LAPACK
gives them, values within rtol 1e-4 / atol 1e-5 in float32 (the
elimination's rounding differs from LAPACK's blocked order; well-conditioned
matrices here), 1e-10 in float64. The raising forms raise eager's errors."""
import pytest
import torch

import cuvil
from conftest import Lambda, compile_and_compare



def _check(fn, *inputs, rtol=1e-4, atol=1e-5):
    compile_and_compare(Lambda(fn), *inputs, rtol=rtol, atol=atol, equal_nan=True)


def _matrices(*batch, n=5, seed=0, dtype=torch.float32):
    torch.manual_seed(seed)
    return torch.randn(*batch, n, n, dtype=dtype) + 3 * torch.eye(n, dtype=dtype)


def _randn(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def _orthogonal(n, seed=0):
    torch.manual_seed(seed)
    return torch.linalg.qr(torch.randn(n, n, dtype=torch.float64))[0].float()


def _spd(*batch, n=5, seed=0):
    a = _matrices(*batch, n=n, seed=seed)
    return a @ a.mT + torch.eye(n)


CASES = {
    "inv": (lambda a: torch.linalg.inv(a), lambda: (_matrices(2),)),
    "inv_ex": (lambda a: torch.linalg.inv_ex(a), lambda: (_matrices(),)),
    "det": (lambda a: torch.linalg.det(a), lambda: (_matrices(3),)),
    "slogdet": (lambda a: torch.linalg.slogdet(a), lambda: (torch.randn(3, 4, 4),)),
    "logdet-negative-nan": (lambda a: torch.logdet(a), lambda: (torch.diag(torch.tensor([1.0, -2.0, 3.0])),)),
    "solve-vector": (lambda a, b: torch.linalg.solve(a, b), lambda: (_matrices(), torch.randn(5))),
    "solve-right": (lambda a, b: torch.linalg.solve(a, b, left=False), lambda: (_matrices(2), torch.randn(2, 3, 5))),
    "lu_factor-wide": (lambda a: torch.linalg.lu_factor(a), lambda: (torch.randn(3, 5),)),
    "lu-tall": (lambda a: torch.linalg.lu(a), lambda: (torch.randn(2, 6, 4),)),
    "lu_factor-then-solve": (lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True),
                             lambda: (_matrices(2), torch.randn(2, 5, 3))),
    "cholesky": (lambda a: torch.linalg.cholesky(a), lambda: (_spd(2),)),
    "cholesky-upper-then-solve": (lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(a, upper=True), upper=True),
                                  lambda: (_spd(), torch.randn(5, 2))),
    "cholesky_inverse": (lambda a: torch.cholesky_inverse(torch.linalg.cholesky(a)), lambda: (_spd(),)),
    "solve_triangular": (lambda a, b: torch.linalg.solve_triangular(torch.triu(a), b, upper=True, left=False),
                         lambda: (_matrices(), torch.randn(3, 5))),
    "qr-reduced-tall": (lambda a: torch.linalg.qr(a), lambda: (torch.randn(2, 6, 4),)),
    "qr-complete-wide": (lambda a: torch.linalg.qr(a, mode="complete"), lambda: (torch.randn(3, 5),)),
    "geqrf-householder_product": (lambda a: torch.linalg.householder_product(*torch.geqrf(a)),
                                  lambda: (torch.randn(5, 4),)),
    "ormqr-right-transposed": (lambda a, c: torch.ormqr(*torch.geqrf(a), c, left=False, transpose=True),
                               lambda: (torch.randn(5, 3), torch.randn(2, 5))),
    "eigvalsh-upper": (lambda a: torch.linalg.eigvalsh(a + a.mT, UPLO="U"), lambda: (torch.randn(2, 4, 4),)),
    "svdvals-wide": (lambda a: torch.linalg.svdvals(a), lambda: (torch.randn(2, 4, 6),)),
    "matrix_rank-of-singular": (lambda a: torch.linalg.matrix_rank(a),
                                lambda: (torch.randn(3, 4, 4) @ torch.diag(torch.tensor([1.0, 1.0, 1.0, 0.0])),)),
    "cond": (lambda a: torch.linalg.cond(a), lambda: (_matrices(n=4),)),
    "tensorinv": (lambda a: torch.linalg.tensorinv(a, ind=1), lambda: (_matrices(n=6).reshape(6, 2, 3),)),
    # Pseudo-inverses from Jacobi on the Gram matrix (sign-free): tall, wide,
    # batched, rank-deficient (the dropped singular value), the tolerances.
    "pinv-tall-batched": (lambda a: torch.linalg.pinv(a), lambda: (_randn(2, 6, 4),)),
    "pinv-wide": (lambda a: torch.linalg.pinv(a), lambda: (_randn(3, 7),)),
    "pinv-rank-deficient": (lambda a: torch.linalg.pinv(a),
                            lambda: (_randn(5, 2) @ _randn(2, 4, seed=1),)),
    "pinv-atol-drops-small": (lambda a: torch.linalg.pinv(a, atol=0.5),
                              lambda: (torch.diag(torch.tensor([3.0, 1.0, 0.25])) @ _orthogonal(3),)),
    "pinv-rtol-tensor": (lambda a, r: torch.linalg.pinv(a, rtol=r),
                         lambda: (torch.diag(torch.tensor([4.0, 1.0, 0.25])), torch.tensor(0.1))),
    "pinv-hermitian": (lambda a: torch.linalg.pinv(a + a.mT, hermitian=True), lambda: (_randn(2, 4, 4),)),
    "pinverse": (lambda a: torch.pinverse(a), lambda: (_matrices(n=4),)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_eager(name):
    fn, inputs = CASES[name]
    _check(fn, *inputs())


def test_singular_matrix_gives_eagers_zero_det_and_info():
    # Exactly singular in floating point (a zero row): a dependent row would
    # leave a pivot of rounding noise, whose sign differs between orders.
    a = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [4.0, 5.0, 6.0]])
    _check(lambda a: (torch.linalg.det(a), torch.linalg.lu_factor_ex(a)[2], torch.linalg.slogdet(a)[0]), a)


def test_not_positive_definite_gives_eagers_info():
    _check(lambda a: torch.linalg.cholesky_ex(a)[1], torch.tensor([[1.0, 2.0], [2.0, 1.0]]))


def _singular(a, *which):
    """`a` with the batch elements `which` (all for a single matrix) zeroed."""
    a = a.clone()
    a[which or ...] = 0
    return a


RAISING = {
    "inv-batched": (lambda a: torch.linalg.inv(a), lambda: (_singular(_matrices(3), 1),)),
    "inverse": (lambda a: torch.inverse(a), lambda: (_singular(_matrices()),)),
    "inv_ex-check_errors": (lambda a: torch.linalg.inv_ex(a, check_errors=True), lambda: (_singular(_matrices()),)),
    "tensorinv": (lambda a: torch.linalg.tensorinv(a, ind=1), lambda: (_singular(_matrices(n=6)).reshape(6, 2, 3),)),
    "solve": (lambda a, b: torch.linalg.solve(a, b), lambda: (_singular(_matrices(2), 0), torch.randn(2, 5))),
    "solve_ex-check_errors": (lambda a, b: torch.linalg.solve_ex(a, b, check_errors=True),
                              lambda: (_singular(_matrices()), torch.randn(5, 2))),
    "cholesky": (lambda a: torch.linalg.cholesky(a), lambda: (torch.tensor([[1.0, 2.0], [2.0, 1.0]]),)),
    "cholesky_ex-check_errors-upper": (lambda a: torch.linalg.cholesky_ex(a, upper=True, check_errors=True),
                                       lambda: (-_spd(2),)),
    "cholesky-deprecated": (lambda a: torch.cholesky(a), lambda: (-_spd(),)),
    "lu_factor": (lambda a: torch.linalg.lu_factor(a), lambda: (_singular(_matrices()),)),
}


@pytest.mark.parametrize("name", RAISING)
def test_raising_forms_raise_what_eager_raises(name):
    """A singular (not positive-definite) input raises eager's error, with
    eager's message; well-conditioned ones still compute (test_matches_eager)."""
    fn, inputs = RAISING[name]
    args = inputs()
    with pytest.raises(RuntimeError) as eager:
        fn(*args)
    with pytest.raises(cuvil.ExecutionError) as compiled:
        cuvil.compile(Lambda(fn))(*args)
    assert isinstance(compiled.value, torch.linalg.LinAlgError) == isinstance(eager.value, torch.linalg.LinAlgError)
    assert str(compiled.value).startswith(str(eager.value)), (str(compiled.value), str(eager.value))


class InvertInPlaceShifted(torch.nn.Module):
    def forward(self, a):
        a.add_(1.0)
        return torch.linalg.inv(a)


def test_a_check_after_an_input_mutation_raises_before_the_write_back():
    """The mutated input leads @main's results, the info follows it: a
    failing check raises and leaves the caller's tensor as it was (the
    outputs of that call are discarded); a good call then computes and
    mutates as eager does."""
    compiled = cuvil.compile(InvertInPlaceShifted())
    bad = torch.full((3, 3), -1.0)
    with pytest.raises(torch.linalg.LinAlgError, match=r"^linalg\.inv: The diagonal element 1 is zero"):
        compiled(bad)
    assert bool((bad == -1.0).all())
    good, expected = _matrices(n=3), _matrices(n=3)
    torch.testing.assert_close(compiled(good), InvertInPlaceShifted()(expected), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(good, expected)


def test_dynamo_backend_raises_eagers_error():
    fast = torch.compile(Lambda(lambda a: torch.linalg.inv(a) * 2), backend="cuvil")
    torch.testing.assert_close(fast(_matrices()), torch.linalg.inv(_matrices()) * 2, rtol=1e-4, atol=1e-5)
    with pytest.raises(torch.linalg.LinAlgError, match=r"^linalg\.inv: The diagonal element 1 is zero"):
        fast(_singular(_matrices()))


def test_exported_header_names_the_info_output(tmp_path):
    import re
    out = cuvil.export(Lambda(lambda a: torch.linalg.cholesky(a)), (_spd(),), tmp_path / "artifact")
    described = re.findall(r"^ \*   (\(?(?:input|output) \d+: .*)$", (out / "model.h").read_text(), re.M)
    assert described == ["input 0: float[5][5]", "output 0: int32_t (scalar)", "output 1: float[5][5]",
                         "(output 0: the info of linalg.cholesky: nonzero where eager raises LinAlgError; "
                         "the other outputs are then not meaningful)"]


def test_float64():
    _check(lambda a: torch.linalg.inv(a) @ a, _matrices(n=8, dtype=torch.float64), rtol=1e-10, atol=1e-10)


class Inverse(torch.nn.Module):
    def forward(self, a):
        return torch.linalg.inv(a)


def test_a_matrix_larger_than_the_unrolled_limit_is_refused_by_name():
    from cuvil.importer_linalg import MAX_SIZE
    with pytest.raises(cuvil.UnsupportedOpError, match=r"aten\.linalg_inv_ex at test_linalg\.py:\d+"):
        cuvil.compile(Inverse())(_matrices(n=MAX_SIZE + 1))


@pytest.mark.parametrize("scale, skew", [(0.0, False), (0.1, False), (3.0, False), (40.0, True)],
                         ids=["zero", "small", "moderate", "rotation-many-squarings"])
def test_matrix_exp_is_within_float32_rounding_of_the_exact_exponential(scale, skew):
    """Scaling, a degree-18 polynomial and as many squarings as each matrix
    of the batch needs (a while loop), in float64: against eager's float64
    exponential, within float32 rounding of the largest entry (eager's own
    float32 kernel is up to ~1e-6 off there, so its result is not the
    reference)."""
    a = _matrices(3, n=6) * scale
    if skew:   # norm ~ 500 (8 squarings), an orthogonal exponential
        a = a - a.mT

    class Exp(torch.nn.Module):
        def forward(self, a):
            return torch.linalg.matrix_exp(a)
    got = cuvil.compile(Exp())(a)
    exact = torch.linalg.matrix_exp(a.double())
    assert got.dtype == torch.float32
    size = exact.abs().amax(dim=(-2, -1), keepdim=True)
    assert ((got.double() - exact).abs() / size).max() < 2e-7
