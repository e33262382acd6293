"""torch.fft's transforms as real arithmetic: a table for torch.export's
run_decompositions, next to cuvil.importer_decompositions.

torch-mlir has no lowering for the FFT ops, and Cuvil computes real dtypes
only. Each transform here is a discrete Fourier transform written as
products with cosine and sine tables, on a complex value held as two real
tensors (its real and imaginary parts). A complex result leaves the
decomposition as `view_as_complex(stack([re, im], -1))`; a complex input
enters as `view_as_real(x)`. cuvil.importer_complex folds the pairs that meet
between two transforms and returns complex outputs as their real pairs.

The argument handling (n / s, dim, norm, which sizes a c2r transform makes)
follows torch._refs.fft, PyTorch's reference of the same functions: its
canonicalization helpers are used as they are. A transform longer than
DENSE_MAX points of composite length is split in two (Cooley-Tukey:
_factored_dft), each part again while it is longer: a 400-point STFT frame
is two passes of 20-point products (6.8 MFLOP for 101 frames instead of the
dense 32.5), a 16000-point rfft products with tables of at most 128 x 128
(dense tables would be 1 GB). A prime length stays one dense product. The
tables read no input: cuvil-split-prepack computes them once, in
main_prepack. A 1 s 16 kHz power spectrogram (n_fft 400, hop 160, 1 thread)
took 3.3 ms with the tables computed per call; now 0.33-0.39 ms, its kernels
~0.2 and the rest the copies and allocations between them and the Python
call, 1.9-2.0x eager's 0.17-0.205 (the dense products, hoisted, were as
fast at 400 points: 0.32-0.39).
"""
import math
from typing import Optional, Sequence, Tuple

import torch

aten = torch.ops.aten

#: The real dtypes a transform computes in (eager's CPU FFT takes no half).
_COMPUTE = {torch.float32: torch.float32, torch.float64: torch.float64,
            torch.complex64: torch.float32, torch.complex128: torch.float64}

# A complex value as (real part, imaginary part); None: identically zero.
Pair = Tuple[torch.Tensor, Optional[torch.Tensor]]


def _compute_dtype(x: torch.Tensor) -> Optional[torch.dtype]:
    """The real dtype `x` is transformed in (integers and bools as eager: the
    default float dtype); None where eager refuses the dtype (half)."""
    if x.dtype in _COMPUTE:
        return _COMPUTE[x.dtype]
    if x.dtype.is_floating_point or x.dtype.is_complex:    # half, complex32
        return None
    return torch.get_default_dtype()


def _split(x: torch.Tensor, dtype: torch.dtype) -> Pair:
    if x.is_complex():
        parts = torch.view_as_real(x)
        return parts[..., 0], parts[..., 1]
    return x.to(dtype), None


def _complex(pair: Pair) -> torch.Tensor:
    re, im = pair
    return torch.view_as_complex(torch.stack([re, torch.zeros_like(re) if im is None else im], -1))


def _tables(rows: int, cols: int, n: int, dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of 2 pi (r * c mod n) / n, [rows, cols]: the angle reduced
    exactly in integers, evaluated in float64, rounded once. Built from
    aranges (a traced constant would be lifted into an input)."""
    r = torch.arange(rows, dtype=torch.int64).unsqueeze(1)
    c = torch.arange(cols, dtype=torch.int64).unsqueeze(0)
    angle = ((r * c) % n).to(torch.float64) * (2 * math.pi / n)
    return torch.cos(angle).to(dtype), torch.sin(angle).to(dtype)


def _along(t: torch.Tensor, dim: int, table: torch.Tensor) -> torch.Tensor:
    """t's `dim` contracted with the table's rows (the result's `dim` is the
    table's columns)."""
    return torch.matmul(t.movedim(dim, -1), table).movedim(-1, dim)


#: Transforms up to this length are one product with the dense tables;
#: longer ones of composite length are split in two (_factored_dft).
DENSE_MAX = 64


def _dense_dft(x: Pair, sign: int, cols: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """sum_t x_t e^{sign 2 pi i k t / n} for k < cols, along the first dim
    (n = its size; x is [n, R]): products of the [cols, n] cosine and sine
    tables with x, the columns of x the long side of the product."""
    re, im = x
    n = re.shape[0]
    # One product per part, the two tables stacked: its rows, the short
    # side, twice as many (what the packed matmul schedules take).
    table = torch.cat(_tables(cols, n, n, re.dtype))
    # (a + ib)(cos + sign i sin) = a cos - sign b sin + i (b cos + sign a sin)
    products = torch.matmul(table, re)
    out_re, out_im = products[:cols], products[cols:] * sign
    if im is not None:
        products = torch.matmul(table, im)
        out_re = out_re - products[cols:] * sign
        out_im = out_im + products[:cols]
    return out_re, out_im


def _split_length(n: int) -> int:
    """The divisor of n nearest its square root from below (1: n is prime)."""
    return next(p for p in range(math.isqrt(n), 0, -1) if n % p == 0)


def _factored_dft(x: Pair, sign: int, cols: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """The DFT along the first dim of x ([n, R]) in O(n (P + Q)) instead of
    O(n^2), where n = P Q (Cooley-Tukey, one split; each part again split
    while longer than DENSE_MAX): with t = Q t1 + t2 and k = k1 + P k2,
        X[k] = sum_t2 w_Q^(t2 k2) [w_n^(t2 k1) sum_t1 x[Q t1 + t2] w_P^(t1 k1)],
    a length-P DFT over t1 of every (t2, r), a twiddle product, then a
    length-Q DFT over t2 of every (k1, r), of which only the k2 that reach
    k < cols are computed (an rfft's half). The tables are the short side of
    each product and the other sizes its long side: a 400-point STFT of 101
    frames is products of 20 x 20 tables with 20 x 2020 blocks, 6.8 MFLOP
    instead of 32.5."""
    re, im = x
    n, r = re.shape
    p = _split_length(n)
    if n <= DENSE_MAX or p == 1:
        return _dense_dft(x, sign, cols)
    q = n // p

    def blocks(t):   # [t1 t2, r] -> [t1, t2 r]
        return None if t is None else t.reshape(p, q * r)
    y_re, y_im = _factored_dft((blocks(re), blocks(im)), sign, p)             # [k1, t2 r]
    cos, sin = _tables(p, q, n, re.dtype)                                      # w_n^(k1 t2)
    cos, sin = cos.unsqueeze(-1), sin.unsqueeze(-1)
    y_re, y_im = y_re.reshape(p, q, r), y_im.reshape(p, q, r)
    z_re = y_re * cos - y_im * sin * sign
    z_im = y_im * cos + y_re * sin * sign

    def rows(t):   # [k1, t2, r] -> [t2, k1 r]
        return t.transpose(0, 1).reshape(q, p * r)
    k2s = -(-cols // p)
    out_re, out_im = _factored_dft((rows(z_re), rows(z_im)), sign, k2s)       # [k2, k1 r]
    # k = k1 + P k2: [k2, k1, r] is already in k's order.
    return out_re.reshape(k2s * p, r)[:cols], out_im.reshape(k2s * p, r)[:cols]


def _c2c(x: Pair, dim: int, sign: int, cols: Optional[int] = None) -> Pair:
    """sum_t x_t e^{sign 2 pi i k t / n} for k < cols (default n), n = x's size
    along `dim`."""
    re, im = x
    n = re.shape[dim]

    def first(t):   # the transformed dim first, the others flattened after it
        return None if t is None else t.movedim(dim, 0).reshape(n, -1)
    out_re, out_im = _factored_dft((first(re), first(im)), sign, n if cols is None else cols)
    rest = [size for d, size in enumerate(re.shape) if d != dim]

    def back(t):
        return t.reshape(t.shape[0], *rest).movedim(0, dim)
    out_re, out_im = back(out_re), back(out_im)
    if im is None:
        # A real signal's k = 0 and k = n / 2 terms are real: +0, as eager
        # gives them (the products give -0 for some signals, and the angle
        # of -0 + i0 * -1 is -pi, not pi).
        k = torch.arange(out_im.shape[dim], dtype=torch.int64)
        real_terms = ((k == 0) | (2 * k == n)).reshape(-1, *[1] * (out_im.dim() - 1 - dim))
        out_im = torch.where(real_terms, torch.zeros_like(out_im), out_im)
    return out_re, out_im


def _c2r(x: Pair, dim: int, n: int) -> torch.Tensor:
    """The real signal of length n whose inverse-direction transform's first
    n // 2 + 1 coefficients are x (x's size along `dim`): the Hermitian
    extension's terms k and n - k paired, as pocketfft's c2r (the imaginary
    parts of the k = 0 and k = n / 2 terms do not count)."""
    re, im = x
    half = re.shape[dim]
    cos, sin = _tables(half, n, n, re.dtype)
    k = torch.arange(half, dtype=torch.int64)
    # Terms 1 .. ceil(n / 2) - 1 stand for two; 0 (and n / 2 for even n) for one.
    weight = torch.where((k == 0) | (2 * k == n), 1.0, 2.0).to(re.dtype).unsqueeze(1)
    out = _along(re, dim, cos * weight)
    if im is not None:
        out = out - _along(im, dim, sin * weight)
    return out


def _resize(x: Pair, dims: Sequence[int], sizes: Sequence[int]) -> Pair:
    """Each of `dims` cut or zero-padded at its end to its size (-1: kept)."""
    def one(t):
        if t is None:
            return None
        for d, size in zip(dims, sizes):
            if size == -1 or t.shape[d] == size:
                continue
            if t.shape[d] > size:
                t = t.narrow(d, 0, size)
            else:
                pad = [0] * (2 * t.dim())
                pad[2 * (t.dim() - 1 - d) + 1] = size - t.shape[d]
                t = torch.constant_pad_nd(t, pad)
        return t
    return one(x[0]), one(x[1])


def _normalized(x: Pair, norm: Optional[str], numel: int, forward: bool) -> Pair:
    """torch._refs.fft._apply_norm on a pair."""
    if norm == "ortho":
        scale = 1 / math.sqrt(numel)
    elif (not forward and norm in (None, "backward")) or (forward and norm == "forward"):
        scale = 1 / numel
    else:
        return x
    return x[0] * scale, None if x[1] is None else x[1] * scale


def _conj(x: Pair) -> Pair:
    return x[0], None if x[1] is None else -x[1]


def _dim(x: torch.Tensor, dim: int) -> int:
    return dim % x.dim() if x.dim() else 0


def _covered(x: torch.Tensor, norm) -> Optional[torch.dtype]:
    """The compute dtype, or None for what is left to torch-mlir (which then
    names the op as unsupported): half inputs, rank 0, unknown norms."""
    if x.dim() == 0 or norm not in (None, "backward", "ortho", "forward"):
        return None
    return _compute_dtype(x)


# -- one dimension -----------------------------------------------------------

def _fft_1d(forward: bool):
    def decomposition(x, n=None, dim=-1, norm=None):
        dtype = _covered(x, norm)
        if dtype is None:
            return NotImplemented
        d = _dim(x, dim)
        size = n if n is not None else x.shape[d]
        pair = _resize(_split(x, dtype), [d], [size])
        out = _c2c(pair, d, -1 if forward else 1)
        return _complex(_normalized(out, norm, size, forward))
    return decomposition


def _r2c_1d(forward: bool):
    """rfft (forward) and ihfft (inverse direction): real in, onesided out."""
    def decomposition(x, n=None, dim=-1, norm=None):
        dtype = _covered(x, norm)
        if dtype is None or x.is_complex():
            return NotImplemented
        d = _dim(x, dim)
        size = n if n is not None else x.shape[d]
        pair = _resize(_split(x, dtype), [d], [size])
        out = _c2c(pair, d, -1 if forward else 1, cols=size // 2 + 1)
        return _complex(_normalized(out, norm, size, forward))
    return decomposition


def _c2r_1d(forward: bool):
    """irfft (inverse) and hfft (forward: the input conjugated)."""
    def decomposition(x, n=None, dim=-1, norm=None):
        dtype = _covered(x, norm)
        if dtype is None:
            return NotImplemented
        d = _dim(x, dim)
        size = n if n is not None else 2 * (x.shape[d] - 1)
        if size < 1:
            return NotImplemented
        pair = _resize(_split(x, dtype), [d], [size // 2 + 1])
        if forward:
            pair = _conj(pair)
        out = _c2r(pair, d, size)
        return _normalized((out, None), norm, size, forward)[0]
    return decomposition


# -- n dimensions ------------------------------------------------------------

def _shape_and_dims(x, s, dim):
    from torch._refs.fft import _canonicalize_fft_shape_and_dim_args
    return _canonicalize_fft_shape_and_dim_args(x, s, dim)


def _fftn(forward: bool, default_dim=None):
    def decomposition(x, s=None, dim=default_dim, norm=None):
        dtype = _covered(x, norm)
        if dtype is None:
            return NotImplemented
        shape, dims = _shape_and_dims(x, s, dim)
        pair = _resize(_split(x, dtype), dims, shape)
        for d in dims:
            pair = _c2c(pair, d, -1 if forward else 1)
        return _complex(_normalized(pair, norm, math.prod(shape), forward))
    return decomposition


def _r2cn(forward: bool, default_dim=None):
    """rfftn (forward) and ihfftn (inverse direction): onesided along the
    last transformed dim, full along the others."""
    def decomposition(x, s=None, dim=default_dim, norm=None):
        dtype = _covered(x, norm)
        if dtype is None or x.is_complex():
            return NotImplemented
        shape, dims = _shape_and_dims(x, s, dim)
        if not dims:
            return NotImplemented
        sign = -1 if forward else 1
        pair = _resize(_split(x, dtype), dims, shape)
        pair = _c2c(pair, dims[-1], sign, cols=shape[-1] // 2 + 1)
        for d in dims[:-1]:
            pair = _c2c(pair, d, sign)
        return _complex(_normalized(pair, norm, math.prod(shape), forward))
    return decomposition


def _c2rn(forward: bool, default_dim=None):
    """irfftn (inverse) and hfftn (forward: conjugated before the last dim's
    c2r), as torch._refs.fft writes them."""
    def decomposition(x, s=None, dim=default_dim, norm=None):
        dtype = _covered(x, norm)
        if dtype is None:
            return NotImplemented
        from torch._refs.fft import _canonicalize_fft_c2r_shape_and_dim_args
        shape, dims, last = _canonicalize_fft_c2r_shape_and_dim_args("fft", x, s, dim)
        pair = _resize(_split(x, dtype), dims, shape)
        sign = -1 if forward else 1
        for d in dims[:-1]:
            pair = _c2c(pair, d, sign)
        if forward:
            pair = _normalized(pair, norm, math.prod(shape[:-1]), forward)
            pair = _conj(pair)
            return _normalized((_c2r(pair, dims[-1], last), None), norm, last, forward)[0]
        out = _c2r(pair, dims[-1], last)
        return _normalized((out, None), norm, math.prod(shape[:-1]) * last, forward)[0]
    return decomposition


# -- short-time transform ------------------------------------------------------

def stft(x, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=None,
         return_complex=None, align_to_window=None):
    """aten.stft (torch.stft has padded a centered input already): frames of
    n_fft samples every hop_length, times the window (zero-padded to n_fft on
    both sides), each transformed; [batch?, freq, frames], complex or (the
    deprecated return_complex=False) its real pair in a trailing dim."""
    dtype = _compute_dtype(x)
    if (dtype is None or x.is_complex() or x.dim() not in (1, 2) or align_to_window
            or (window is not None and window.is_complex())):
        return NotImplemented
    hop = hop_length or n_fft // 4
    width = win_length or n_fft
    frames = x.to(dtype).unfold(-1, n_fft, hop)          # [batch?, frames, n_fft]
    w = window.to(dtype) if window is not None else torch.ones(width, dtype=dtype)
    if width < n_fft:
        left = (n_fft - width) // 2
        w = torch.constant_pad_nd(w, [left, n_fft - width - left])
    pair = _c2c((frames * w, None), frames.dim() - 1, -1,
                cols=n_fft // 2 + 1 if onesided in (None, True) else n_fft)
    if normalized:
        pair = _normalized(pair, "ortho", n_fft, forward=True)
    re, im = pair
    out = torch.stack([re.transpose(-1, -2), im.transpose(-1, -2)], -1)
    return torch.view_as_complex(out) if return_complex else out


_PLANE = (-2, -1)

DECOMPOSITIONS = {
    aten.fft_fft.default: _fft_1d(forward=True),
    aten.fft_ifft.default: _fft_1d(forward=False),
    aten.fft_rfft.default: _r2c_1d(forward=True),
    aten.fft_ihfft.default: _r2c_1d(forward=False),
    aten.fft_irfft.default: _c2r_1d(forward=False),
    aten.fft_hfft.default: _c2r_1d(forward=True),
    aten.fft_fftn.default: _fftn(forward=True),
    aten.fft_ifftn.default: _fftn(forward=False),
    aten.fft_fft2.default: _fftn(forward=True, default_dim=_PLANE),
    aten.fft_ifft2.default: _fftn(forward=False, default_dim=_PLANE),
    aten.fft_rfftn.default: _r2cn(forward=True),
    aten.fft_ihfftn.default: _r2cn(forward=False),
    aten.fft_rfft2.default: _r2cn(forward=True, default_dim=_PLANE),
    aten.fft_ihfft2.default: _r2cn(forward=False, default_dim=_PLANE),
    aten.fft_irfftn.default: _c2rn(forward=False),
    aten.fft_hfftn.default: _c2rn(forward=True),
    aten.fft_irfft2.default: _c2rn(forward=False, default_dim=_PLANE),
    aten.fft_hfft2.default: _c2rn(forward=True, default_dim=_PLANE),
    aten.stft.default: stft,
}
