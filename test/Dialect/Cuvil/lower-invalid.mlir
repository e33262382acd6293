// RUN: cuvil-opt %s --split-input-file --cuvil-lower-to-linalg --verify-diagnostics
// What the lowering refuses, with a message naming the op (instead of a
// crash, invalid IR, or a bare "failed to legalize").

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
func.func @to_dense_dynamic_cols(%a: tensor<?x?xf32, #csr>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'cuvil.to_dense' op of a #cuvil.sparse_csr tensor needs a static column count: the stored values do not determine it}}
  %0 = cuvil.to_dense %a : tensor<?x?xf32, #csr> to tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

#bm = #cuvil.block_masked<{block = [2, 2], row_ptr = [0, 1, 2], col_idx = [0, 1]}>
func.func @unary_on_encoded(%a: tensor<4x4xf32, #bm>) -> tensor<4x4xf32, #bm> {
  // expected-error @+1 {{'cuvil.exp' op on a tensor with a layout encoding cannot be lowered; convert it with cuvil.to_dense first}}
  %0 = cuvil.exp %a : tensor<4x4xf32, #bm>
  return %0 : tensor<4x4xf32, #bm>
}

// -----

#bm = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2], col_idx = [0, 1]}>
func.func @block_attention_dynamic_head_dim(%q: tensor<2x8x?xf32>) -> tensor<2x8x?xf32> {
  // expected-error @+1 {{'cuvil.attention' op with a layout needs static head dims}}
  %0 = cuvil.attention %q, %q, %q {layout = #bm} : tensor<2x8x?xf32>, tensor<2x8x?xf32>, tensor<2x8x?xf32> -> tensor<2x8x?xf32>
  return %0 : tensor<2x8x?xf32>
}
