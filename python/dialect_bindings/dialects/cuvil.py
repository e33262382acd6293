"""Python bindings for the Cuvil dialect: op builders and layout attributes.

Layouts can be built from numpy: ``sparse_csr_from_mask(mask)`` and
``block_masked_from_mask(block_mask, block)`` take boolean arrays.
"""
import numpy as _np

from ._cuvil_ops_gen import *  # noqa: F401,F403
from ._cuvil_enum_gen import *  # noqa: F401,F403
from .._mlir_libs._cuvilDialects.cuvil import BlockMaskedAttr, SparseCSRAttr  # noqa: F401


def _csr_of(mask):
    mask = _np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {mask.shape}")
    counts = mask.sum(axis=1)
    row_ptr = [0] + _np.cumsum(counts).tolist()
    col_idx = _np.nonzero(mask)[1].tolist()  # row-major: sorted within rows
    return row_ptr, col_idx


def sparse_csr_from_mask(mask, context=None):
    """#cuvil.sparse_csr storing the True entries of a 2-D boolean mask."""
    row_ptr, col_idx = _csr_of(mask)
    return SparseCSRAttr.get(row_ptr, col_idx, context=context)


def block_masked_from_mask(block_mask, block=(4, 4), context=None):
    """#cuvil.block_masked whose present blocks are the True entries of
    ``block_mask`` (shape [rows / block[0], cols / block[1]])."""
    row_ptr, col_idx = _csr_of(block_mask)
    return BlockMaskedAttr.get(list(block), row_ptr, col_idx, context=context)


def csr_to_mask(attr, shape):
    """Dense boolean mask of a #cuvil.sparse_csr (or block-level mask of a
    #cuvil.block_masked) pattern with `shape` rows x cols."""
    mask = _np.zeros(shape, dtype=bool)
    row_ptr, col_idx = attr.row_ptr, attr.col_idx
    for r in range(len(row_ptr) - 1):
        mask[r, col_idx[row_ptr[r]:row_ptr[r + 1]]] = True
    return mask
