"""Layout attributes from Python: #cuvil.sparse_csr / #cuvil.block_masked
built from numpy masks, their fields, use as tensor encodings and in ops,
and the errors for invalid patterns."""
import numpy as np
import pytest

from cuvil.dialects import cuvil as cv
from cuvil.ir import (Attribute, Context, F32Type, Location, MLIRError, Module,
                      RankedTensorType)
from cuvil import lowering


@pytest.fixture
def ctx():
    with Context() as context, Location.unknown():
        yield context


def reference_csr(mask):
    """CSR of a boolean mask, row by row (the straightforward way)."""
    row_ptr, col_idx = [0], []
    for row in mask:
        cols = [j for j, present in enumerate(row) if present]
        col_idx += cols
        row_ptr.append(len(col_idx))
    return row_ptr, col_idx


@pytest.mark.parametrize("shape,density", [((1, 1), 1.0), ((5, 7), 0.3), ((16, 3), 0.0),
                                           ((4, 64), 0.9), ((0, 3), 0.5)])
def test_sparse_csr_from_mask_matches_reference(ctx, shape, density):
    mask = np.random.default_rng(sum(shape)).random(shape) < density
    attr = cv.sparse_csr_from_mask(mask)
    assert isinstance(attr, cv.SparseCSRAttr)
    assert (attr.row_ptr, attr.col_idx) == reference_csr(mask)
    np.testing.assert_array_equal(cv.csr_to_mask(attr, shape), mask)


def test_masks_are_read_as_booleans(ctx):
    ints = np.array([[0, 2, 0], [-1, 0, 0]])
    assert cv.sparse_csr_from_mask(ints).col_idx == [1, 0]
    assert cv.sparse_csr_from_mask([[True, False], [False, True]]).row_ptr == [0, 1, 2]


@pytest.mark.parametrize("block", [(4, 4), (32, 16), (1, 8)])
def test_block_masked_from_mask(ctx, block):
    block_mask = np.random.default_rng(1).random((6, 5)) < 0.4
    attr = cv.block_masked_from_mask(block_mask, block)
    assert isinstance(attr, cv.BlockMaskedAttr)
    assert attr.block == list(block)
    assert (attr.row_ptr, attr.col_idx) == reference_csr(block_mask)
    np.testing.assert_array_equal(cv.csr_to_mask(attr, block_mask.shape), block_mask)
    assert str(attr).startswith(f"#cuvil.block_masked<{{block = [{block[0]}, {block[1]}]")


def test_attributes_are_uniqued_and_parse_back(ctx):
    a = cv.SparseCSRAttr.get([0, 2, 3], [0, 4, 1])
    b = cv.sparse_csr_from_mask(cv.csr_to_mask(a, (2, 5)))
    assert a == b and hash(a) == hash(b)
    parsed = Attribute.parse(str(a))
    assert cv.SparseCSRAttr.isinstance(parsed) and not cv.BlockMaskedAttr.isinstance(parsed)
    assert cv.SparseCSRAttr(parsed).col_idx == [0, 4, 1]
    bm = cv.BlockMaskedAttr.get([2, 4], [0, 1], [3])
    assert cv.BlockMaskedAttr(Attribute.parse(str(bm))).block == [2, 4]
    assert bm != cv.BlockMaskedAttr.get([4, 2], [0, 1], [3])


def test_explicit_context_argument():
    context = Context()
    attr = cv.SparseCSRAttr.get([0, 1], [0], context=context)
    assert attr.context is context
    attr = cv.block_masked_from_mask(np.ones((1, 1), bool), (2, 2), context=context)
    assert attr.context is context


@pytest.mark.parametrize("build,message", [
    (lambda: cv.SparseCSRAttr.get([1, 1], []), "row_ptr must start at 0, got 1"),
    (lambda: cv.SparseCSRAttr.get([0, 2, 1], [0, 1]), "row_ptr must be non-decreasing"),
    (lambda: cv.SparseCSRAttr.get([0, 3], [0, 1]),
     r"row_ptr must end at the number of stored entries \(2\), got 3"),
    (lambda: cv.SparseCSRAttr.get([0, 2], [1, 1]),
     "col_idx must be strictly increasing within a row: row 0 has 1 then 1"),
    (lambda: cv.SparseCSRAttr.get([0, 1], [-4]), r"col_idx\[0\] = -4 is negative"),
    (lambda: cv.BlockMaskedAttr.get([4, -1], [0], []), r"block sizes must be positive, got \[4, -1\]"),
    (lambda: cv.BlockMaskedAttr.get([4, 4, 4], [0], []), r"block must be \[rows, cols\]"),
    (lambda: cv.BlockMaskedAttr.get([4, 4], [0, 1, 1], [2, 3]),
     r"row_ptr must end at the number of stored blocks \(2\), got 1"),
    (lambda: cv.block_masked_from_mask(np.ones((2, 2, 2), bool)), r"mask must be 2-D"),
])
def test_invalid_patterns_raise_value_error(ctx, build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_encoding_checked_against_the_tensor_shape(ctx):
    csr = cv.sparse_csr_from_mask(np.eye(3, 5, dtype=bool))
    t = RankedTensorType.get([3, 5], F32Type.get(), csr)
    assert cv.SparseCSRAttr(t.encoding) == csr
    with pytest.raises(MLIRError, match=r"row_ptr must have rows \+ 1 = 5 entries, got 4"):
        RankedTensorType.get([4, 5], F32Type.get(), csr)
    with pytest.raises(MLIRError, match=r"col_idx\[2\] = 2 is out of range for 2 columns"):
        RankedTensorType.get([3, 2], F32Type.get(), csr)
    bm = cv.block_masked_from_mask(np.ones((2, 3), bool), (4, 4))
    assert str(RankedTensorType.get([7, 8, 12], F32Type.get(), bm)).startswith("tensor<7x8x12xf32")
    with pytest.raises(MLIRError, match=r"block size 4 does not divide the cols \(10\)"):
        RankedTensorType.get([8, 10], F32Type.get(), bm)


def test_attribute_built_in_python_drives_the_lowering(ctx):
    """An attention layout built from a numpy block mask, spliced into IR,
    lowers to a loop over exactly the present blocks."""
    block_mask = np.array([[1, 0], [1, 1]], bool)
    layout = cv.block_masked_from_mask(block_mask, (4, 4))
    ty = "tensor<2x8x16xf32>"
    module = Module.parse(f"""
      func.func @f(%q: {ty}) -> {ty} {{
        %0 = cuvil.attention %q, %q, %q {{layout = {layout}}} : {ty}, {ty}, {ty} -> {ty}
        return %0 : {ty}
      }}""")
    op = module.body.operations[0].regions[0].blocks[0].operations[0]
    assert cv.BlockMaskedAttr(op.attributes["layout"]).row_ptr == [0, 1, 3]
    lowering.cuvil_ops_to_linalg(module)
    text = str(module)
    assert "cuvil." not in text
    assert "dense<[0, 1, 3]> : tensor<3xindex>" in text      # row_ptr table
    assert "dense<[0, 0, 1]> : tensor<3xindex>" in text      # col_idx table
    assert text.count("scf.for") == 2                        # block rows, present blocks
