// RUN: cuvil-opt %s --split-input-file | cuvil-opt --split-input-file | FileCheck %s
// Round trip of every Cuvil op and attribute (print, parse again, compare).
// Each check is the op's whole printed form: operands bound to the function
// arguments or results they must be, attributes with their values, all types,
// so that a printer that drops or reorders any of them fails here.

// CHECK-LABEL: func @matmul_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<?x4x8xf32>, %[[D:.*]]: tensor<1x16x8xf32>)
// CHECK:         %[[R0:.*]] = cuvil.matmul %[[A]], %[[B]] : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %[[R1:.*]] = cuvil.matmul %[[C]], %[[D]] {transpose_b} : tensor<?x4x8xf32>, tensor<1x16x8xf32> -> tensor<?x4x16xf32>
// CHECK-NEXT:    return %[[R0]], %[[R1]] : tensor<2x4x16xf32>, tensor<?x4x16xf32>
func.func @matmul_batched(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<?x4x8xf32>, %d: tensor<1x16x8xf32>)
    -> (tensor<2x4x16xf32>, tensor<?x4x16xf32>) {
  %0 = cuvil.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %1 = cuvil.matmul %c, %d {transpose_b} : tensor<?x4x8xf32>, tensor<1x16x8xf32> -> tensor<?x4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<?x4x16xf32>
}

// -----

// CHECK-LABEL: func @elementwise
// CHECK-SAME:    (%[[A:.*]]: tensor<?x4x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[C:.*]]: tensor<4x1xf32>, %[[D:.*]]: tensor<1x16xf32>)
// CHECK:         %{{.*}} = cuvil.add %[[A]], %[[B]] : tensor<?x4x16xf32>, tensor<16xf32> -> tensor<?x4x16xf32>
// CHECK-NEXT:    %[[SUB:.*]] = cuvil.sub %[[C]], %[[D]] : tensor<4x1xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[MUL:.*]] = cuvil.mul %[[SUB]], %[[D]] : tensor<4x16xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[DIV:.*]] = cuvil.div %[[MUL]], %[[C]] : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[MAX:.*]] = cuvil.max %[[DIV]], %[[MUL]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[RELU:.*]] = cuvil.relu %[[MAX]] : tensor<4x16xf32>
// CHECK-NEXT:    %[[GELU:.*]] = cuvil.gelu %[[RELU]] {tanh_approx} : tensor<4x16xf32>
// CHECK-NEXT:    %[[TANH:.*]] = cuvil.tanh %[[GELU]] : tensor<4x16xf32>
// CHECK-NEXT:    %[[EXP:.*]] = cuvil.exp %[[TANH]] : tensor<4x16xf32>
// CHECK-NEXT:    return %[[EXP]] : tensor<4x16xf32>
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
// CHECK-SAME:    (%[[X:.*]]: tensor<2x?xf32>, %[[W:.*]]: tensor<?xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK:         %[[SM:.*]] = cuvil.softmax %[[X]] {axis = 1 : i64} : tensor<2x?xf32>
// CHECK-NEXT:    %[[LN:.*]] = cuvil.layer_norm %[[SM]], %[[W]], %[[B]] {epsilon = 9.9999999999999998E-13 : f64} : tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<2x?xf32>
// CHECK-NEXT:    return %[[LN]] : tensor<2x?xf32>
func.func @norms(%x: tensor<2x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<2x?xf32> {
  %0 = cuvil.softmax %x {axis = 1 : i64} : tensor<2x?xf32>
  %1 = cuvil.layer_norm %0, %w, %b {epsilon = 1.0e-12 : f64} : tensor<2x?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<2x?xf32>
  return %1 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @attention
// CHECK-SAME:    (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[M:.*]]: tensor<1x1x16x16xf32>)
// CHECK:         %[[A0:.*]] = cuvil.attention %[[Q]], %[[Q]], %[[Q]] {causal, scale = 1.250000e-01 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    %[[A1:.*]] = cuvil.attention %[[A0]], %[[A0]], %[[A0]] mask(%[[M]] : tensor<1x1x16x16xf32>) : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    %[[A2:.*]] = cuvil.attention %[[A1]], %[[A1]], %[[A1]] {layout = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2, 3, 4], col_idx = [0, 1, 2, 3]}>} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    return %[[A2]] : tensor<2x4x16x8xf32>
func.func @attention(%q: tensor<2x4x16x8xf32>, %m: tensor<1x1x16x16xf32>) -> tensor<2x4x16x8xf32> {
  %0 = cuvil.attention %q, %q, %q {causal, scale = 0.125 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %1 = cuvil.attention %0, %0, %0 mask(%m : tensor<1x1x16x16xf32>) : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  %2 = cuvil.attention %1, %1, %1 {layout = #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 2, 3, 4], col_idx = [0, 1, 2, 3]}>} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return %2 : tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func @casts
// CHECK-SAME:    (%[[X:.*]]: tensor<4x?xf32>)
// CHECK:         %[[BF:.*]] = cuvil.dtype_cast %[[X]] : tensor<4x?xf32> to tensor<4x?xbf16>
// CHECK-NEXT:    %[[I8:.*]] = cuvil.dtype_cast %[[X]] {rounding = #cuvil<rounding toward_zero>} : tensor<4x?xf32> to tensor<4x?xi8>
// CHECK-NEXT:    return %[[BF]], %[[I8]] : tensor<4x?xbf16>, tensor<4x?xi8>
func.func @casts(%x: tensor<4x?xf32>) -> (tensor<4x?xbf16>, tensor<4x?xi8>) {
  %0 = cuvil.dtype_cast %x : tensor<4x?xf32> to tensor<4x?xbf16>
  %1 = cuvil.dtype_cast %x {rounding = #cuvil<rounding toward_zero>} : tensor<4x?xf32> to tensor<4x?xi8>
  return %0, %1 : tensor<4x?xbf16>, tensor<4x?xi8>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>
#empty = #cuvil.sparse_csr<{row_ptr = [0, 0], col_idx = []}>
// CHECK-LABEL: func @layouts
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x3xf32>, %{{.*}}: tensor<1x5xf32, #cuvil.sparse_csr<{row_ptr = [0, 0], col_idx = []}>>)
// CHECK:         %[[S:.*]] = cuvil.to_layout %[[X]] : tensor<4x8xf32> to tensor<4x8xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>>
// CHECK-NEXT:    %[[MM:.*]] = cuvil.matmul %[[S]], %[[B]] : tensor<4x8xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %[[D:.*]] = cuvil.to_dense %[[S]] : tensor<4x8xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7], col_idx = [1, 3, 0, 2, 4, 1, 3]}>> to tensor<4x8xf32>
// CHECK-NEXT:    return %[[MM]], %[[D]] : tensor<4x3xf32>, tensor<4x8xf32>
func.func @layouts(%x: tensor<4x8xf32>, %b: tensor<8x3xf32>, %e: tensor<1x5xf32, #empty>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %s = cuvil.to_layout %x : tensor<4x8xf32> to tensor<4x8xf32, #csr>
  %0 = cuvil.matmul %s, %b : tensor<4x8xf32, #csr>, tensor<8x3xf32> -> tensor<4x3xf32>
  %1 = cuvil.to_dense %s : tensor<4x8xf32, #csr> to tensor<4x8xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x8xf32>
}
