"""Small dense linear algebra (LU with partial pivoting, Householder QR,
Cholesky, triangular solves and what is built on them: inv, solve, det,
slogdet, lu_solve, cholesky_solve, ormqr ...) as plain tensor ops: a table for torch.export's
run_decompositions, next to cuvil.importer_decompositions.

torch-mlir lowers none of these (LAPACK calls in eager; their error checks
also put side-effect tokens into the exported program). Here every
algorithm is unrolled over the matrix size, which export knows: step k of an
LU is one pivot search, one row swap (a gather by a computed index) and one
rank-1 update of the trailing block. The pivot is LAPACK's (getrf: the first
largest magnitude in the column), and QR's reflectors are dlarfg's (R's
diagonal has the sign opposite to the column's head), so factors, pivots
and signs are eager's.
The unrolled form costs O(n) ops in the graph: matrices up to
MAX_SIZE rows are taken, larger ones are left to torch-mlir (refused by
name). Batch dims are any; float32 and float64 (complex inputs are left).
What eager reports through `info` (a singular or not positive-definite
matrix) is computed the same way, and the raising forms (`linalg.inv`,
`linalg.solve`, `linalg.cholesky`, `linalg.lu_factor`, the `_ex` forms with
check_errors=True) end in eager's own check of it, `_linalg_check_errors`
with eager's op names: the compiled function returns the info and the call
raises what eager raises (importer._linalg_checks_as_outputs).
"""
from typing import List, Optional, Tuple

import torch

aten = torch.ops.aten

#: The largest matrix size the unrolled algorithms take.
MAX_SIZE = 32
#: ... and the Jacobi eigenvalue iteration, whose unrolled sweeps cost
#: ~25 ops per step, n - 1 steps a sweep (an 8 x 8 eigvalsh is ~1,600 ops in
#: the graph, about a minute of compile).
MAX_EIGEN_SIZE = 8


def _covered(*tensors) -> bool:
    return all(t.dtype in (torch.float32, torch.float64) and t.dim() >= 1 for t in tensors) and \
        all(max(t.shape[-2:], default=0) <= MAX_SIZE for t in tensors)


# -- LU with partial pivoting ----------------------------------------------------

def _swap(t: torch.Tensor, k: int, p: torch.Tensor, dim: int) -> torch.Tensor:
    """t with entries k and p[...] (per batch element) of `dim` swapped."""
    size = t.shape[dim]
    idx = torch.arange(size, dtype=torch.int64).expand(*p.shape, size)
    pk = p.unsqueeze(-1)
    idx = torch.where(idx == k, pk, torch.where(idx == pk, torch.full_like(idx, k), idx))
    if dim == -1:       # a vector per batch element
        return torch.gather(t, -1, idx)
    return torch.gather(t, -2, idx.unsqueeze(-1).expand(*idx.shape, t.shape[-1]))


def _lu(a: torch.Tensor):
    """getrf: (LU packed, perm [..., m] (row i of LU came from row perm[i]),
    pivots [..., min(m, n)] 1-based int32, info int32)."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    perm = torch.arange(m, dtype=torch.int64).expand(*batch, m)
    pivots: List[torch.Tensor] = []
    info = torch.zeros(batch, dtype=torch.int32)
    for k in range(min(m, n)):
        p = k + torch.argmax(a[..., k:, k].abs(), -1)
        pivots.append(p)
        a = _swap(a, k, p, -2)
        perm = _swap(perm, k, p, -1)
        pivot = a[..., k, k]
        info = torch.where((info == 0) & (pivot == 0), torch.full_like(info, k + 1), info)
        col = a[..., k + 1:, k]
        # A zero pivot means a zero column below it: left as it is (LAPACK).
        col = torch.where((pivot == 0).unsqueeze(-1), col, col / pivot.unsqueeze(-1))
        trailing = a[..., k + 1:, k + 1:] - col.unsqueeze(-1) * a[..., k, k + 1:].unsqueeze(-2)
        below = torch.cat([a[..., k + 1:, :k], col.unsqueeze(-1), trailing], -1)
        a = torch.cat([a[..., :k + 1, :], below], -2)
    piv = (torch.stack(pivots, -1) + 1).to(torch.int32) if pivots else torch.zeros(*batch, 0, dtype=torch.int32)
    return a, perm, piv, info


def _unpack(lu: torch.Tensor):
    """L (unit lower, m x k) and U (upper, k x n) of a packed LU."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    eye = torch.eye(m, k, dtype=lu.dtype)
    lower = torch.tril(lu[..., :, :k], -1) + eye
    upper = torch.triu(lu[..., :k, :])
    return lower, upper


def _perm_from_pivots(pivots: torch.Tensor, m: int) -> torch.Tensor:
    """The row order the 1-based LAPACK pivots make (as _lu's perm)."""
    perm = torch.arange(m, dtype=torch.int64).expand(*pivots.shape[:-1], m)
    for k in range(pivots.shape[-1]):
        perm = _swap(perm, k, pivots[..., k].to(torch.int64) - 1, -1)
    return perm


def _rows(b: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """b's rows in `perm` order (batch dims broadcast)."""
    batch = torch.broadcast_shapes(b.shape[:-2], perm.shape[:-1])
    b = b.expand(*batch, *b.shape[-2:])
    idx = perm.expand(*batch, perm.shape[-1]).unsqueeze(-1).expand(*batch, perm.shape[-1], b.shape[-1])
    return torch.gather(b, -2, idx)


def _inverse_perm(perm: torch.Tensor) -> torch.Tensor:
    return torch.argsort(perm, -1)


# -- triangular solves -------------------------------------------------------------

def _solve_lower(l: torch.Tensor, b: torch.Tensor, unit: bool) -> torch.Tensor:
    """L x = b by forward substitution (b [..., n, k])."""
    n = l.shape[-1]
    batch = torch.broadcast_shapes(l.shape[:-2], b.shape[:-2])
    l, b = l.expand(*batch, n, n), b.expand(*batch, *b.shape[-2:])
    rows: List[torch.Tensor] = []
    for i in range(n):
        r = b[..., i, :]
        if rows:
            done = torch.stack(rows, -2)                            # [..., i, k]
            r = r - (l[..., i, :i].unsqueeze(-2) @ done).squeeze(-2)
        rows.append(r if unit else r / l[..., i, i].unsqueeze(-1))
    return torch.stack(rows, -2) if rows else b


def _solve_upper(u: torch.Tensor, b: torch.Tensor, unit: bool) -> torch.Tensor:
    """U x = b by back substitution: the lower solve of the reversed system."""
    flip_u = u.flip(-1, -2)
    return _solve_lower(flip_u, b.flip(-2), unit).flip(-2)


def _solve_triangular_left(a, b, upper: bool, unit: bool):
    return _solve_upper(a, b, unit) if upper else _solve_lower(a, b, unit)


# -- LU-based ------------------------------------------------------------------------

def _lu_solve(lu, perm, b, adjoint: bool):
    """A x = b (or A^T x = b) with P A = L U held as (lu, perm): A's row i is LU's row perm^-1(i)."""
    lower, upper = _unpack(lu)
    if not adjoint:
        return _solve_upper(upper, _solve_lower(lower, _rows(b, perm), True), False)
    # A^T = U^T L^T P: solve U^T y = b, L^T z = y, then x = P^T z.
    z = _solve_upper(lower.mT, _solve_lower(upper.mT, b, False), True)
    return _rows(z, _inverse_perm(perm))


def _check_errors(info, api_name: str, a) -> None:
    """What eager runs after the LAPACK call of a raising op (the api names
    are eager's own: they start its error messages)."""
    aten._linalg_check_errors(info, api_name, is_matrix=a.dim() == 2)


def linalg_lu_factor_ex(a, pivot=True, check_errors=False):
    if not pivot or not _covered(a):
        return NotImplemented
    lu, _, piv, info = _lu(a)
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", a)
    return lu, piv, info


def linalg_lu_factor(a, pivot=True):
    out = linalg_lu_factor_ex(a, pivot)
    if out is NotImplemented:
        return out
    _check_errors(out[2], "torch.linalg.lu_factor", a)
    return out[:2]


def lu_with_info(a, pivot=True, check_errors=True):
    return linalg_lu_factor_ex(a, pivot)


def linalg_lu(a, pivot=True):
    """P, L, U with A = P L U."""
    if not pivot or not _covered(a):
        return NotImplemented
    lu, perm, _, _ = _lu(a)
    lower, upper = _unpack(lu)
    m = a.shape[-2]
    # Row i of L U is A's row perm[i]: P[perm[i], i] = 1.
    return torch.nn.functional.one_hot(perm, m).to(a.dtype).mT, lower, upper


def linalg_lu_solve(lu, pivots, b, *, left=True, adjoint=False):
    if not _covered(lu, b) or b.dim() < 2:
        return NotImplemented
    perm = _perm_from_pivots(pivots, lu.shape[-2])
    if left:
        return _lu_solve(lu, perm, b, adjoint)
    # X A = B  <=>  A^T X^T = B^T (real: the adjoint is the transpose).
    return _lu_solve(lu, perm, b.mT, not adjoint).mT


def lu_solve(b, lu, pivots):
    return linalg_lu_solve(lu, pivots, b)


def _square(a) -> bool:
    return a.dim() >= 2 and a.shape[-1] == a.shape[-2] and _covered(a)


def _vector_rhs(a, b) -> bool:
    """linalg.solve's rule: b is a (batch of) vector(s) when it has one dim
    less than A and A's batch shape."""
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and b.shape == a.shape[:-1])


def linalg_solve_ex(a, b, *, left=True, check_errors=False):
    if not _square(a) or not _covered(b):
        return NotImplemented
    lu, perm, _, info = _lu(a)
    vector = _vector_rhs(a, b)
    rhs = b.unsqueeze(-1) if vector else b
    x = _lu_solve(lu, perm, rhs, False) if left else _lu_solve(lu, perm, rhs.mT, True).mT
    if check_errors:
        _check_errors(info, "torch.linalg.solve_ex", a)
    return (x.squeeze(-1) if vector else x), info


def linalg_solve(a, b, *, left=True):
    out = linalg_solve_ex(a, b, left=left)
    if out is NotImplemented:
        return out
    _check_errors(out[1], "torch.linalg.solve", a)
    return out[0]


def linalg_inv_ex(a, *, check_errors=False):
    if not _square(a):
        return NotImplemented
    lu, perm, _, info = _lu(a)
    eye = torch.eye(a.shape[-1], dtype=a.dtype)
    if check_errors:
        _check_errors(info, "linalg.inv_ex", a)
    return _lu_solve(lu, perm, eye, False), info


def _inv(a, api_name: str):
    out = linalg_inv_ex(a)
    if out is NotImplemented:
        return out
    _check_errors(out[1], api_name, a)
    return out[0]


def linalg_inv(a):
    return _inv(a, "linalg.inv")


def linalg_tensorinv(a, ind=2):
    """The inverse of `a` read as a (prod shape[:ind]) x (prod shape[ind:]) matrix."""
    rows, cols = a.shape[:ind], a.shape[ind:]
    n = 1
    for d in rows:
        n *= d
    if not _covered(a) or n > MAX_SIZE:
        return NotImplemented
    inverse = _inv(a.reshape(n, -1), "inv")
    return NotImplemented if inverse is NotImplemented else inverse.reshape(*cols, *rows)


def lu_unpack(lu, pivots, unpack_data=True, unpack_pivots=True):
    """P, L, U of a packed LU (A = P L U); the parts not asked for are empty."""
    if not _covered(lu):
        return NotImplemented
    m = lu.shape[-2]
    lower, upper = _unpack(lu) if unpack_data else (lu.new_empty(0), lu.new_empty(0))
    if not unpack_pivots:
        return lu.new_empty(0), lower, upper
    perm = _perm_from_pivots(pivots, m)
    return torch.nn.functional.one_hot(perm, m).to(lu.dtype).mT, lower, upper


def _det_parts(a) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(diag of U, sign of the row permutation) of a square matrix."""
    lu, _, piv, _ = _lu(a)
    n = a.shape[-1]
    swaps = (piv != torch.arange(1, n + 1, dtype=torch.int32)).sum(-1)
    perm_sign = 1 - 2 * (swaps % 2).to(a.dtype)
    return torch.diagonal(lu, 0, -2, -1), perm_sign, lu


def linalg_det(a):
    if not _square(a):
        return NotImplemented
    diag, perm_sign, _ = _det_parts(a)
    return diag.prod(-1) * perm_sign


def linalg_slogdet(a):
    if not _square(a):
        return NotImplemented
    diag, perm_sign, _ = _det_parts(a)
    return torch.sign(diag).prod(-1) * perm_sign, diag.abs().log().sum(-1)


def logdet(a):
    out = linalg_slogdet(a)
    if out is NotImplemented:
        return out
    sign, logabs = out
    return torch.where(sign < 0, torch.full_like(logabs, float("nan")), logabs)


# -- Cholesky ------------------------------------------------------------------------

def _cholesky_lower(a) -> Tuple[torch.Tensor, torch.Tensor]:
    """L with A = L L^T from A's lower triangle, and potrf's info (the first
    1-based column whose pivot is not positive; the rest of L is then what
    the NaN of its square root makes)."""
    n = a.shape[-1]
    cols: List[torch.Tensor] = []
    info = torch.zeros(a.shape[:-2], dtype=torch.int32)
    for j in range(n):
        col = a[..., :, j]                                       # [..., n]
        if cols:
            done = torch.stack(cols, -1)                         # [..., n, j]
            col = col - (done @ done[..., j, :].unsqueeze(-1)).squeeze(-1)
        d = col[..., j]
        info = torch.where((info == 0) & ~(d > 0), torch.full_like(info, j + 1), info)
        root = torch.sqrt(d)
        below = col[..., j + 1:] / root.unsqueeze(-1)
        cols.append(torch.cat([torch.zeros_like(col[..., :j]), root.unsqueeze(-1), below], -1))
    lower = torch.stack(cols, -1) if cols else torch.zeros_like(a)
    return lower, info


def linalg_cholesky_ex(a, *, upper=False, check_errors=False):
    if not _square(a):
        return NotImplemented
    if upper:    # potrf on the upper triangle: the lower one of A^T, transposed back
        lower, info = _cholesky_lower(a.mT)
        factor = lower.mT
    else:
        factor, info = _cholesky_lower(a)
    if check_errors:
        _check_errors(info, "linalg.cholesky_ex", a)
    return factor, info


def _cholesky(a, upper: bool, api_name: str):
    out = linalg_cholesky_ex(a, upper=upper)
    if out is NotImplemented:
        return out
    _check_errors(out[1], api_name, a)
    return out[0]


def linalg_cholesky(a, *, upper=False):
    return _cholesky(a, upper, "linalg.cholesky")


def cholesky(a, upper=False):
    return _cholesky(a, upper, "cholesky")


def cholesky_solve(b, factor, upper=False):
    """A x = b with A = L L^T (or U^T U)."""
    if not _square(factor) or not _covered(b) or b.dim() < 2:
        return NotImplemented
    lower = factor.mT if upper else factor
    return _solve_upper(lower.mT, _solve_lower(lower, b, False), False)


def cholesky_inverse(factor, upper=False):
    if not _square(factor):
        return NotImplemented
    return cholesky_solve(torch.eye(factor.shape[-1], dtype=factor.dtype), factor, upper)


def linalg_solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    if not _square(a) or not _covered(b) or b.dim() < 2:
        return NotImplemented
    if left:
        return _solve_triangular_left(a, b, upper, unitriangular)
    # X A = B  <=>  A^T X^T = B^T, A^T triangular the other way.
    return _solve_triangular_left(a.mT, b.mT, not upper, unitriangular).mT


def triangular_solve(b, a, upper=True, transpose=False, unitriangular=False):
    if not _square(a) or not _covered(b) or b.dim() < 2:
        return NotImplemented
    coefficient = a.mT if transpose else a
    x = _solve_triangular_left(coefficient, b, upper != transpose, unitriangular)
    return x, a.clone()


# -- QR (Householder, LAPACK's geqr2 / org2r) -----------------------------------------

def _reflector(x: torch.Tensor):
    """dlarfg on x [..., r]: (beta, tau, v) with H = I - tau v v^T, v[0] = 1,
    H x = beta e0; tau = 0 (H = I) where x[1:] is zero."""
    alpha = x[..., 0]
    rest = torch.linalg.vector_norm(x[..., 1:], dim=-1) if x.shape[-1] > 1 else torch.zeros_like(alpha)
    norm = torch.sqrt(alpha * alpha + rest * rest)
    beta = torch.where(alpha >= 0, -norm, norm)
    identity = rest == 0
    safe = torch.where(identity, torch.ones_like(beta), beta)
    tau = torch.where(identity, torch.zeros_like(beta), (safe - alpha) / safe)
    denominator = torch.where(identity, torch.ones_like(alpha), alpha - safe)
    v_rest = torch.where(identity.unsqueeze(-1), torch.zeros_like(x[..., 1:]), x[..., 1:] / denominator.unsqueeze(-1))
    return torch.where(identity, alpha, beta), tau, v_rest


def _apply_reflector(v_rest, tau, c):
    """(I - tau v v^T) c, v = [1, v_rest], c [..., r, q]."""
    v = torch.cat([torch.ones(*v_rest.shape[:-1], 1, dtype=v_rest.dtype), v_rest], -1)
    w = (v.unsqueeze(-2) @ c).squeeze(-2)                       # v^T c: [..., q]
    return c - tau[..., None, None] * v.unsqueeze(-1) * w.unsqueeze(-2)


def _geqrf(a):
    """(packed R and reflectors, tau [..., min(m, n)])."""
    m, n = a.shape[-2:]
    taus: List[torch.Tensor] = []
    for i in range(min(m, n)):
        beta, tau, v_rest = _reflector(a[..., i:, i])
        taus.append(tau)
        right = _apply_reflector(v_rest, tau, a[..., i:, i + 1:]) if i + 1 < n else a[..., i:, i + 1:]
        column = torch.cat([beta.unsqueeze(-1), v_rest], -1).unsqueeze(-1)
        a = torch.cat([a[..., :i, :], torch.cat([a[..., i:, :i], column, right], -1)], -2)
    tau = torch.stack(taus, -1) if taus else a.new_zeros(*a.shape[:-2], 0)
    return a, tau


def _orgqr(packed, tau, columns: int):
    """The first `columns` columns of H_0 H_1 ... H_{k-1} (m x m)."""
    m = packed.shape[-2]
    q = torch.eye(m, columns, dtype=packed.dtype).expand(*packed.shape[:-2], m, columns)
    for i in reversed(range(tau.shape[-1])):
        lower = _apply_reflector(packed[..., i + 1:, i], tau[..., i], q[..., i:, :])
        q = torch.cat([q[..., :i, :], lower], -2)
    return q


def _apply_q(packed, tau, c, transpose: bool):
    """Q c (or Q^T c), Q = H_0 ... H_{k-1}: the reflectors applied last to first
    (first to last)."""
    order = range(tau.shape[-1]) if transpose else reversed(range(tau.shape[-1]))
    for i in order:
        lower = _apply_reflector(packed[..., i + 1:, i], tau[..., i], c[..., i:, :])
        c = torch.cat([c[..., :i, :], lower], -2)
    return c


def ormqr(a, tau, other, left=True, transpose=False):
    """other multiplied by geqrf's Q (transposed: Q^T), from the left or right."""
    if not _covered(a, tau, other) or a.dim() < 2 or other.dim() < 2:
        return NotImplemented
    batch = torch.broadcast_shapes(a.shape[:-2], other.shape[:-2])
    a, other = a.expand(*batch, *a.shape[-2:]), other.expand(*batch, *other.shape[-2:])
    if left:
        return _apply_q(a, tau, other, transpose)
    # C Q = (Q^T C^T)^T
    return _apply_q(a, tau, other.mT, not transpose).mT


def geqrf(a):
    if not _covered(a) or a.dim() < 2:
        return NotImplemented
    return _geqrf(a)


def linalg_householder_product(a, tau):
    if not _covered(a, tau) or a.dim() < 2:
        return NotImplemented
    return _orgqr(a, tau, a.shape[-1])


def linalg_qr(a, mode="reduced"):
    if not _covered(a) or a.dim() < 2 or mode not in ("reduced", "complete", "r"):
        return NotImplemented
    m, n = a.shape[-2:]
    k = min(m, n)
    packed, tau = _geqrf(a)
    rows = m if mode == "complete" else k
    r = torch.triu(packed[..., :rows, :])
    if mode == "r":
        return a.new_zeros(0), r
    return _orgqr(packed, tau, m if mode == "complete" else k), r


def qr(a, some=True):
    return linalg_qr(a, "reduced" if some else "complete")


# -- symmetric eigenvalues and singular values (no vectors) ------------------------------

def _sweeps(n: int) -> int:
    """Cyclic Jacobi converges quadratically once the off-diagonal is small:
    this many sweeps take float64 to convergence for n <= 32 (measured
    against LAPACK in float64: within 1.5e-13)."""
    return 6 + max(1, n - 1).bit_length()


def _jacobi_eigenvalues(a: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of symmetric `a` (float64, [..., n, n]), ascending."""
    return torch.sort(_jacobi(a, vectors=False)[0], -1).values


def _jacobi(a: torch.Tensor, vectors: bool) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """Eigenvalues of symmetric `a` (float64, [..., n, n]), in no particular
    order, and (`vectors`) the orthogonal V with a = V diag(values) V^T:
    parallel Jacobi, n / 2 disjoint rotations per step in round-robin order
    (the circle method: n - 1 steps a sweep meet every pair once), each
    rotation zeroing its off-diagonal entry (Golub & Van Loan's symmetric
    Schur); V is the product of the rotations. The vectors' signs are this
    algorithm's, not LAPACK's: only sign-invariant results (a
    pseudo-inverse) are built from them."""
    n = a.shape[-1]
    v = torch.eye(n, dtype=a.dtype).expand(a.shape).clone() if vectors else None
    if n < 2:
        return torch.diagonal(a, 0, -2, -1), v
    players = n + (n % 2)                    # an odd size meets a dummy, never rotated
    half = players // 2
    eye = torch.eye(n, dtype=a.dtype)
    ids = torch.arange(n, dtype=torch.int64)
    for _ in range(_sweeps(n)):
        for r in range(players - 1):
            i = torch.arange(1, half, dtype=torch.int64)
            first = torch.cat([torch.zeros(1, dtype=torch.int64), (r + i) % (players - 1) + 1])
            second = torch.cat([torch.full((1,), r % (players - 1) + 1, dtype=torch.int64),
                                (r - i) % (players - 1) + 1])
            p, q = torch.minimum(first, second), torch.maximum(first, second)
            real = q < n                         # pairs with the dummy do nothing
            p, q = torch.where(real, p, 0), torch.where(real, q, 0)
            app = a[..., p, p]
            aqq = a[..., q, q]
            apq = torch.where(real, a[..., p, q], 0.0)
            rotate = apq != 0
            safe = torch.where(rotate, apq, 1.0)
            tau = (aqq - app) / (2 * safe)
            t = torch.where(tau >= 0, 1.0, -1.0) / (tau.abs() + torch.sqrt(1 + tau * tau))
            c = torch.where(rotate, 1 / torch.sqrt(1 + t * t), 1.0)
            s = torch.where(rotate, t * c, 0.0)
            ep = (ids == p.unsqueeze(-1)).to(a.dtype) * real.unsqueeze(-1)     # [half, n]
            eq = (ids == q.unsqueeze(-1)).to(a.dtype) * real.unsqueeze(-1)
            untouched = eye - torch.diag_embed(ep.sum(-2) + eq.sum(-2))
            # J: c on (p, p) and (q, q), s on (p, q), -s on (q, p), 1 elsewhere.
            j = (untouched + ep.mT @ (c.unsqueeze(-1) * ep) + eq.mT @ (c.unsqueeze(-1) * eq)
                 + ep.mT @ (s.unsqueeze(-1) * eq) - eq.mT @ (s.unsqueeze(-1) * ep))
            a = j.mT @ a @ j
            if v is not None:
                v = v @ j
    return torch.diagonal(a, 0, -2, -1), v


def _symmetric(a, UPLO: str = "L") -> torch.Tensor:
    """The symmetric matrix eager's eigh / eigvalsh read from `a`: its lower
    (UPLO="L") or upper triangle mirrored."""
    lower = torch.tril(a) if UPLO == "L" else torch.triu(a).mT
    return lower + lower.mT - torch.diag_embed(torch.diagonal(lower, 0, -2, -1))


def linalg_eigvalsh(a, UPLO="L"):
    """Eigenvalues only (eigvalsh, matrix_rank(hermitian=True)); eigh's
    vectors are left: their signs are LAPACK's choice, which no other
    algorithm reproduces. (Not aten._linalg_eigh with compute_v=False:
    export traces eigvalsh with compute_v=True.)"""
    if not _square(a) or a.shape[-1] > MAX_EIGEN_SIZE:
        return NotImplemented
    if a.shape[-1] == 0:     # (torch-mlir's tril of a 0 x 0 matrix dies of SIGFPE)
        return a.new_zeros(a.shape[:-1])
    return _jacobi_eigenvalues(_symmetric(a, UPLO).double()).to(a.dtype)


def linalg_svdvals(a, driver=None):
    """Singular values only (svdvals, cond, matrix_rank, matrix_norm(2 / nuc)):
    the square roots of the eigenvalues of A^T A (or A A^T, the smaller),
    formed in float64, descending."""
    if not _covered(a) or a.dim() < 2 or min(a.shape[-2:]) > MAX_EIGEN_SIZE:
        return NotImplemented
    wide = a.double()
    gram = wide @ wide.mT if a.shape[-2] <= a.shape[-1] else wide.mT @ wide
    return _jacobi_eigenvalues(gram).clamp_min(0).sqrt().flip(-1).to(a.dtype)


def _pinv_tolerances(a, atol, rtol) -> Tuple[torch.Tensor, torch.Tensor]:
    """Eager's (float64) atol and rtol of linalg.pinv / matrix_rank: atol 0
    when not given; rtol eps * max(m, n) when not given, 0 instead where a
    given atol is > 0."""
    def wide(t):   # a Python number (the _float overload): a fresh 0-d tensor, not a lifted constant
        return t.double() if isinstance(t, torch.Tensor) else torch.full((), float(t), dtype=torch.float64)
    zero = torch.zeros((), dtype=torch.float64)
    atol_t = zero if atol is None else wide(atol)
    if rtol is not None:
        return atol_t, wide(rtol)
    default = torch.full((), torch.finfo(a.dtype).eps * max(a.shape[-2:]), dtype=torch.float64)
    return atol_t, default if atol is None else torch.where(atol_t > 0, zero, default)


def linalg_pinv(a, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse from the eigen-decomposition of A^T A = V S^2 V^T
    (A A^T for a wide A), formed in float64 by Jacobi: pinv(A) = V S^-2 V^T
    A^T (A^T V S^-2 V^T), singular values S <= max(atol, rtol * max S)
    dropped, as eager drops them from its SVD; hermitian=True: from A = U L
    U^T itself (A's lower triangle), eigenvalues |L| <= max(atol, rtol * max
    |L|) dropped. Neither depends on the signs of the vectors, which eager
    takes from LAPACK and Jacobi does not reproduce."""
    if not _covered(a) or a.dim() < 2 or min(a.shape[-2:]) > MAX_EIGEN_SIZE:
        return NotImplemented
    if hermitian and not _square(a):
        return NotImplemented
    m, n = a.shape[-2:]
    if a.numel() == 0:
        return a.new_zeros(a.shape[:-2] + (n, m))
    atol_t, rtol_t = _pinv_tolerances(a, atol, rtol)

    def kept_reciprocals(values, size):
        """1 / values where size > max(atol, rtol * max size), else 0."""
        tol = torch.maximum(atol_t.unsqueeze(-1), rtol_t.unsqueeze(-1) * size.amax(-1, keepdim=True))
        keep = size > tol
        return torch.where(keep, 1 / torch.where(keep, values, 1.0), 0.0)

    wide = a.double()
    if hermitian:
        values, u = _jacobi(_symmetric(wide), vectors=True)
        inverse = kept_reciprocals(values, values.abs())
        return ((u * inverse.unsqueeze(-2)) @ u.mT).to(a.dtype)
    tall = m >= n
    values, v = _jacobi(wide.mT @ wide if tall else wide @ wide.mT, vectors=True)
    inverse = kept_reciprocals(values, values.clamp_min(0).sqrt())   # 1 / S^2 where S is kept
    core = (v * inverse.unsqueeze(-2)) @ v.mT
    return (core @ wide.mT if tall else wide.mT @ core).to(a.dtype)


# -- Matrix exponential ------------------------------------------------------------

#: The 1-norm up to which the degree-18 Taylor polynomial is taken as is
#: (eager's threshold for its degree-18 approximant).
_EXP_THETA = 3.010066362817634
#: A bound on the squarings (_scale_by_pow2 takes |e| < 256; 2^140 brings any
#: finite float32 norm of a MAX_SIZE matrix under the threshold).
_EXP_MAX_SQUARINGS = 255


def linalg_matrix_exp(a):
    """exp(A) by scaling and squaring (eager's scheme): A / 2^s with s the
    smallest that brings the 1-norm under eager's degree-18 threshold,
    the degree-18 Taylor polynomial of that (Horner), then s squarings: a
    while loop as long as the largest s of the batch, each matrix squared
    its own s times. In float64 (eager's float32 rounding differs by its
    own error, ~1e-7 relative)."""
    from .importer_decompositions import _scale_by_pow2, while_loop_op
    if not _square(a) or a.shape[-1] > MAX_SIZE:
        return NotImplemented
    if a.numel() == 0:
        return a.clone()
    wide = a.double()
    norm = wide.abs().sum(dim=-2).amax(dim=-1)
    ratio = torch.where(torch.isfinite(norm), norm, 0.0) / _EXP_THETA
    squarings = torch.ceil(torch.log2(ratio.clamp_min(1.0))).clamp(0, _EXP_MAX_SQUARINGS)
    scaled = _scale_by_pow2(wide, -squarings[..., None, None].expand_as(wide))
    eye = torch.eye(a.shape[-1], dtype=torch.float64)
    power = eye
    for k in range(18, 0, -1):
        power = eye + (scaled @ power) / k

    def more(t, e, squarings):
        return t < squarings.amax()

    def square(t, e, squarings):
        return t + 1, torch.where((t < squarings)[..., None, None], e @ e, e)
    _, power = while_loop_op(more, square, (torch.zeros((), dtype=torch.float64), power), (squarings,))
    return power.to(a.dtype)


DECOMPOSITIONS = {
    aten.linalg_matrix_exp.default: linalg_matrix_exp,
    aten.linalg_eigvalsh.default: linalg_eigvalsh,
    aten.linalg_svdvals.default: linalg_svdvals,
    aten.linalg_pinv.atol_rtol_tensor: linalg_pinv,
    aten.linalg_pinv.atol_rtol_float: linalg_pinv,
    aten.geqrf.default: geqrf,
    aten.ormqr.default: ormqr,
    aten.linalg_householder_product.default: linalg_householder_product,
    aten.linalg_qr.default: linalg_qr,
    aten.qr.default: qr,
    aten.linalg_lu_factor_ex.default: linalg_lu_factor_ex,
    aten.linalg_lu_factor.default: linalg_lu_factor,
    aten._lu_with_info.default: lu_with_info,
    aten.linalg_lu.default: linalg_lu,
    aten.linalg_lu_solve.default: linalg_lu_solve,
    aten.lu_solve.default: lu_solve,
    aten.linalg_solve_ex.default: linalg_solve_ex,
    aten.linalg_solve.default: linalg_solve,
    aten.linalg_inv_ex.default: linalg_inv_ex,
    aten.linalg_inv.default: linalg_inv,
    aten.linalg_tensorinv.default: linalg_tensorinv,
    aten.lu_unpack.default: lu_unpack,
    aten.linalg_det.default: linalg_det,
    aten.det.default: linalg_det,
    aten.linalg_slogdet.default: linalg_slogdet,
    aten.logdet.default: logdet,
    aten.linalg_cholesky_ex.default: linalg_cholesky_ex,
    aten.linalg_cholesky.default: linalg_cholesky,
    aten.cholesky.default: cholesky,
    aten.cholesky_solve.default: cholesky_solve,
    aten.cholesky_inverse.default: cholesky_inverse,
    aten.linalg_solve_triangular.default: linalg_solve_triangular,
    aten.triangular_solve.default: triangular_solve,
}
