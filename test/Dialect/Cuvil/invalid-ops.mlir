// RUN: cuvil-opt %s --split-input-file --verify-diagnostics
// One test per op verification / shape-inference rule.

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{cuvil.matmul needs operands of rank >= 2, got lhs rank 1 and rhs rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @matmul_dtype(%a: tensor<2x8xf32>, %b: tensor<8x4xf16>) {
  // expected-error @+2 {{cuvil.matmul operands must share an element type (lhs f32, rhs f16)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b : tensor<2x8xf32>, tensor<8x4xf16> -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<2x8xf32>, %b: tensor<7x4xf32>) {
  // expected-error @+2 {{cuvil.matmul contracting dims differ: lhs [2, 8] has K = 8, rhs [7, 4] has K = 7}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b : tensor<2x8xf32>, tensor<7x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_k_transposed(%a: tensor<2x8xf32>, %b: tensor<4x7xf32>) {
  // expected-error @+2 {{rhs [4, 7] has K = 7 (transpose_b)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b {transpose_b} : tensor<2x8xf32>, tensor<4x7xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) {
  // expected-error @+2 {{incompatible broadcast: lhs batch [3] and rhs batch [5] differ at result dim 0 (3 vs 5)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b : tensor<3x2x8xf32>, tensor<5x8x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'cuvil.matmul' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x5xf32>'}}
  %0 = cuvil.matmul %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x5xf32>
  return
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 1, 1, 1, 1, 1, 1, 1, 1], col_idx = [0]}>
func.func @matmul_rhs_layout(%a: tensor<2x8xf32>, %b: tensor<8x4xf32, #csr>) {
  // expected-error @+2 {{cuvil.matmul rhs must be a dense tensor here; convert it with cuvil.to_dense first}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.matmul %a, %b : tensor<2x8xf32>, tensor<8x4xf32, #csr> -> tensor<2x4xf32>
  return
}

// -----

func.func @add_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{incompatible broadcast: lhs [4, 3] and rhs [4] differ at result dim 1 (3 vs 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.add %a, %b : tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @mul_dtype(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+2 {{cuvil.mul operands must share an element type (lhs f32, rhs i32); insert cuvil.dtype_cast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.mul %a, %b : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'cuvil.softmax' op axis 2 is out of range for input of rank 2}}
  %0 = cuvil.softmax %a {axis = 2 : i64} : tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_rank(%x: tensor<4x3xf32>, %w: tensor<1x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{cuvil.layer_norm weight must be 1-D, got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.layer_norm %x, %w, %b : tensor<4x3xf32>, tensor<1x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_size(%x: tensor<4x3xf32>, %w: tensor<3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{cuvil.layer_norm bias has 5 elements but the input's last dim is 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.layer_norm %x, %w, %b : tensor<4x3xf32>, tensor<3xf32>, tensor<5xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x16x8xf32>, %k: tensor<16x8xf32>) {
  // expected-error @+2 {{cuvil.attention query, key and value must have one rank >= 2, got 3, 2, 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.attention %q, %k, %q : tensor<2x16x8xf32>, tensor<16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @attention_result_rank(%q: tensor<16x8xf32>, %m: tensor<16x16xf32>) {
  // A rank-0 result with a mask crashed the verifier (found by cuvil-fuzz).
  // expected-error @+1 {{'cuvil.attention' op query, key and result must have rank >= 2, got 2, 2, 0}}
  %0 = cuvil.attention %q, %q, %q mask(%m : tensor<16x16xf32>) : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<f32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<16x8xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+2 {{cuvil.attention head dim differs: query [16, 8] vs key [16, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.attention %q, %k, %q : tensor<16x8xf32>, tensor<16x4xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @attention_kv_len(%q: tensor<16x8xf32>, %k: tensor<12x8xf32>, %v: tensor<10x8xf32>) {
  // expected-error @+2 {{cuvil.attention key and value sequence lengths differ: key [12, 8] vs value [10, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = cuvil.attention %q, %k, %v : tensor<16x8xf32>, tensor<12x8xf32>, tensor<10x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<16x8xf32>, %m: tensor<16x15xf32>) {
  // expected-error @+1 {{incompatible broadcast: mask [16, 15] and scores [16, 16] differ at result dim 1 (15 vs 16)}}
  %0 = cuvil.attention %q, %q, %q mask(%m : tensor<16x15xf32>) : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<16x8xf32>, %m: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'cuvil.attention' op mask [2, 16, 16] must broadcast to the scores shape [16, 16]}}
  %0 = cuvil.attention %q, %q, %q mask(%m : tensor<2x16x16xf32>) : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @attention_layout(%q: tensor<16x8xf32>) {
  // expected-error @+1 {{'cuvil.attention' op layout does not fit the [S, T] = [16, 16] scores: block size 3 does not divide the rows (16)}}
  %0 = cuvil.attention %q, %q, %q {layout = #cuvil.block_masked<{block = [3, 4], row_ptr = [0, 0, 0, 0, 0, 0], col_idx = []}>} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<16x8xf32>) {
  // expected-error @+1 {{'cuvil.attention' op scale must be positive, got -1}}
  %0 = cuvil.attention %q, %q, %q {scale = -1.0 : f64} : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'cuvil.dtype_cast' op result shape [3, 4] must equal input shape [4, 3]}}
  %0 = cuvil.dtype_cast %x : tensor<4x3xf32> to tensor<3x4xf16>
  return
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 1, 1], col_idx = [0]}>
func.func @cast_layout(%x: tensor<2x3xf32, #csr>) {
  // expected-error @+1 {{'cuvil.dtype_cast' op must not change the layout; use cuvil.to_layout / cuvil.to_dense}}
  %0 = cuvil.dtype_cast %x : tensor<2x3xf32, #csr> to tensor<2x3xf16>
  return
}

// -----

func.func @to_layout_missing(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.to_layout' op encoded side must carry #cuvil.sparse_csr or #cuvil.block_masked}}
  %0 = cuvil.to_layout %x : tensor<2x3xf32> to tensor<2x3xf32>
  return
}

// -----

func.func @to_dense_missing(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.to_dense' op encoded side must carry #cuvil.sparse_csr or #cuvil.block_masked}}
  %0 = cuvil.to_dense %x : tensor<2x3xf32> to tensor<2x3xf32>
  return
}

// -----

func.func @dot_u8s8_lanes(%acc: vector<8xi32>, %a: vector<8xi32>, %b: vector<8xi32>) {
  // expected-error @+1 {{operand #0 must be vector of 32-bit signless integer values of length 16}}
  %r = cuvil.x86.dot_u8s8 %acc, %a, %b : vector<8xi32>
  return
}
