# RUN: %python %s | FileCheck %s
# Python bindings of the Cuvil layout attributes: built from numpy masks,
# printed, fields read back, used as tensor encodings; invalid patterns raise
# ValueError with the verifier's message.
import numpy as np

from cuvil.dialects import cuvil as cv
from cuvil.ir import Attribute, Context, F32Type, Location, RankedTensorType


def run(fn):
    print(f"TEST: {fn.__name__}")
    with Context(), Location.unknown():
        fn()
    return fn


# CHECK-LABEL: TEST: sparse_csr_from_mask
# CHECK: #cuvil.sparse_csr<{row_ptr = [0, 2, 2, 4], col_idx = [1, 3, 0, 1]}>
# CHECK: row_ptr [0, 2, 2, 4] col_idx [1, 3, 0, 1]
# CHECK: round trip True
@run
def sparse_csr_from_mask():
    mask = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0]], dtype=bool)
    attr = cv.sparse_csr_from_mask(mask)
    print(attr)
    print("row_ptr", attr.row_ptr, "col_idx", attr.col_idx)
    print("round trip", bool((cv.csr_to_mask(attr, mask.shape) == mask).all()))


# CHECK-LABEL: TEST: block_masked_from_mask
# CHECK: #cuvil.block_masked<{block = [32, 16], row_ptr = [0, 1, 3], col_idx = [0, 0, 1]}>
# CHECK: block [32, 16] row_ptr [0, 1, 3] col_idx [0, 0, 1]
# CHECK: #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1], col_idx = [0]}>
@run
def block_masked_from_mask():
    attr = cv.block_masked_from_mask(np.tril(np.ones((2, 2), dtype=bool)), block=(32, 16))
    print(attr)
    print("block", attr.block, "row_ptr", attr.row_ptr, "col_idx", attr.col_idx)
    print(cv.block_masked_from_mask(np.ones((1, 1), dtype=bool)))  # default block


# CHECK-LABEL: TEST: get_and_parse
# CHECK: #cuvil.sparse_csr<{row_ptr = [0, 1, 1], col_idx = [2]}>
# CHECK: parsed is sparse_csr: True, is block_masked: False
# CHECK: parsed fields [0, 1, 1] [2]
# CHECK: equal True
# CHECK: #cuvil.block_masked<{block = [2, 2], row_ptr = [0], col_idx = []}>
@run
def get_and_parse():
    attr = cv.SparseCSRAttr.get([0, 1, 1], [2])
    print(attr)
    parsed = Attribute.parse(str(attr))
    print(f"parsed is sparse_csr: {cv.SparseCSRAttr.isinstance(parsed)}, "
          f"is block_masked: {cv.BlockMaskedAttr.isinstance(parsed)}")
    print("parsed fields", cv.SparseCSRAttr(parsed).row_ptr, cv.SparseCSRAttr(parsed).col_idx)
    print("equal", parsed == attr)
    print(cv.BlockMaskedAttr.get([2, 2], [0], []))     # no block rows


# CHECK-LABEL: TEST: as_encoding
# CHECK: tensor<3x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 1, 2], col_idx = [0, 3]}>>
# CHECK: encoding fields [0, 1, 1, 2] [0, 3]
# CHECK: tensor<2x8x8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>
# CHECK: shape mismatch: #cuvil.sparse_csr row_ptr must have rows + 1 = 3 entries, got 4
@run
def as_encoding():
    mask = np.zeros((3, 4), dtype=bool)
    mask[0, 0] = mask[2, 3] = True
    t = RankedTensorType.get([3, 4], F32Type.get(), cv.sparse_csr_from_mask(mask))
    print(t)
    enc = cv.SparseCSRAttr(t.encoding)
    print("encoding fields", enc.row_ptr, enc.col_idx)
    print(RankedTensorType.get([2, 8, 8], F32Type.get(),
                               cv.block_masked_from_mask(np.eye(2, dtype=bool))))
    try:
        RankedTensorType.get([2, 4], F32Type.get(), cv.sparse_csr_from_mask(mask))
    except Exception as err:  # noqa: BLE001 - the type verifier's message
        print("shape mismatch:", str(err).splitlines()[-1].split("error: unknown: ")[-1])


# CHECK-LABEL: TEST: invalid_patterns
# CHECK: ValueError: invalid #cuvil.sparse_csr: row_ptr must start at 0, got 1
# CHECK: ValueError: invalid #cuvil.sparse_csr: row_ptr must be non-decreasing, but row_ptr[2] = 1 < row_ptr[1] = 2
# CHECK: ValueError: invalid #cuvil.sparse_csr: row_ptr must end at the number of stored entries (1), got 2
# CHECK: ValueError: invalid #cuvil.sparse_csr: col_idx must be strictly increasing within a row: row 0 has 3 then 1
# CHECK: ValueError: invalid #cuvil.sparse_csr: col_idx[0] = -1 is negative
# CHECK: ValueError: invalid #cuvil.sparse_csr: row_ptr must have rows + 1 entries, got none
# CHECK: ValueError: invalid #cuvil.block_masked: block sizes must be positive, got [0, 4]
# CHECK: ValueError: block must be [rows, cols]
# CHECK: ValueError: invalid #cuvil.block_masked: row_ptr must end at the number of stored blocks (2), got 1
# CHECK: ValueError: mask must be 2-D, got shape (4,)
# CHECK-NOT: no error
@run
def invalid_patterns():
    cases = [
        lambda: cv.SparseCSRAttr.get([1, 2], [0]),
        lambda: cv.SparseCSRAttr.get([0, 2, 1], [0, 1]),
        lambda: cv.SparseCSRAttr.get([0, 2], [0]),
        lambda: cv.SparseCSRAttr.get([0, 2], [3, 1]),
        lambda: cv.SparseCSRAttr.get([0, 1], [-1]),
        lambda: cv.SparseCSRAttr.get([], []),
        lambda: cv.BlockMaskedAttr.get([0, 4], [0, 1], [0]),
        lambda: cv.BlockMaskedAttr.get([4], [0, 1], [0]),
        lambda: cv.BlockMaskedAttr.get([2, 2], [0, 1], [0, 1]),
        lambda: cv.sparse_csr_from_mask(np.ones(4, dtype=bool)),
    ]
    for case in cases:
        try:
            case()
            print("no error")
        except ValueError as err:
            print(f"ValueError: {err}")
