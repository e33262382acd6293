"""aten ops that torch-mlir does not lower, or lowers wrong, written as ops it
lowers right: a table for torch.export's run_decompositions, applied before
the FX import (cuvil.compiler adds it to every PyTorch import).

Each function says why it is here. Results keep eager's dtypes (an integer
or bool input of a float function gives float32, as eager does). Special
functions are computed in float64 and rounded once: their series and
continued fractions would lose the last bits of float32 otherwise. A
function returns NotImplemented for inputs it does not cover (complex, a
float64 input whose last bits a float64 evaluation cannot promise): the op
is then left to torch-mlir, which lowers it or names it as unsupported.
"""
import functools
import math

import torch

aten = torch.ops.aten

_NARROW_OR_SINGLE = (torch.float32, torch.float16, torch.bfloat16)


def _float_result(x):
    """The dtype eager gives a float function of `x`; None if not covered."""
    return _float_of(x.dtype)


def _float_of(dtype):
    """The float dtype eager computes a function of `dtype` in; None if not covered."""
    if dtype.is_complex:
        return None
    if dtype.is_floating_point:
        return dtype if dtype in _NARROW_OR_SINGLE else None
    return torch.get_default_dtype()


def _polynomial(t, coefficients):
    """c0 + c1 t + c2 t^2 + ... by Horner's rule (coefficients low to high)."""
    acc = torch.full_like(t, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = acc * t + c
    return acc


# --------------------------------------------------------------------------
# Adaptive max pooling: torch-mlir's lowering picks the wrong windows when the
# output size does not divide the input size (values off, silently).
# --------------------------------------------------------------------------
def _windows(size: int, out: int):
    """Index table [out, k] of PyTorch's adaptive windows along one dim:
    window i is [floor(i*size/out), ceil((i+1)*size/out)); shorter windows
    repeat their last index (a max is unchanged, and the first maximum keeps
    its place). Built from aranges: a traced constant would be lifted."""
    k = max(((i + 1) * size + out - 1) // out - (i * size) // out for i in range(out))
    i = torch.arange(out).unsqueeze(1)
    start = (i * size) // out
    end = ((i + 1) * size + out - 1) // out
    return torch.minimum(start + torch.arange(k).unsqueeze(0), end - 1), k


def adaptive_max_pool2d(x, output_size):
    """aten.adaptive_max_pool2d as a gather of each window's elements and a
    max over them, with eager's flat h * W + w indices."""
    if x.dim() not in (3, 4) or x.is_complex():
        return NotImplemented
    (h, w), (oh, ow) = x.shape[-2:], output_size
    if not all(isinstance(v, int) and v > 0 for v in (h, w, oh, ow)):
        return NotImplemented
    rows, kh = _windows(h, oh)
    cols, kw = _windows(w, ow)
    lead = x.shape[:-2]
    gathered = x.index_select(-2, rows.reshape(-1)).index_select(-1, cols.reshape(-1))
    gathered = gathered.reshape(*lead, oh, kh, ow, kw).movedim(-3, -2).reshape(*lead, oh, ow, kh * kw)
    values, pick = torch.max(gathered, -1)
    flat = (rows.reshape(oh, 1, kh, 1) * w + cols.reshape(1, ow, 1, kw)).reshape(oh, ow, kh * kw)
    flat = flat.expand(*lead, oh, ow, kh * kw)
    return values, torch.gather(flat, -1, pick.unsqueeze(-1)).squeeze(-1)


def _fractional_starts(samples, size: int, kernel: int, out: int):
    """Window starts [..., out] of fractional max pooling along one dim, from
    each plane's sample u in [0, 1) ([...]): eager's generate_intervals, in
    the input's float type as eager computes them, int((i + u) * alpha) -
    int(u * alpha) with alpha = (size - kernel) / (out - 1), the last window
    at size - kernel."""
    last = torch.full((*samples.shape, 1), size - kernel, dtype=torch.int64)
    if out == 1:
        return last
    alpha = torch.full((), size - kernel, dtype=samples.dtype) / torch.full((), out - 1, dtype=samples.dtype)
    i = torch.arange(out - 1, dtype=samples.dtype)
    u = samples.unsqueeze(-1)
    starts = ((i + u) * alpha).to(torch.int64) - (u * alpha).to(torch.int64)
    return torch.cat([starts, last], -1)


def fractional_max_pool(x, kernel_size, output_size, random_samples):
    """aten.fractional_max_pool2d / 3d: each plane's windows start where its
    random samples put them (_fractional_starts, one sample per spatial dim);
    the windows' elements gathered, their maximum and its flat index
    in the plane (h * W + w, or d * H * W + ...), as eager gives them."""
    dims = len(kernel_size)
    if x.dim() not in (dims + 1, dims + 2) or not x.is_floating_point() or random_samples.dim() != 3:
        return NotImplemented
    batched = x.dim() == dims + 2
    xb = x if batched else x.unsqueeze(0)
    n, c, sizes = xb.shape[0], xb.shape[1], list(xb.shape[2:])
    if not all(isinstance(v, int) for v in (n, c, *sizes, *kernel_size, *output_size)) or \
            any(o + k - 1 > s or o < 1 for s, k, o in zip(sizes, kernel_size, output_size)):
        return NotImplemented
    samples = random_samples.to(x.dtype)
    # flat[n, c, o1, .., od, k1, .., kd]: each window element's index in its plane
    flat = torch.zeros((n, c) + (1,) * (2 * dims), dtype=torch.int64)
    stride = 1
    for d in reversed(range(dims)):
        # eager's sample order: 2-d (W, H), 3-d (T, H, W)
        at = _fractional_starts(samples[..., dims - 1 - d if dims == 2 else d], sizes[d], kernel_size[d],
                                output_size[d])
        at = at.unsqueeze(-1) + torch.arange(kernel_size[d])            # [n, c, out_d, k_d]
        shape = [n, c] + [1] * (2 * dims)
        shape[2 + d], shape[2 + dims + d] = output_size[d], kernel_size[d]
        flat = flat + at.reshape(shape) * stride
        stride *= sizes[d]
    window = math.prod(kernel_size)
    flat = flat.expand(n, c, *output_size, *kernel_size).reshape(n, c, -1)
    # one gather from each flattened plane (not from a plane per output, which a broadcast would copy)
    values = torch.gather(xb.reshape(n, c, -1), -1, flat).reshape(n, c, -1, window)
    flat = flat.reshape(n, c, -1, window)
    best, pick = torch.max(values, -1)
    index = torch.gather(flat, -1, pick.unsqueeze(-1)).squeeze(-1)
    best, index = best.reshape(n, c, *output_size), index.reshape(n, c, *output_size)
    return (best, index) if batched else (best.squeeze(0), index.squeeze(0))


def _pool_windows(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool):
    """Input positions [out, kernel] of max pooling's windows along one dim
    (PyTorch's output size: in ceil mode the last window must start inside
    the input or its left padding) and which of them are inside the input."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    at = torch.arange(out).unsqueeze(1) * stride - padding + torch.arange(kernel).unsqueeze(0) * dilation
    return at, (at >= 0) & (at < size), out


def _unbatched(op, spatial_dims: int):
    """`op` (a pooling op) on an input without its batch dim (C, *spatial),
    as the batched op on a batch of one: torch-mlir builds an NCHW op on the
    unbatched tensor (an invalid op, or a crash)."""
    def decomposition(x, *args, **kwargs):
        if x.dim() != spatial_dims + 1:
            return NotImplemented
        out = op(x.unsqueeze(0), *args, **kwargs)
        return tuple(o.squeeze(0) for o in out) if isinstance(out, (tuple, list)) else out.squeeze(0)
    decomposition.__name__ = f"unbatched_{op.__name__}"
    return decomposition


def _pair(v):
    """A pooling size argument (an int, [n] or [h, w]) as [h, w]."""
    v = [v] if isinstance(v, int) else list(v)
    return v * 2 if len(v) == 1 else v


def max_pool2d_with_indices(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """aten.max_pool2d_with_indices of integers, as a gather of each window
    and a max over it, with eager's flat h * W + w index of the window's
    first maximum. torch-mlir's lowering compares integers with arith.cmpf
    (an invalid op). Floats stay with torch-mlir (on a batch of one, if
    unbatched)."""
    if x.is_floating_point() and x.dim() == 3:
        # Every list of two: torch-mlir reads [] as no stride and indexes
        # [p] at 1 (a crash).
        return _unbatched(aten.max_pool2d_with_indices.default, 2)(
            x, _pair(kernel_size), _pair(stride or kernel_size), _pair(padding), _pair(dilation), ceil_mode)
    # Not int8: a quantized model's max pool (int8 values, indices unused)
    # lowers to linalg.pooling_nchw_max, 20x faster than this gather
    # (ResNet-18 int8's 64x112x112 pool: 0.7 ms against 13 ms). A
    # decomposition cannot see whether the indices are used.
    if x.dtype not in (torch.int16, torch.int32, torch.int64, torch.uint8) or x.dim() not in (3, 4):
        return NotImplemented
    (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride or kernel_size)
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    h, w = x.shape[-2:]
    if not all(isinstance(v, int) for v in (h, w)):
        return NotImplemented
    rows, row_in, oh = _pool_windows(h, kh, sh, ph, dh, ceil_mode)
    cols, col_in, ow = _pool_windows(w, kw, sw, pw, dw, ceil_mode)
    rows, cols = rows.clamp(0, h - 1), cols.clamp(0, w - 1)
    lead = x.shape[:-2]
    gathered = x.index_select(-2, rows.reshape(-1)).index_select(-1, cols.reshape(-1))
    gathered = gathered.reshape(*lead, oh, kh, ow, kw).movedim(-3, -2).reshape(*lead, oh, ow, kh * kw)
    inside = (row_in.reshape(oh, 1, kh, 1) & col_in.reshape(1, ow, 1, kw)).reshape(oh, ow, kh * kw)
    if x.dtype == torch.uint8:   # Cuvil's max reductions take signed integers
        gathered = gathered.to(torch.int32)
    values = torch.where(inside, gathered, torch.full_like(gathered, torch.iinfo(gathered.dtype).min)).amax(-1)
    # The first inside position holding the maximum (padding never wins,
    # even against a maximum equal to the dtype's lowest value).
    first = ((gathered == values.unsqueeze(-1)) & inside).to(torch.int32).argmax(-1)
    values = values.to(x.dtype)
    flat = (rows.reshape(oh, 1, kh, 1) * w + cols.reshape(1, ow, 1, kw)).reshape(oh, ow, kh * kw)
    flat = flat.expand(*lead, oh, ow, kh * kw)
    return values, torch.gather(flat, -1, first.unsqueeze(-1)).squeeze(-1)


def im2col(x, kernel_size, dilation, padding, stride):
    """aten.im2col (F.unfold) as one strided slice of the padded input per
    kernel tap, stacked: torch's own decomposition gathers with index
    arithmetic that torch-mlir's lowering crashes on (SIGFPE). Rows are
    channel-major, then the taps in row-major order, as eager's."""
    if x.dim() not in (3, 4):
        return NotImplemented
    if x.dim() == 3:
        return im2col(x.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair(a) for a in (kernel_size, dilation, padding, stride))
    n, c, h, w = x.shape
    out_h = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    out_w = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    padded = torch.nn.functional.pad(x, (pw, pw, ph, ph))
    taps = [padded[:, :, i * dh:i * dh + sh * (out_h - 1) + 1:sh, j * dw:j * dw + sw * (out_w - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    return torch.stack(taps, dim=2).reshape(n, c * kh * kw, out_h * out_w)


def _antialiased_linear_weights(in_size: int, out_size: int, align_corners: bool, scale_factor):
    """The (out_size, in_size) matrix of eager's antialiased linear weights
    along one dim (UpSampleKernel's _compute_indices_min_size_weights_aa:
    PIL's bounds and triangle filter), from index grids (a decomposition
    cannot hold a constant tensor), float32 where eager's float kernel has a
    float and float64 where its C++ promotes to double: a window of the
    input per output, stretched by the scale when downsampling, its weights
    normalized to sum 1."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    elif scale_factor is not None and scale_factor > 0:
        scale = 1.0 / scale_factor
    else:
        scale = in_size / out_size
    import numpy as np
    scale = float(np.float32(scale))   # eager's scalar_t
    support = scale if scale >= 1.0 else 1.0   # interp_size (2) / 2, stretched
    invscale = float(np.float32(1.0) / np.float32(scale)) if scale >= 1.0 else 1.0
    max_size = int(math.ceil(support)) * 2 + 1
    i = torch.arange(out_size, dtype=torch.float64).unsqueeze(1)
    k = torch.arange(in_size, dtype=torch.float64).unsqueeze(0)
    center = (scale * (i + 0.5)).float()
    low = ((center - support).double() + 0.5).trunc().clamp_min(0)
    high = ((center + support).double() + 0.5).trunc().clamp_max(in_size)
    size = (high - low).clamp(0, max_size)
    x = (((k.float() - center).double() + 0.5) * invscale).float()
    w = torch.where((k >= low) & (k < low + size), (1.0 - x.abs().double()).clamp_min(0).float(),
                    torch.zeros((), dtype=torch.float32))
    total = w.sum(dim=1, keepdim=True)
    return torch.where(total != 0, w / torch.where(total != 0, total, 1.0), torch.zeros((), dtype=torch.float32))


def upsample_bilinear2d_aa(x, output_size, align_corners, scales_h=None, scales_w=None):
    """aten._upsample_bilinear2d_aa (F.interpolate(mode="bilinear",
    antialias=True)) as two products with eager's weight matrices, along
    the width then the height, as eager's separable passes."""
    if x.dim() != 4 or x.dtype != torch.float32 or not all(isinstance(d, int) for d in x.shape[2:]):
        return NotImplemented
    out_h, out_w = (int(d) for d in output_size)
    rows = _antialiased_linear_weights(x.shape[2], out_h, align_corners, scales_h)
    columns = _antialiased_linear_weights(x.shape[3], out_w, align_corners, scales_w)
    return torch.matmul(rows, torch.matmul(x, columns.t()))


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1, forward_only=False):
    """aten._embedding_bag (and _forward_only, F.embedding_bag's call under
    no_grad): each bag a mask over the indices (bags x indices), padding
    rows left out. Sum: a product of the (weighted) mask and the gathered
    rows; mean: that over the bag's size; max: the masked rows' maximum and
    the row index holding it (empty bags are 0). The other results as
    eager's CPU kernel gives them: offset2bag is empty for a sum without
    padding (its fast path), else each index's bag; bag_size is 0 for a
    sum, else the sizes; max_indices is 0 for a sum (one per offset in the
    forward-only kernel), the sizes for a mean."""
    if weight.dtype != torch.float32 or indices.dim() != 1 or mode not in (0, 1, 2):
        return NotImplemented
    count = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    starts = offsets[:bags]
    ends = offsets[1:] if include_last_offset else torch.cat([offsets[1:], offsets.new_full((1,), count)])
    position = torch.arange(count, dtype=offsets.dtype)
    in_bag = (starts.unsqueeze(1) <= position) & (position < ends.unsqueeze(1))    # bags x indices
    member = in_bag & (indices != padding_idx) if padding_idx >= 0 else in_bag
    rows = weight[indices]                                                            # indices x dim
    sizes = member.sum(dim=1)
    # (a sum's zeros: one per offset in eager's forward-only kernel)
    zeros = torch.zeros(offsets.shape[0] if forward_only else bags, dtype=indices.dtype)
    if mode == 2:
        masked = torch.where(member.unsqueeze(2), rows.unsqueeze(0), -math.inf)
        peak = masked.amax(dim=1)
        holds = member.unsqueeze(2) & (rows.unsqueeze(0) == peak.unsqueeze(1))
        first = torch.where(holds, position.view(1, -1, 1), count).amin(dim=1)
        empty = (sizes == 0).unsqueeze(1)
        output = torch.where(empty, 0.0, peak)
        max_indices = torch.where(empty, 0, indices[first.clamp_max(max(count - 1, 0))])
    else:
        scale = member.to(weight.dtype)
        if per_sample_weights is not None:
            scale = scale * per_sample_weights.to(weight.dtype)
        output = scale @ rows
        if mode == 1:
            output = output / sizes.clamp_min(1).unsqueeze(1).to(weight.dtype)
        max_indices = sizes if mode == 1 else zeros
    bag_size = zeros if mode == 0 else sizes.to(indices.dtype)
    if mode == 0 and padding_idx < 0:
        offset2bag = indices.new_zeros(0)
    else:
        offset2bag = (in_bag.to(indices.dtype) * torch.arange(bags, dtype=indices.dtype).unsqueeze(1)).sum(dim=0)
    return output, offset2bag, bag_size, max_indices.to(indices.dtype)


def _grid_source_index(coords, size: int, padding_mode: int, align_corners: bool):
    """A grid coordinate in [-1, 1] as a source index along a dim of `size`
    (eager's grid_sampler_compute_source_index): unnormalized, then clamped
    (border) or reflected into the input (reflection), left as is (zeros)."""
    if align_corners:
        coords = (coords + 1) / 2 * (size - 1)
    else:
        coords = ((coords + 1) * size - 1) / 2
    if padding_mode == 0:
        return coords
    if padding_mode == 2:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        if low == high:
            coords = torch.zeros_like(coords)
        else:
            span = (high - low) / 2
            distance = (coords - low / 2).abs()
            extra = torch.fmod(distance, span)
            flips = torch.floor(distance / span)
            coords = torch.where(torch.remainder(flips, 2) == 0, extra + low / 2, span - extra + low / 2)
    return coords.clamp(0, size - 1)


def grid_sampler_3d(x, grid, interpolation_mode, padding_mode, align_corners):
    """aten.grid_sampler_3d (F.grid_sample of a volume): trilinear (the
    eight corners' values gathered and weighted, out-of-volume corners 0)
    or nearest (rounded half to even) sampling."""
    if interpolation_mode not in (0, 1) or padding_mode not in (0, 1, 2) or not x.is_floating_point():
        return NotImplemented
    n, c, depth, height, width = x.shape
    _, out_d, out_h, out_w, _ = grid.shape
    ix = _grid_source_index(grid[..., 0], width, padding_mode, align_corners)
    iy = _grid_source_index(grid[..., 1], height, padding_mode, align_corners)
    iz = _grid_source_index(grid[..., 2], depth, padding_mode, align_corners)
    flat = x.reshape(n, c, depth * height * width)

    def corner(zs, ys, xs):
        """The input at integer (z, y, x) per output, 0 outside the volume."""
        inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height) & (zs >= 0) & (zs < depth)
        at = torch.where(inside, (zs * height + ys) * width + xs, 0).to(torch.int64)
        values = torch.gather(flat, 2, at.reshape(n, 1, -1).expand(n, c, -1))
        return torch.where(inside.reshape(n, 1, -1), values, 0).reshape(n, c, out_d, out_h, out_w)

    if interpolation_mode == 1:
        return corner(torch.round(iz), torch.round(iy), torch.round(ix))
    x0, y0, z0 = ix.floor(), iy.floor(), iz.floor()
    out = None
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                weight = ((ix - x0) if dx else (x0 + 1 - ix)) * ((iy - y0) if dy else (y0 + 1 - iy)) \
                    * ((iz - z0) if dz else (z0 + 1 - iz))
                term = corner(z0 + dz, y0 + dy, x0 + dx) * weight.unsqueeze(1)
                out = term if out is None else out + term
    return out


def adaptive_max_pool1d(x, output_size):
    """aten.adaptive_max_pool1d as the 2-d one over a unit height."""
    if x.dim() not in (2, 3):
        return NotImplemented
    values, indices = adaptive_max_pool2d(x.unsqueeze(-2), [1, output_size[0]])
    return values.squeeze(-2), indices.squeeze(-2)


# --------------------------------------------------------------------------
# Elementwise functions torch-mlir does not lower (or lowers wrong).
# --------------------------------------------------------------------------
def angle(x):
    """aten.angle of a real tensor: pi where x < 0, else 0 (NaN stays NaN).
    torch-mlir's lowering gives garbage for real inputs."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    xf = x.to(dtype)
    out = torch.where(xf < 0, torch.full_like(xf, math.pi), torch.zeros_like(xf))
    return torch.where(xf != xf, xf, out)


def isfinite(x):
    """aten.isfinite: not NaN and not +-inf; integers and bools always are."""
    if x.is_complex():
        return NotImplemented
    if not x.is_floating_point():
        return torch.ones_like(x, dtype=torch.bool)
    return ~torch.isnan(x) & (x.abs() != math.inf)


def hypot(a, b):
    """aten.hypot as m * sqrt(1 + (n / m)^2), m = max(|a|, |b|), n = min: no
    overflow or underflow of the squares; an infinite side gives inf even
    when the other is NaN (as C's hypot)."""
    dtype = _float_of(torch.promote_types(a.dtype, b.dtype))
    if dtype is None:
        return NotImplemented
    a, b = a.to(dtype).abs(), b.to(dtype).abs()
    m, n = torch.maximum(a, b), torch.minimum(a, b)
    ratio = torch.where(m == 0, torch.zeros_like(m), n / m)
    out = m * torch.sqrt(1 + ratio * ratio)
    out = torch.where(torch.isnan(a) | torch.isnan(b), torch.full_like(out, math.nan), out)
    return torch.where((a == math.inf) | (b == math.inf), torch.full_like(out, math.inf), out)


# Numerical Recipes' erfcc: erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2),
# z >= 0, relative error below 1.2e-7 everywhere (1.07e-7 measured against
# torch.special.erfcx in float64).
_ERFCC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
          0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfcx_nonnegative(z):
    """exp(z^2) erfc(z) for z >= 0 (float64)."""
    t = 1.0 / (1.0 + 0.5 * z)
    return t * torch.exp(_polynomial(t, _ERFCC))


def erfc(x):
    """aten.erfc: 1 - erf loses all relative precision in the tail; this
    keeps it (erfc(10) = 2.1e-45 is a float32 denormal, not 0)."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    z = x.double()
    a = z.abs()
    tail = _erfcx_nonnegative(a) * torch.exp(-a * a)
    return torch.where(z < 0, 2.0 - tail, tail).to(dtype)


def erfcx(x):
    """aten.special_erfcx: exp(x^2) erfc(x), for x < 0 as 2 exp(x^2) - erfcx(-x)."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    z = x.double()
    a = z.abs()
    positive = _erfcx_nonnegative(a)
    return torch.where(z < 0, 2.0 * torch.exp(a * a) - positive, positive).to(dtype)


# Lanczos approximation, g = 7, n = 9 (relative error ~1e-15 on x >= 0.5).
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_from_half(z):
    """log|Gamma(z)| for z >= 0.5 (float64)."""
    z = z - 1.0
    series = torch.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        series = series + c / (z + i)
    t = z + _LANCZOS_G + 0.5
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * torch.log(t) - t + torch.log(series)


def lgamma(x):
    """aten.lgamma: Lanczos on x >= 0.5, the reflection
    log(pi / |sin(pi x)|) - lgamma(1 - x) below (inf at 0, -1, -2, ...)."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    z = x.double()
    upper = torch.where(z >= 0.5, z, 1.0 - z)   # both branches stay on z >= 0.5
    direct = _lgamma_from_half(upper)
    # sin(pi z) at an integer z is ~1e-16, not 0: poles are set explicitly.
    sine = torch.sin(math.pi * (z - torch.floor(z))).abs()
    reflected = math.log(math.pi) - torch.log(sine) - direct
    pole = (z <= 0) & (z == torch.floor(z))
    out = torch.where(z >= 0.5, direct, torch.where(pole, torch.full_like(z, math.inf), reflected))
    out = torch.where(z.abs() == math.inf, torch.full_like(z, math.inf), out)
    return torch.where(z != z, z, out).to(dtype)


def digamma(x):
    """aten.digamma: shifted up by psi(x) = psi(x + 1) - 1/x until x >= 6,
    then the asymptotic series; below 0.5 the reflection
    psi(1 - x) - pi / tan(pi x). Eager's conventions: -inf at 0 (either
    sign: -inf at +0, inf at -0), NaN at the negative integers."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    z = x.double()
    y = torch.where(z >= 0.5, z, 1.0 - z)
    shift = torch.zeros_like(y)
    for _ in range(6):
        small = y < 6.0
        shift = shift + torch.where(small, 1.0 / y, torch.zeros_like(y))
        y = torch.where(small, y + 1.0, y)
    inv2 = 1.0 / (y * y)
    tail = inv2 * _polynomial(inv2, (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760))
    psi = torch.log(y) - 0.5 / y - tail - shift
    frac = z - torch.floor(z)
    reflected = psi - math.pi / torch.tan(math.pi * frac)
    out = torch.where(z >= 0.5, psi, reflected)
    out = torch.where((z < 0) & (frac == 0), torch.full_like(z, math.nan), out)
    # copysign(inf, -z): 1/z tells -0 from +0.
    out = torch.where(z == 0, torch.where(1.0 / z < 0, torch.full_like(z, math.inf), torch.full_like(z, -math.inf)), out)
    out = torch.where(z == math.inf, z, out)
    out = torch.where(z == -math.inf, torch.full_like(z, math.nan), out)
    return torch.where(z != z, z, out).to(dtype)


def _bessel_i(x, order: int, scaled: bool):
    """I0 / I1 (times exp(-|x|) when `scaled`) in float64: the power series
    below |x| = 20 (40 terms: the last is < 1e-17 of the sum), the
    asymptotic series exp(x) / sqrt(2 pi x) (1 - (mu-1)/(8x) + ...) above."""
    z = x.double()
    a = z.abs()
    small = torch.minimum(a, torch.full_like(a, 20.0))
    q = small * small / 4.0
    term = torch.ones_like(a) if order == 0 else small / 2.0
    series = term
    for k in range(1, 40):
        term = term * q / (k * (k + order))
        series = series + term
    if scaled:
        series = series * torch.exp(-small)
    big = torch.maximum(a, torch.full_like(a, 20.0))
    mu = 4.0 * order * order
    term = torch.ones_like(a)
    asym = term
    for k in range(1, 12):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * big)
        asym = asym + term
    asym = asym / torch.sqrt(2 * math.pi * big)
    if not scaled:
        asym = asym * torch.exp(big)
    out = torch.where(a <= 20.0, series, asym)
    if order == 1:   # odd
        out = torch.where(z < 0, -out, out)
    return torch.where(z != z, z, out)


def _bessel(order: int, scaled: bool):
    def decomposition(x):
        dtype = _float_result(x)
        if dtype is None:
            return NotImplemented
        return _bessel_i(x, order, scaled).to(dtype)
    decomposition.__name__ = f"bessel_i{order}{'e' if scaled else ''}"
    decomposition.__doc__ = (f"I{order}{' exp(-|x|)' if scaled else ''} (see _bessel_i): "
                             "torch-mlir has no lowering of it.")
    return decomposition


def spherical_bessel_j0(x):
    """aten.special_spherical_bessel_j0: sin(x) / x, 1 at 0, 0 at +-inf."""
    dtype = _float_result(x)
    if dtype is None:
        return NotImplemented
    z = x.double()
    safe = torch.where(z == 0, torch.ones_like(z), z)
    out = torch.where(z == 0, torch.ones_like(z), torch.sin(safe) / safe)
    return torch.where(z.abs() == math.inf, torch.zeros_like(z), out).to(dtype)


# --------------------------------------------------------------------------
# Integer forms torch-mlir refuses.
# --------------------------------------------------------------------------
def pow_integer(x, exponent):
    """aten.pow.Tensor_Scalar of an integer tensor by a non-negative integer
    (square() is pow 2): products by binary exponentiation, wrapping as
    eager's do. torch-mlir lowers pow on floats only."""
    if x.dtype == torch.bool and isinstance(exponent, int) and not isinstance(exponent, bool) and exponent >= 0:
        return pow_integer(x.to(torch.int64), exponent)   # eager: bool ** int is int64
    if x.is_floating_point() or x.is_complex() or isinstance(exponent, float) \
            or not isinstance(exponent, int) or exponent < 0 or x.dtype == torch.bool:
        return NotImplemented
    result, base, e = torch.ones_like(x), x, exponent
    while e:
        if e & 1:
            result = result * base
        e >>= 1
        if e:
            base = base * base
    return result


def clamp(x, min=None, max=None):
    """aten.clamp (scalar or tensor bounds) as selects that keep NaN, as eager
    does: torch-mlir's cmpf + select drops a NaN input (clamp(nan, 0, 1) gave
    0) and a NaN bound. The result has eager's promoted type: an integer
    tensor clamped by a float bound is float (torch-mlir fails on the mix),
    fp16 by a float32 tensor bound is float32. Integer clamps stay torch-mlir's."""
    bounds = [b for b in (min, max) if b is not None]
    if x.is_complex() or not bounds:
        return NotImplemented
    dtype = x.dtype
    for bound in bounds:
        dtype = torch.promote_types(dtype, torch.result_type(x, bound))
    if not dtype.is_floating_point:
        return NotImplemented
    out = x.to(dtype)
    if min is not None:
        out = _select_past(out, min, below=True)
    if max is not None:
        out = _select_past(out, max, below=False)
    return out


def _select_past(x, bound, below: bool):
    """The bound where x is past it (or the bound is NaN), else x (NaN kept)."""
    if isinstance(bound, torch.Tensor):
        bound = bound.to(x.dtype)
        past = ((x < bound) if below else (x > bound)) | torch.isnan(bound)
        return torch.where(past, bound, x)
    if math.isnan(bound):
        return torch.full_like(x, math.nan)
    past = (x < bound) if below else (x > bound)
    return torch.where(past, torch.full_like(x, bound), x)


def clamp_min(x, min):
    """aten.clamp_min (see clamp)."""
    return clamp(x, min, None)


def clamp_max(x, max):
    """aten.clamp_max (see clamp)."""
    return clamp(x, None, max)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    """aten.hardtanh (relu6 is hardtanh(0, 6)) as a NaN-keeping clamp."""
    if not x.is_floating_point():
        return NotImplemented
    return clamp(x, min_val, max_val)


def _extreme(a, b, larger: bool):
    """maximum / minimum of floats: NaN if either is NaN, as eager.
    torch-mlir's `a > b ? a : b` returns b when a is NaN."""
    dtype = torch.result_type(a, b)
    if not dtype.is_floating_point:
        return NotImplemented
    a, b = a.to(dtype), b.to(dtype)
    take_a = ((a > b) if larger else (a < b)) | torch.isnan(a)
    return torch.where(take_a, a, b)


def maximum(a, b):
    """aten.maximum (see _extreme)."""
    return _extreme(a, b, larger=True)


def minimum(a, b):
    """aten.minimum (see _extreme)."""
    return _extreme(a, b, larger=False)


def _nan_ignoring_extreme(a, b, larger: bool):
    """fmax / fmin: the other operand where one is NaN, NaN only where both
    are (C's fmax). torch-mlir's lowering fails on a 0-d operand (a
    tensor.cast of tensor<i1> to tensor<5xi1>)."""
    dtype = torch.result_type(a, b)
    if dtype.is_complex:
        return NotImplemented
    a, b = a.to(dtype), b.to(dtype)
    take_a = (a > b) if larger else (a < b)
    if dtype.is_floating_point:
        take_a = take_a | torch.isnan(b)
    return torch.where(take_a, a, b)


def fmax(a, b):
    """aten.fmax (see _nan_ignoring_extreme)."""
    return _nan_ignoring_extreme(a, b, larger=True)


def fmin(a, b):
    """aten.fmin (see _nan_ignoring_extreme)."""
    return _nan_ignoring_extreme(a, b, larger=False)


def _self_comparison(holds_for_numbers: bool):
    """x == x, x <= x, x >= x (true but for NaN) and x != x (NaN): torch-mlir
    folds a comparison of a tensor with itself to a constant, wrong for NaN."""
    def decomposition(a, b):
        if a is not b or not a.is_floating_point():
            return NotImplemented
        return ~torch.isnan(a) if holds_for_numbers else torch.isnan(a)
    decomposition.__name__ = "self_comparison"
    return decomposition


# --------------------------------------------------------------------------
# Scans and order statistics torch-mlir does not lower.
# --------------------------------------------------------------------------
def _cumulative_extreme(x, dim, larger: bool):
    """cummax / cummin as a log-step scan (Hillis-Steele): after step s every
    position holds the extreme of the 2^s positions ending at it. A later
    element replaces an earlier one when it is >= (<=) or NaN, as eager's
    loop does (later ties win, a NaN sticks, a later NaN moves the index)."""
    if x.is_complex() or x.dim() == 0:
        return NotImplemented
    dim = dim % x.dim()
    n = x.shape[dim]
    if not isinstance(n, int):
        return NotImplemented
    shape = [1] * x.dim()
    shape[dim] = n
    values = x
    indices = torch.arange(n).reshape(shape).expand(x.shape).contiguous()
    step = 1
    while step < n:
        earlier_v = values.narrow(dim, 0, n - step)
        earlier_i = indices.narrow(dim, 0, n - step)
        later_v = values.narrow(dim, step, n - step)
        later_i = indices.narrow(dim, step, n - step)
        # A NaN earlier compares false: it is kept unless the later one is NaN.
        keep_later = (later_v >= earlier_v) if larger else (later_v <= earlier_v)
        if x.is_floating_point():
            keep_later = keep_later | (later_v != later_v)
        head_v, head_i = values.narrow(dim, 0, step), indices.narrow(dim, 0, step)
        values = torch.cat([head_v, torch.where(keep_later, later_v, earlier_v)], dim)
        indices = torch.cat([head_i, torch.where(keep_later, later_i, earlier_i)], dim)
        step *= 2
    return values, indices


def cummax(x, dim):
    """aten.cummax (see _cumulative_extreme): torch-mlir has no lowering."""
    return _cumulative_extreme(x, dim, larger=True)


def cummin(x, dim):
    """aten.cummin (see _cumulative_extreme): torch-mlir has no lowering."""
    return _cumulative_extreme(x, dim, larger=False)


def median(x):
    """aten.median of all elements: the lower middle of a sort (NaN if any)."""
    if x.is_complex() or x.numel() == 0:
        return NotImplemented
    values, _ = median_dim(x.reshape(-1), 0)
    return values


def nanmedian(x):
    """aten.nanmedian of all elements (see nanmedian_dim)."""
    if x.is_complex() or x.numel() == 0:
        return NotImplemented
    values, _ = nanmedian_dim(x.reshape(-1), 0)
    return values


def _middle_of_sorted(x, dim, keepdim, skip_nan: bool):
    """The lower middle of each line along `dim` of a stable sort (NaN sort
    last), and its index in x. median: NaN, at the line's first NaN, if the
    line has one; nanmedian: the middle of the line's numbers (NaN if none).
    torch-mlir has no lowering of either."""
    if x.is_complex() or x.numel() == 0:
        return NotImplemented
    squeeze_back = x.dim() == 0
    if squeeze_back:
        x = x.reshape(1)
    dim = dim % x.dim()
    n = x.shape[dim]
    values, order = torch.sort(x, dim)
    floating = x.is_floating_point()
    if skip_nan and floating:
        count = (~torch.isnan(x)).sum(dim, keepdim=True)
        k = torch.clamp((count - 1) // 2, min=0)
    else:
        k = torch.full_like(values.narrow(dim, 0, 1), (n - 1) // 2, dtype=torch.int64)
    middle = torch.gather(values, dim, k)
    index = torch.gather(order, dim, k)
    if floating:
        nan = torch.isnan(x)
        if skip_nan:
            middle = torch.where(count == 0, torch.full_like(middle, math.nan), middle)
            index = torch.where(count == 0, torch.zeros_like(index), index)
        else:
            has_nan = nan.any(dim, keepdim=True)
            first_nan = torch.argmax(nan.to(torch.int64), dim, keepdim=True)
            middle = torch.where(has_nan, torch.full_like(middle, math.nan), middle)
            index = torch.where(has_nan, first_nan, index)
    if squeeze_back:
        return middle.reshape(()), index.reshape(())
    if not keepdim:
        middle, index = middle.squeeze(dim), index.squeeze(dim)
    return middle, index


def median_dim(x, dim, keepdim=False):
    """aten.median.dim (see _middle_of_sorted)."""
    return _middle_of_sorted(x, dim, keepdim, skip_nan=False)


def nanmedian_dim(x, dim, keepdim=False):
    """aten.nanmedian.dim (see _middle_of_sorted)."""
    return _middle_of_sorted(x, dim, keepdim, skip_nan=True)


def mode(x, dim=-1, keepdim=False):
    """aten.mode as eager's CPU kernel picks it: the smallest of the most
    frequent values along dim, and the last index holding it (eager sorts
    the row and takes the end of the value's run; its sort keeps ties in
    order for the short rows where that is defined). Frequencies by
    comparing every pair of the row (rows x rows per row)."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64)
    dim = dim % x.dim()
    rows = x.movedim(dim, -1)
    count = (rows.unsqueeze(-1) == rows.unsqueeze(-2)).sum(dim=-1)
    frequent = count == count.amax(dim=-1, keepdim=True)
    value = torch.where(frequent, rows, rows.amax(dim=-1, keepdim=True)).amin(dim=-1, keepdim=True)
    position = torch.arange(rows.shape[-1])
    index = torch.where(rows == value, position, -1).amax(dim=-1, keepdim=True)
    value, index = value.movedim(-1, dim), index.movedim(-1, dim)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


# --------------------------------------------------------------------------
# Forms torch-mlir leaves half-lowered (torch.constant.* left in the IR).
# --------------------------------------------------------------------------
def copysign(a, b):
    """aten.copysign.Tensor as |a| negated where b's sign bit is set (-0
    included, told by 1/b): torch-mlir's lowering fails to broadcast a 0-d b."""
    dtype = torch.result_type(a, b)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    if dtype not in _NARROW_OR_SINGLE:
        return NotImplemented
    a, b = a.to(dtype), b.to(dtype)
    negative = (b < 0) | ((b == 0) & (1.0 / b < 0))
    magnitude = a.abs()
    return torch.where(negative, -magnitude, magnitude)


# --------------------------------------------------------------------------
# Integer gcd / lcm (eager's calc_gcd: Euclid's loop on |a|, |b|), a loop
# as long as its longest element's: a torch.while_loop (an scf.while) whose
# every step advances the unfinished elements, by C's remainder (the
# operands are non-negative), a zero divisor masked out so no step traps.
# --------------------------------------------------------------------------
def while_loop_op(cond_fn, body_fn, carries: tuple, additional_inputs: tuple):
    """The while_loop operator itself, for decompositions (which run while
    the program is traced): torch.while_loop, the user-facing function,
    compiles its arguments with Dynamo when called outside Dynamo, whose
    cache then hands a later decomposition's loop stale subgraphs. cond_fn
    and body_fn take the carries, then `additional_inputs` (the tensors they
    read), and close over no tensor."""
    return torch.ops.higher_order.while_loop(cond_fn, body_fn, carries, additional_inputs)


def _gcd(a, b):
    def more(a, b):
        return (a != 0).any()

    def advance(a, b):
        running = a != 0
        rest = torch.fmod(b, torch.where(running, a, torch.ones_like(a)))
        return torch.where(running, rest, a), torch.where(running, a, b)

    _, g = while_loop_op(more, advance, (a.abs(), b.abs()), ())
    return g


def _integer_operands(a, b):
    """a, b broadcast in their common integer dtype; None for float or bool."""
    dtype = torch.result_type(a, b)
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        return None
    if not isinstance(a, torch.Tensor):
        a = torch.full_like(b, a, dtype=dtype)
    if not isinstance(b, torch.Tensor):
        b = torch.full_like(a, b, dtype=dtype)
    a, b = torch.broadcast_tensors(a.to(dtype), b.to(dtype))
    return a.contiguous(), b.contiguous()


def gcd(a, b):
    """aten.gcd: torch-mlir has no lowering of it."""
    operands = _integer_operands(a, b)
    return NotImplemented if operands is None else _gcd(*operands)


def lcm(a, b):
    """aten.lcm as eager: |a / gcd * b|, 0 where the gcd is 0, wrapped to
    the dtype as eager's C++ wraps it."""
    operands = _integer_operands(a, b)
    if operands is None:
        return NotImplemented
    a, b = operands
    g = _gcd(a, b)
    zero = g == 0
    quotient = torch.div(a, torch.where(zero, torch.ones_like(g), g), rounding_mode="trunc")
    # C++ multiplies ints narrower than int as int (then wraps to the dtype)
    wide = torch.int32 if a.dtype.itemsize < 4 else a.dtype
    product = (quotient.to(wide) * b.to(wide)).abs().to(a.dtype)
    return torch.where(zero, torch.zeros_like(g), product)


def nextafter(x, y):
    """aten.nextafter (float32, C's nextafter): the float next to x towards
    y, x plus or minus one unit in its last place (torch-mlir lowers no
    bitcast of a tensor's dtype): 2^(e - 24) for x = m 2^e with
    0.5 <= |m| < 1, half that from a power of two towards zero, never below
    the subnormals' 2^-149; exact in float64. y where x == y, the smallest
    subnormal of y's sign from zero, the largest float from an infinity,
    NaN from a NaN operand."""
    dtype = torch.result_type(x, y)
    if dtype != torch.float32:
        return NotImplemented
    x, y = torch.broadcast_tensors(x.to(dtype), y.to(dtype))
    mantissa, exponent = frexp(x)
    e = exponent.double()
    away = (y > x) == (x > 0)
    towards_zero = torch.where(mantissa.abs() == 0.5, e - 25, e - 24)
    step = _scale_by_pow2(torch.ones_like(e), torch.where(away, e - 24, towards_zero).clamp_min(-149))
    magnitude = (x.double().abs() + torch.where(away, step, -step)).to(dtype)
    out = torch.where(x < 0, -magnitude, magnitude)   # -0 from the smallest negative subnormal
    largest = torch.finfo(torch.float32).max
    out = torch.where(x.abs() == math.inf, torch.where(x > 0, largest, -largest).to(dtype), out)
    tiny = float(2.0 ** -149)
    out = torch.where(x == 0, torch.where(y < 0, -tiny, tiny).to(dtype), out)
    out = torch.where(x == y, y, out)
    return torch.where((x != x) | (y != y), x + y, out)


# --------------------------------------------------------------------------
# Segment reductions: each segment [start, end) of data's `axis` as a mask
# over that axis (segments x elements), the masked data reduced: no
# data-dependent shape; the reduction starts from `initial` (or the
# reduction's identity), and an empty segment's mean is NaN, as eager's.
# --------------------------------------------------------------------------
_SEGMENT_FILL = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """aten.segment_reduce (float data; lengths or offsets of
    data.shape[:axis] + (segments,))."""
    if not data.is_floating_point() or reduce not in _SEGMENT_FILL or indices is not None:
        return NotImplemented
    axis = axis % data.dim()
    if lengths is not None:
        ends = torch.cumsum(lengths, dim=-1)
        starts = ends - lengths
    elif offsets is not None:
        starts, ends = offsets[..., :-1], offsets[..., 1:]
    else:
        return NotImplemented
    rest = data.dim() - axis - 1
    position = torch.arange(data.shape[axis], device=data.device)
    mask = (starts.unsqueeze(-1) <= position) & (position < ends.unsqueeze(-1))   # batch + (S, N)
    mask = mask.reshape(mask.shape + (1,) * rest)
    values = data.unsqueeze(axis)                                                  # batch + (1, N) + rest
    fill = _SEGMENT_FILL[reduce]
    masked = torch.where(mask, values, torch.full((), fill, dtype=data.dtype))
    start = fill if initial is None else float(initial)
    if reduce in ("sum", "mean"):
        out = masked.sum(dim=axis + 1) + start
    elif reduce == "prod":
        out = masked.prod(dim=axis + 1) * start
    elif reduce == "max":
        out = torch.maximum(masked.amax(dim=axis + 1), torch.full((), start, dtype=data.dtype))
    else:
        out = torch.minimum(masked.amin(dim=axis + 1), torch.full((), start, dtype=data.dtype))
    if reduce == "mean":
        count = (ends - starts).to(data.dtype).reshape((ends - starts).shape + (1,) * rest)
        empty_value = torch.full((), math.nan if initial is None else float(initial), dtype=data.dtype)
        out = torch.where(count > 0, out / count, empty_value)
    return out


def _arg_extreme_of_scalar(x, dim=None, keepdim=False):
    """argmax / argmin of a 0-d tensor: 0 (torch-mlir leaves its flags unlowered)."""
    if x.dim() != 0:
        return NotImplemented
    return torch.zeros_like(x, dtype=torch.int64)


def _extreme_of_scalar(x, dim=(), keepdim=False):
    """amax / amin of a 0-d tensor: itself."""
    if x.dim() != 0:
        return NotImplemented
    return x.clone()


def _logsumexp_of_scalar(x, dim=(), keepdim=False):
    """logsumexp of a 0-d tensor: itself, as a float."""
    if x.dim() != 0 or x.is_complex():
        return NotImplemented
    return x.clone() if x.is_floating_point() else x.to(torch.get_default_dtype())


def _all_of_scalar(x, dim=None, keepdim=False):
    """all / any of a 0-d tensor: whether it is nonzero."""
    if x.dim() != 0 or x.is_complex():
        return NotImplemented
    return x != 0


def linalg_norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """aten.linalg_norm (.default, .ord_str) as vector norms (torch-mlir
    leaves its flags unlowered; `torch.linalg.norm(v)` failed): over all
    elements when neither ord nor dim is given, a vector norm over one dim,
    Frobenius or the 1 / inf matrix norms (max column / row sums) over two.
    Spectral and nuclear norms need an SVD: left unsupported."""
    if x.is_complex():
        return NotImplemented
    if isinstance(dim, int):
        dim = [dim]
    if dim is None:
        if ord is None:
            return torch.linalg.vector_norm(x, 2, None, keepdim, dtype=dtype)
        dim = list(range(x.dim()))
    if len(dim) == 1:
        if isinstance(ord, str):
            return NotImplemented
        return torch.linalg.vector_norm(x, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) != 2:
        return NotImplemented
    if ord is None or ord == "fro":
        return torch.linalg.vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if ord not in (1, -1, math.inf, -math.inf):
        return NotImplemented
    rows, cols = dim[0] % x.dim(), dim[1] % x.dim()
    summed, extreme = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = (x if dtype is None else x.to(dtype)).abs().sum(summed, keepdim=True)
    out = sums.amax(extreme, keepdim=True) if ord > 0 else sums.amin(extreme, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    """aten.diagonal_scatter as a select between x and src spread over the
    diagonal's positions (torch-mlir leaves its offsets unlowered)."""
    d1, d2 = dim1 % x.dim(), dim2 % x.dim()
    rows_n, cols_n = x.shape[d1], x.shape[d2]
    moved = x.movedim((d1, d2), (-2, -1))
    rows = torch.arange(rows_n).unsqueeze(1)
    cols = torch.arange(cols_n).unsqueeze(0)
    on_diagonal = (cols - rows) == offset
    length = src.shape[-1]
    if length == 0:
        return x.clone()
    position = torch.clamp(rows if offset >= 0 else cols, max=length - 1).expand(rows_n, cols_n)
    spread = src.index_select(-1, position.reshape(-1)).reshape(*src.shape[:-1], rows_n, cols_n)
    return torch.where(on_diagonal, spread.to(x.dtype), moved).movedim((-2, -1), (d1, d2))


def _strided_positions(size, stride, storage_offset):
    """Flat storage index of each element of an as_strided view of a
    contiguous tensor: offset + sum_d i_d * stride_d."""
    index = torch.full(tuple(size), storage_offset or 0, dtype=torch.int64)
    for d, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        index = index + torch.arange(n).reshape(shape) * step
    return index


def as_strided_copy(x, size, stride, storage_offset=None):
    """aten.as_strided_copy as a gather from the flattened input (the
    functional graph's tensors are contiguous)."""
    if not all(isinstance(v, int) for v in (*size, *stride)):
        return NotImplemented
    positions = _strided_positions(size, stride, storage_offset)
    return x.reshape(-1).index_select(0, positions.reshape(-1)).reshape(tuple(size))


def as_strided_scatter(x, src, size, stride, storage_offset=None):
    """aten.as_strided_scatter as an index_put into the flattened input."""
    if not all(isinstance(v, int) for v in (*size, *stride)):
        return NotImplemented
    positions = _strided_positions(size, stride, storage_offset).reshape(-1)
    flat = x.reshape(-1).index_put((positions,), src.to(x.dtype).reshape(-1))
    return flat.reshape(x.shape)


def index_reduce(x, dim, index, source, reduce, *, include_self=True):
    """aten.index_reduce as scatter_reduce with the index spread over the
    source's other dims (torch-mlir lowers scatter_reduce, to tm_tensor)."""
    if x.dim() == 0:   # a 0-d tensor reduces as one element
        return index_reduce(x.reshape(1), 0, index.reshape(-1), source.reshape(-1), reduce,
                            include_self=include_self).reshape(())
    dim = dim % x.dim()
    shape = [1] * source.dim()
    shape[dim] = index.shape[0]
    spread = index.reshape(shape).expand(source.shape)
    return x.scatter_reduce(dim, spread, source, reduce, include_self=include_self)


def scatter_with_reduce(x, dim, index, src, *, reduce):
    """aten.scatter's legacy `reduce=` forms ("add", "multiply"; src a tensor
    or a number) as scatter_reduce including x's own values, which is what
    they compute (torch-mlir lowers scatter_reduce, not these)."""
    modes = {"add": "sum", "multiply": "prod"}
    if reduce not in modes:
        return NotImplemented
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=x.dtype)
    return x.scatter_reduce(dim, index, src.to(x.dtype), modes[reduce], include_self=True)


def signbit(x):
    """aten.signbit: negative, -0 included (told by 1/x); integers by < 0."""
    if x.is_complex():
        return NotImplemented
    if not x.is_floating_point():
        return x < 0
    return (x < 0) | ((x == 0) & (1.0 / x < 0))


def roll(x, shifts, dims=()):
    """aten.roll as a concat of two slices per rolled dim, each shift taken
    modulo its dim's size as eager does: torch-mlir's lowering did not (a
    shift of -7 on a dim of 6 returned wrong values, silently)."""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not all(isinstance(v, int) for v in (*shifts, *x.shape)):
        return NotImplemented
    if not dims:   # the flattened tensor, rolled
        return roll(x.reshape(-1), shifts, [0]).reshape(x.shape)
    if len(shifts) != len(dims):
        return NotImplemented
    out = x.clone()
    for shift, dim in zip(shifts, dims):
        size = out.shape[dim]
        shift = shift % size if size else 0
        if shift:
            out = torch.cat((out.narrow(dim, size - shift, shift), out.narrow(dim, 0, size - shift)), dim)
    return out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    """aten.empty_strided as a contiguous empty (a functional graph has no
    strides; the values are unspecified either way): torch-mlir's lowering
    of a 0-size empty_strided fails on its own leftover operands."""
    return torch.empty(size, dtype=dtype, device=device)


def new_empty_strided(x, size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    return torch.empty(size, dtype=x.dtype if dtype is None else dtype, device=device)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=None):
    """aten.empty_permuted: its physical layout is a stride order, which a
    functional graph does not have; the values are unspecified either way."""
    return torch.empty(size, dtype=dtype, device=device)


def put(x, index, source, accumulate=False):
    """aten.put: x viewed flat, source written (or added, `accumulate`) at
    `index` (negative counts from the end), as index_put on the flat view."""
    flat = torch.ops.aten.index_put(x.reshape(-1), [index.reshape(-1)], source.reshape(-1), accumulate)
    return flat.reshape(x.shape)


def addbmm(x, batch1, batch2, *, beta=1, alpha=1):
    """aten.addbmm: beta x + alpha sum_b batch1[b] @ batch2[b], for every
    dtype (torch-mlir's lowering handles float only); beta = 0 ignores x,
    NaNs included."""
    out = torch.bmm(batch1, batch2).sum(0, dtype=batch1.dtype)
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out.expand(torch.broadcast_shapes(x.shape, out.shape)).clone()
    return (x if beta == 1 else x * beta) + out


def resize(x, size, memory_format=None):
    """aten.resize (resize_ / resize_as_ made functional): the first
    prod(size) elements in row-major order, as eager's on a contiguous
    tensor; growing (uninitialized memory) stays unsupported."""
    n = math.prod(size)
    if not all(isinstance(v, int) for v in (*size, *x.shape)) or n > x.numel():
        return NotImplemented
    return x.reshape(-1)[:n].reshape(size).clone()


def nonzero_static(x, *, size, fill_value=-1):
    """aten.nonzero_static: the coordinates of the first `size` nonzero
    elements (row-major), padded with fill_value. Each nonzero element's
    row is its rank among them (a cumsum); the others, and those past
    `size`, write to a spare row that is cut off."""
    if not all(isinstance(v, int) for v in x.shape):
        return NotImplemented
    flat = (x != 0).reshape(-1)
    index = torch.arange(flat.numel(), dtype=torch.int64)
    coords, rest = [], index
    for extent in reversed(x.shape):
        coords.append(rest % extent)
        rest = rest // extent
    coords = torch.stack(coords[::-1], dim=1) if coords else index.new_zeros((flat.numel(), 0))
    rank = torch.cumsum(flat.to(torch.int64), 0) - 1
    row = torch.where(flat & (rank < size), rank, size)
    out = torch.full((size + 1, x.dim()), fill_value, dtype=torch.int64)
    return out.index_put((row,), coords)[:size]


def pow_float(x, exponent):
    """pow of float tensors with C's special cases: the power of |x|,
    negated for a negative x (or -0,
    -inf) and an odd integer exponent, NaN for a finite negative x and a
    non-integer one; x^0 = 1^y = (-1)^+-inf = 1. The expansion alone gave
    NaN for every negative base (pow(-2, 3) of tensors: NaN, silently)."""
    # |x|^y as exp(y log|x|) in float64 (torch.pow here would recurse into
    # this decomposition): 0 and inf bases give 0 / inf as pow does.
    magnitude = torch.exp(exponent.double() * torch.log(x.abs().double())).to(x.dtype)
    integral = (exponent == torch.floor(exponent)) & (exponent.abs() != math.inf)
    odd = integral & (torch.remainder(exponent, 2.0) == 1.0)
    negative = signbit(x)
    out = torch.where(negative & odd, -magnitude, magnitude)
    out = torch.where((x < 0) & (x != -math.inf) & ~integral & (exponent.abs() < math.inf),
                      torch.full_like(out, math.nan), out)
    one = (exponent == 0) | (x == 1) | ((x == -1) & (exponent.abs() == math.inf))
    return torch.where(one, torch.ones_like(out), out)


def pow_tensors(x, exponent):
    """aten.pow.Tensor_Tensor: integers by binary exponentiation over the
    exponent's bits (wrapping as eager's products do; a negative exponent
    gives eager's 1 / x truncated: 1 for 1, +-1 for -1, else 0); floats by
    pow_float."""
    if not isinstance(x, torch.Tensor) or not isinstance(exponent, torch.Tensor):
        return NotImplemented
    dtype = torch.result_type(x, exponent)
    if dtype in (torch.float32, torch.float64):
        return pow_float(x.to(dtype), exponent.to(dtype))
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        return NotImplemented
    base, e = x.to(dtype), exponent.to(dtype)
    result = torch.ones_like(base * e)
    for bit in range(torch.iinfo(dtype).bits):   # every bit: a uint8 exponent of 128 has bit 7
        result = torch.where(((e >> bit) & 1) == 1, result * base, result)
        base = base * base
    odd = (e & 1) == 1
    x = x.to(dtype)
    negative = torch.where(x == 1, 1, torch.where(x == -1, torch.where(odd, -1, 1), 0)).to(dtype)
    return torch.where(e < 0, negative, result)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """aten.isclose of integers and bools (torch-mlir takes floats only), as
    eager computes it: equal, or |a - b| <= atol + |rtol b| in floats."""
    if a.is_floating_point() or b.is_floating_point() or a.is_complex() or b.is_complex():
        return NotImplemented
    ca = a.to(torch.get_default_dtype()) if a.dtype == torch.bool else a
    cb = b.to(torch.get_default_dtype()) if b.dtype == torch.bool else b
    return (a == b) | ((ca - cb).abs() <= atol + (rtol * cb).abs())


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """aten.searchsorted.Tensor as eager's own binary search, unrolled
    (ceil(log2(n + 1)) steps of a gather): it moves right past an element
    unless that is >= v (> v for right), so NaNs, unsorted rows and ties come
    out as eager's do."""
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    right = right or side == "right"
    dtype = torch.int32 if out_int32 else torch.int64
    n = seq.shape[-1]
    if not isinstance(n, int):
        return NotImplemented
    if 0 in (*seq.shape, *values.shape):   # torch-mlir's lowering of the empty search divides by zero
        return torch.zeros(values.shape, dtype=dtype)
    start = torch.zeros(values.shape, dtype=torch.int64)
    end = torch.full(values.shape, n, dtype=torch.int64)
    for _ in range(n.bit_length()):
        active = start < end
        mid = start + (end - start) // 2
        safe = mid.clamp(max=n - 1)
        at_mid = seq[safe] if seq.dim() == 1 else seq.gather(-1, safe)
        below = ~(at_mid > values) if right else ~(at_mid >= values)
        start = torch.where(active & below, mid + 1, start)
        end = torch.where(active & ~below, mid, end)
    return start.to(dtype)


def histc(x, bins=100, min=0, max=0):
    """aten.histc: counts per bin, bin = trunc((x - lo) bins / (hi - lo))
    as eager's linear kernel computes it, x == hi in the last bin, values
    outside [lo, hi] ignored; lo = hi = 0 means the data's range (widened
    by 1 each way when the data is constant)."""
    if not x.is_floating_point() or not all(isinstance(v, int) for v in x.shape):
        return NotImplemented
    flat = x.reshape(-1)
    if min == max and flat.numel():
        lo, hi = flat.min(), flat.max()
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    else:
        lo, hi = x.new_full((), float(min)), x.new_full((), float(max))
    inside = (flat >= lo) & (flat <= hi)
    # Outside values (and NaN) to 0 before the int conversion (poison otherwise); masked below.
    position = torch.where(inside, (flat - lo) * bins / (hi - lo), torch.zeros_like(flat)).to(torch.int64)
    position = torch.where(position == bins, bins - 1, position)
    hits = (position.unsqueeze(-1) == torch.arange(bins)) & inside.unsqueeze(-1)
    return hits.sum(0).to(x.dtype)


def _even_edges(lo, hi, steps: int):
    """`steps` values from lo to hi (0-d tensors) as eager's serial
    linspace: lo + step i in the first half, hi - step (steps - 1 - i) in
    the second."""
    i = torch.arange(steps, dtype=lo.dtype)
    step = (hi - lo) / (steps - 1)
    return torch.where(torch.arange(steps) < steps // 2, lo + step * i, hi - step * (steps - 1 - i))


def _outer_edges(values, bounds):
    """A histogram dim's outer edges: `bounds` (lo, hi), or the values'
    min and max; widened by 0.5 each way where they are equal."""
    if bounds is not None:
        lo, hi = values.new_full((), float(bounds[0])), values.new_full((), float(bounds[1]))
    elif values.numel():
        lo, hi = values.min(), values.max()
    else:
        lo = hi = values.new_zeros(())
    same = lo == hi
    return torch.where(same, lo - 0.5, lo), torch.where(same, hi + 0.5, hi)


def _histogram(points, edges, weight, density: bool):
    """Eager's histogramdd kernel: each row of `points` (N x D) counts (or
    adds its weight) in the bin whose edges hold it per dim, the edge to
    its right excluded but the last; rows outside the edges (or NaN) are
    skipped. density: divided by the total and by each bin's widths."""
    shape = [e.shape[0] - 1 for e in edges]
    index = torch.zeros(points.shape[0], dtype=torch.int64)
    inside = torch.ones(points.shape[0], dtype=torch.bool)
    stride = 1
    for d in reversed(range(len(edges))):
        column, e = points[:, d].contiguous(), edges[d]
        position = searchsorted(e, column, right=True) - 1
        position = torch.where(position >= shape[d], shape[d] - 1, position).clamp(min=0)
        index, stride = index + position * stride, stride * shape[d]
        inside = inside & (column >= e[0]) & (column <= e[-1])
    amount = torch.ones_like(points[:, 0]) if weight is None else weight.reshape(-1)
    amount = torch.where(inside, amount, torch.zeros_like(amount))
    hist = torch.zeros(stride, dtype=points.dtype).index_put((index,), amount, accumulate=True).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            hist = hist / (e[1:] - e[:-1]).reshape([-1 if k == d else 1 for k in range(len(edges))])
    return hist


def _histogram_covered(x, weight) -> bool:
    return x.is_floating_point() and all(isinstance(v, int) for v in x.shape) and (
        weight is None or weight.dtype == x.dtype)


def histogram_bin_ct(x, bins=100, *, range=None, weight=None, density=False):
    """aten.histogram.bin_ct: `bins` even bins over `range` or the data's
    [min, max] (widened by 0.5 each way when constant), as eager's."""
    if not _histogram_covered(x, weight):
        return NotImplemented
    flat = x.reshape(-1)
    edges = _even_edges(*_outer_edges(flat, range), bins + 1)
    return _histogram(flat.unsqueeze(1), [edges], weight, density), edges


def histogram_bins_tensor(x, bins, *, weight=None, density=False):
    """aten.histogram.bins_tensor: the bins between the given edges."""
    if not _histogram_covered(x, weight):
        return NotImplemented
    return _histogram(x.reshape(-1, 1), [bins], weight, density), bins.clone()


def _histogramdd_edges(x, bins, bounds):
    points = x.reshape(-1, x.shape[-1])
    return [_even_edges(*_outer_edges(points[:, d], None if bounds is None else bounds[2 * d:2 * d + 2]), n + 1)
            for d, n in enumerate(bins)]


def histogramdd_bin_edges(x, bins, *, range=None, weight=None, density=False):
    """aten._histogramdd_bin_edges: per dim (x's last), even edges over its
    range or the data's, as histogram's."""
    if not _histogram_covered(x, weight):
        return NotImplemented
    return _histogramdd_edges(x, bins, range)


def histogramdd_from_bin_cts(x, bins, *, range=None, weight=None, density=False):
    """aten._histogramdd_from_bin_cts: the counts of the even bins."""
    if not _histogram_covered(x, weight):
        return NotImplemented
    return _histogram(x.reshape(-1, x.shape[-1]), _histogramdd_edges(x, bins, range), weight, density)


def histogramdd_from_bin_tensors(x, bins, *, weight=None, density=False):
    """aten._histogramdd_from_bin_tensors: the counts between given edges."""
    if not _histogram_covered(x, weight):
        return NotImplemented
    return _histogram(x.reshape(-1, x.shape[-1]), list(bins), weight, density)


def _direct_distances(x1, x2, p: float):
    """||x1_i - x2_j||_p over the last dim, elementwise as eager's direct kernel."""
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == math.inf:
        return diff.amax(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return diff.square().sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


def cdist(x1, x2, p, compute_mode=None):
    """aten._cdist_forward: for p = 2 with more than 25 rows (or
    compute_mode 1), eager's matmul form sqrt(max(|x|^2 + |y|^2 - 2 x.y, 0))
    built exactly as eager builds it; else the direct differences."""
    if not x1.is_floating_point():
        return NotImplemented
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and (compute_mode == 1 or (compute_mode in (None, 0) and (r1 > 25 or r2 > 25))):
        n1 = x1.pow(2).sum(-1, keepdim=True)
        n2 = x2.pow(2).sum(-1, keepdim=True)
        a = torch.cat([x1 * -2, n1, torch.ones_like(n1)], -1)
        b = torch.cat([x2, torch.ones_like(n2), n2], -1)
        return torch.matmul(a, b.mT).clamp_min(0).sqrt()
    return _direct_distances(x1, x2, p)


def pdist(x, p=2):
    """aten._pdist_forward: the distances of row pairs i < j, row-major (the
    upper triangle of the direct distance matrix, row by row)."""
    n = x.shape[0]
    if not x.is_floating_point() or not isinstance(n, int) or n > 64:
        return NotImplemented
    d = _direct_distances(x, x, p)
    if n < 2:
        return d.reshape(-1)[:0]
    return torch.cat([d[i, i + 1:] for i in range(n - 1)])


def frexp(x):
    """aten.frexp.Tensor: x = m 2^e with 0.5 <= |m| < 1 (computed in float64,
    where 2^e of a float32 subnormal is normal); 0, inf and NaN give (x, 0)."""
    if not x.is_floating_point() or x.dtype == torch.float64:
        return NotImplemented
    z = x.double()
    a = z.abs()
    regular = (a > 0) & (a < math.inf)
    safe = torch.where(regular, a, torch.ones_like(a))
    e = torch.floor(torch.log2(safe)) + 1   # log2 may be one off near powers of two: fixed below
    m = _scale_by_pow2(safe, -e)
    e = torch.where(m >= 1, e + 1, torch.where(m < 0.5, e - 1, e))
    e = torch.where(regular, e, torch.zeros_like(e))
    mantissa = torch.where(regular, _scale_by_pow2(z, -e), z)
    return mantissa.to(x.dtype), e.to(torch.int32)


def _scale_by_pow2(z, e):
    """z * 2^e, exactly, for float64 z and integer-valued |e| < 256 (enough
    for float32's exponents): 2^|e| as a product of exact powers of two
    picked by the bits of |e| (exp2 is an approximation here)."""
    a = e.abs().to(torch.int64)
    p = torch.ones_like(z)
    for bit in range(8):
        p = torch.where(((a >> bit) & 1) == 1, p * float(2 ** (1 << bit)), p)
    return torch.where(e < 0, z / p, z * p)


def gelu(x, approximate="none"):
    """aten.gelu with approximate="tanh", as eager computes it: torch-mlir's
    lowering uses 0.797724 for sqrt(2 / pi) = 0.7978846 (5e-5 off at x = 1.3,
    silently). The exact (erf) form stays torch-mlir's."""
    if approximate != "tanh" or not x.is_floating_point():
        return NotImplemented
    y = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x   # eager's half kernels compute in f32
    inner = math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)
    return (0.5 * y * (1.0 + torch.tanh(inner))).to(x.dtype)


def sign(x):
    """aten.sign of floats as selects: torch-mlir's own decomposition
    compares with int scalars, which its folders get wrong on constants
    (sign(full_like(x, 5.0)) gave -1; 0 in float64), and trunc, written as
    sign(x) * floor(|x|), with it. NaN and zeros give 0, as eager's."""
    if not x.is_floating_point():
        return NotImplemented
    one = torch.ones_like(x)
    return torch.where(x > 0.0, one, torch.where(x < 0.0, -one, torch.zeros_like(x)))


def trunc(x):
    """aten.trunc as ceil below 0, floor above (see sign)."""
    if not x.is_floating_point():
        return NotImplemented
    return torch.where(x < 0.0, torch.ceil(x), torch.floor(x))


def fmod_scalar(x, other):
    """aten.fmod.Scalar as fmod of a full tensor (torch-mlir lowers the
    Tensor form only)."""
    dtype = torch.result_type(x, other)   # fmod(int tensor, 2.5) is float
    return torch.fmod(x.to(dtype), torch.full_like(x, other, dtype=dtype))


def cumprod(x, dim, dtype=None):
    """aten.cumprod with a dtype: torch-mlir lowers only the form without one
    (masked.cumprod passes its input's own dtype: "unsupported op
    aten.cumprod"). Eager converts the input to that dtype, then multiplies
    in it."""
    if dtype is None:
        return NotImplemented
    return torch.cumprod(x.to(dtype), dim)


def linear_cross_entropy_chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                                 label_smoothing, batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph,
                                 compute_input_grad, compute_linear_weight_grad, compute_linear_bias_grad):
    """torch_nn._linear_cross_entropy_batch_chunked (F.linear_cross_entropy,
    mean / sum): the loss as one linear and one cross entropy (the batch
    chunks only bound training's peak memory), and the gradients it
    precomputes for backward as eager's empty tensors when not asked for;
    when asked for (training), left to the op."""
    if compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad:
        return NotImplemented
    logits = torch.nn.functional.linear(input, linear_weight, linear_bias)
    loss = torch.nn.functional.cross_entropy(logits, target, weight=weight, reduction=reduction,
                                             ignore_index=ignore_index, label_smoothing=label_smoothing)
    empty = functools.partial(torch.empty, dtype=input.dtype)
    return loss.to(input.dtype), empty((0, 0)), empty((0, 0)), empty((0,))


def linear_cross_entropy_chunked_none(input, linear_weight, target, linear_bias, weight, ignore_index,
                                      batch_chunk_size, acc_policy, acc_dtype):
    """torch_nn._linear_cross_entropy_batch_chunked_no_reduction: the
    per-sample losses of one linear and one cross entropy."""
    logits = torch.nn.functional.linear(input, linear_weight, linear_bias)
    return torch.nn.functional.cross_entropy(logits, target, weight=weight, reduction="none",
                                             ignore_index=ignore_index).to(input.dtype)


def _linear_cross_entropy_ops() -> dict:
    """Those two custom ops, where this torch has them (registered when
    torch.nn's linear_cross_entropy module is imported)."""
    try:
        import torch.nn.modules.linear_cross_entropy  # noqa: F401
        ops = torch.ops.torch_nn
        return {ops._linear_cross_entropy_batch_chunked.default: linear_cross_entropy_chunked,
                ops._linear_cross_entropy_batch_chunked_no_reduction.default: linear_cross_entropy_chunked_none}
    except (ImportError, AttributeError):
        return {}


DECOMPOSITIONS = {
    aten.fractional_max_pool2d.default: fractional_max_pool,
    aten.fractional_max_pool3d.default: fractional_max_pool,
    aten.fmod.Scalar: fmod_scalar,
    aten.sign.default: sign,
    aten.trunc.default: trunc,
    aten.gelu.default: gelu,
    aten.pow.Tensor_Tensor: pow_tensors,
    aten.pow.Scalar: lambda base, exponent: pow_tensors(torch.full_like(exponent, base, dtype=torch.result_type(
        base, exponent)), exponent) if torch.result_type(base, exponent).is_floating_point else NotImplemented,
    aten.isclose.default: isclose,
    aten.searchsorted.Tensor: searchsorted,
    aten.histc.default: histc,
    aten.histogram.bin_ct: histogram_bin_ct,
    aten.histogram.bins_tensor: histogram_bins_tensor,
    aten._histogramdd_bin_edges.default: histogramdd_bin_edges,
    aten._histogramdd_from_bin_cts.default: histogramdd_from_bin_cts,
    aten._histogramdd_from_bin_tensors.default: histogramdd_from_bin_tensors,
    aten._cdist_forward.default: cdist,
    aten._pdist_forward.default: pdist,
    aten.frexp.Tensor: frexp,
    aten.nonzero_static.default: nonzero_static,
    aten.addbmm.default: addbmm,
    aten.resize.default: resize,
    aten.empty_strided.default: empty_strided,
    aten.new_empty_strided.default: new_empty_strided,
    aten.empty_permuted.default: empty_permuted,
    aten.put.default: put,
    aten.roll.default: roll,
    aten.cumprod.default: cumprod,
    aten.adaptive_max_pool2d.default: adaptive_max_pool2d,
    aten.adaptive_max_pool1d.default: adaptive_max_pool1d,
    aten.im2col.default: im2col,
    aten.grid_sampler_3d.default: grid_sampler_3d,
    aten._embedding_bag.default: _embedding_bag,
    aten._embedding_bag_forward_only.default: functools.partial(_embedding_bag, forward_only=True),
    aten._upsample_bilinear2d_aa.default: upsample_bilinear2d_aa,
    aten.segment_reduce.default: segment_reduce,
    aten.angle.default: angle,
    aten.isfinite.default: isfinite,
    aten.hypot.default: hypot,
    aten.erfc.default: erfc,
    aten.special_erfcx.default: erfcx,
    aten.lgamma.default: lgamma,
    aten.digamma.default: digamma,
    aten.i0.default: _bessel(0, scaled=False),
    aten.special_i0e.default: _bessel(0, scaled=True),
    aten.special_i1.default: _bessel(1, scaled=False),
    aten.special_i1e.default: _bessel(1, scaled=True),
    aten.special_spherical_bessel_j0.default: spherical_bessel_j0,
    aten.pow.Tensor_Scalar: pow_integer,
    aten.clamp.default: clamp,
    aten.clamp.Tensor: clamp,
    aten.clamp_min.default: clamp_min,
    aten.clamp_min.Tensor: clamp_min,
    aten.clamp_max.default: clamp_max,
    aten.clamp_max.Tensor: clamp_max,
    aten.hardtanh.default: hardtanh,
    aten.maximum.default: maximum,
    aten.minimum.default: minimum,
    aten.fmax.default: fmax,
    aten.fmin.default: fmin,
    aten.max_pool2d_with_indices.default: max_pool2d_with_indices,
    aten.max_pool3d_with_indices.default: _unbatched(aten.max_pool3d_with_indices.default, 3),
    aten.avg_pool2d.default: _unbatched(aten.avg_pool2d.default, 2),
    aten.avg_pool3d.default: _unbatched(aten.avg_pool3d.default, 3),
    aten.eq.Tensor: _self_comparison(True),
    aten.le.Tensor: _self_comparison(True),
    aten.ge.Tensor: _self_comparison(True),
    aten.ne.Tensor: _self_comparison(False),
    aten.cummax.default: cummax,
    aten.cummin.default: cummin,
    aten.median.default: median,
    aten.copysign.Tensor: copysign,
    aten.gcd.default: gcd,
    aten.lcm.default: lcm,
    aten.nextafter.default: nextafter,
    aten.linalg_norm.default: linalg_norm,
    aten.linalg_norm.ord_str: linalg_norm,
    aten.diagonal_scatter.default: diagonal_scatter,
    aten.as_strided_copy.default: as_strided_copy,
    aten.as_strided_scatter.default: as_strided_scatter,
    aten.signbit.default: signbit,
    aten.index_reduce.default: index_reduce,
    aten.scatter.reduce: scatter_with_reduce,
    aten.scatter.value_reduce: scatter_with_reduce,
    aten.argmax.default: _arg_extreme_of_scalar,
    aten.argmin.default: _arg_extreme_of_scalar,
    aten.amax.default: _extreme_of_scalar,
    aten.amin.default: _extreme_of_scalar,
    aten.logsumexp.default: _logsumexp_of_scalar,
    aten.all.default: _all_of_scalar,
    aten.all.dim: _all_of_scalar,
    aten.any.default: _all_of_scalar,
    aten.any.dim: _all_of_scalar,
    aten.median.dim: median_dim,
    aten.mode.default: mode,
    aten.nanmedian.default: nanmedian,
    aten.nanmedian.dim: nanmedian_dim,
}


def _from_torch(*ops):
    """torch._decomp's own decompositions of `ops` (views then a copy, FFT
    shifts as rolls, addmv as a matmul): they use only ops torch-mlir lowers."""
    from torch._decomp import decomposition_table
    table = {}
    for packet in ops:
        for name in packet.overloads():
            overload = getattr(packet, name)
            if overload in decomposition_table:
                table[overload] = decomposition_table[overload]
    return table


DECOMPOSITIONS.update(_linear_cross_entropy_ops())
DECOMPOSITIONS.update(_from_torch(
    aten.permute_copy, aten.view_copy, aten.unbind_copy, aten.narrow_copy,
    aten.fft_fftshift, aten.fft_ifftshift, aten.addmv, aten.dist,
    aten._batch_norm_with_update_functional))
