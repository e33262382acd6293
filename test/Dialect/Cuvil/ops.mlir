// RUN: cuvil-opt %s --split-input-file | cuvil-opt --split-input-file | FileCheck %s
// Round trip of every Cuvil op and attribute (print, parse again, compare).

// CHECK-LABEL: func @matmul_batched
// CHECK: cuvil.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK: cuvil.matmul %{{.*}}, %{{.*}} {transpose_b} : tensor<?x4x8xf32>, tensor<1x16x8xf32> -> tensor<?x4x16xf32>
func.func @matmul_batched(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x4x8xf32>, %d: tensor<1x16x8xf32>)
    -> (tensor<2x4x16xf32>, tensor<?x4x16xf32>) {
  %0 = cuvil.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %1 = cuvil.matmul %c, %d {transpose_b} : tensor<?x4x8xf32>, tensor<1x16x8xf32> -> tensor<?x4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<?x4x16xf32>
}

// -----

// CHECK-LABEL: func @elementwise
// CHECK: cuvil.add %{{.*}}, %{{.*}} : tensor<?x4x16xf32>, tensor<16xf32> -> tensor<?x4x16xf32>
// CHECK: cuvil.sub %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK: cuvil.mul
// CHECK: cuvil.div
// CHECK: cuvil.max
// CHECK: cuvil.relu
// CHECK: cuvil.gelu %{{.*}} {tanh_approx} : tensor<4x16xf32>
// CHECK: cuvil.tanh
// CHECK: cuvil.exp
func.func @elementwise(%a: tensor<?x4x16xf32>, %b: tensor<16xf32>, %c: tensor<4x1xf32>, %d: tensor<1x16xf32>) -> tensor<4x16xf32> {
  %0 = cuvil.add %a, %b : tensor<?x4x16xf32>, tensor<16xf32> -> tensor<?x4x16xf32>
  %1 = cuvil.sub %c, %d : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  %2 = cuvil.mul %1, %d : tensor<4x16xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  %3 = cuvil.div %2, %c : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %4 = cuvil.max %3, %2 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %5 = cuvil.relu %4 : tensor<4x16xf32>
  %6 = cuvil.gelu %5 {tanh_approx} : tensor<4x16xf32>
  %7 = cuvil.tanh %6 : tensor<4x16xf32>
  %8 = cuvil.exp %7 : tensor<4x16xf32>
  return %8 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func @norms
// CHECK: cuvil.softmax %{{.*}} {axis = 1 : i64} : tensor<2x?xf32>
// CHECK: cuvil.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999998E-13 : f64} : tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<2x?xf32>
func.func @norms(%x: tensor<2x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<2x?xf32> {
  %0 = cuvil.softmax %x {axis = 1 : i64} : tensor<2x?xf32>
  %1 = cuvil.layer_norm %0, %w, %b {epsilon = 1.0e-12 : f64} : tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  return %1 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @attention
// CHECK: cuvil.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 1.250000e-01 : f64} : tensor<2x4x16x8xf32>
// CHECK: cuvil.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x16x16xf32>)
// CHECK: cuvil.attention %{{.*}}, %{{.*}}, %{{.*}} {layout = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2, 3, 4], col_idx = [0, 1, 2, 3]}>}
func.func @attention(%q: tensor<2x4x16x8xf32>, %m: tensor<1x1x16x16xf32>) -> tensor<2x4x16x8xf32> {
  %0 = cuvil.attention %q, %q, %q {causal, scale = 0.125 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %1 = cuvil.attention %0, %0, %0 mask(%m : tensor<1x1x16x16xf32>) : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %2 = cuvil.attention %1, %1, %1 {layout = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2, 3, 4], col_idx = [0, 1, 2, 3]}>} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return %2 : tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func @casts
// CHECK: cuvil.dtype_cast %{{.*}} : tensor<4x?xf32> to tensor<4x?xbf16>
// CHECK: cuvil.dtype_cast %{{.*}} {rounding = #cuvil<rounding toward_zero>} : tensor<4x?xf32> to tensor<4x?xi8>
func.func @casts(%x: tensor<4x?xf32>) -> (tensor<4x?xbf16>, tensor<4x?xi8>) {
  %0 = cuvil.dtype_cast %x : tensor<4x?xf32> to tensor<4x?xbf16>
  %1 = cuvil.dtype_cast %x {rounding = #cuvil<rounding toward_zero>} : tensor<4x?xf32> to tensor<4x?xi8>
  return %0, %1 : tensor<4x?xbf16>, tensor<4x?xi8>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
#empty = #cuvil.sparse_csr<{row_ptr = [0, 0], col_idx = []}>
// CHECK-LABEL: func @layouts
// CHECK-SAME: tensor<1x5xf32, #cuvil.sparse_csr<{row_ptr = [0, 0], col_idx = []}>>
// CHECK: cuvil.to_layout %{{.*}} : tensor<4x8xf32> to tensor<4x8xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>>
// CHECK: cuvil.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32, #cuvil.sparse_csr<{{.*}}>>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK: cuvil.to_dense %{{.*}} : tensor<4x8xf32, #cuvil.sparse_csr<{{.*}}>> to tensor<4x8xf32>
func.func @layouts(%x: tensor<4x8xf32>, %b: tensor<8x3xf32>, %e: tensor<1x5xf32, #empty>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %s = cuvil.to_layout %x : tensor<4x8xf32> to tensor<4x8xf32, #csr>
  %0 = cuvil.matmul %s, %b : tensor<4x8xf32, #csr>, tensor<8x3xf32> -> tensor<4x3xf32>
  %1 = cuvil.to_dense %s : tensor<4x8xf32, #csr> to tensor<4x8xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x8xf32>
}
