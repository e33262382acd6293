// RUN: cuvil-opt %s --split-input-file --verify-diagnostics
// One test per layout verification rule.

// expected-error @+1 {{row_ptr must start at 0, got 1}}
func.func private @csr_start(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [1, 2, 3], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{row_ptr must be non-decreasing, but row_ptr[2] = 1 < row_ptr[1] = 2}}
func.func private @csr_decreasing(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 1], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{row_ptr must end at the number of stored entries (3), got 2}}
func.func private @csr_end(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [0, 1, 2]}>>)

// -----

// expected-error @+1 {{col_idx must be strictly increasing within a row: row 0 has 3 then 1}}
func.func private @csr_unsorted(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 2], col_idx = [3, 1]}>>)

// -----

// expected-error @+1 {{col_idx[0] = -1 is negative}}
func.func private @csr_negative(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 1], col_idx = [-1]}>>)

// -----

// expected-error @+1 {{#cuvil.sparse_csr row_ptr must have rows + 1 = 4 entries, got 3}}
func.func private @csr_rows(tensor<3x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{col_idx[1] = 4 is out of range for 4 columns}}
func.func private @csr_col_range(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [0, 4]}>>)

// -----

// expected-error @+1 {{#cuvil.sparse_csr needs a rank-2 tensor, got rank 3}}
func.func private @csr_rank(tensor<1x2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{expected 'col_idx'}}
func.func private @csr_syntax(tensor<2x4xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], cols = [0, 1]}>>)

// -----

// expected-error @+1 {{block must have 2 sizes [rows, cols], got 3}}
func.func private @bm_block_rank(tensor<8x8xf32, #cuvil.block_masked<{block = [4, 4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{block sizes must be positive, got [0, 4]}}
func.func private @bm_block_positive(tensor<8x8xf32, #cuvil.block_masked<{block = [0, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{block size 4 does not divide the rows (6)}}
func.func private @bm_rows_divide(tensor<6x8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{block size 3 does not divide the cols (8)}}
func.func private @bm_cols_divide(tensor<8x8xf32, #cuvil.block_masked<{block = [4, 3], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{#cuvil.block_masked row_ptr must have block rows + 1 = 3 entries, got 2}}
func.func private @bm_row_ptr(tensor<8x8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1], col_idx = [0]}>>)

// -----

// expected-error @+1 {{col_idx[1] = 2 is out of range for 2 block columns}}
func.func private @bm_col_range(tensor<8x8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 2]}>>)

// -----

// expected-error @+1 {{#cuvil.block_masked needs rank >= 2, got rank 1}}
func.func private @bm_rank(tensor<8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)

// -----

// expected-error @+1 {{#cuvil.block_masked needs static rows}}
func.func private @bm_dynamic(tensor<?x8xf32, #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>>)
