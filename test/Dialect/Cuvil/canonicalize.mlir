// RUN: cuvil-opt %s --split-input-file --canonicalize | FileCheck %s
// Folds and canonicalization patterns of the Cuvil ops.

// CHECK-LABEL: func.func @identities
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<4x8xi32>)
// CHECK-NOT:     cuvil.
// CHECK:         return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]]
func.func @identities(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xi32>) {
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %nz = arith.constant dense<-0.0> : tensor<4x8xf32>
  %o = arith.constant dense<1.0> : tensor<8xf32>
  %o2 = arith.constant dense<1.0> : tensor<4x8xf32>
  %zi = arith.constant dense<0> : tensor<4x8xi32>
  %oi = arith.constant dense<1> : tensor<4x8xi32>
  // add of -0.0 (either side; IEEE: x + -0.0 == x for every x), mul by one
  // (broadcast constant: result type is still x's), sub of +0.0, div by one,
  // max(x, x); integer add of 0.
  %0 = cuvil.add %x, %nz : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = cuvil.add %nz, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = cuvil.mul %o, %1 : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = cuvil.sub %2, %z : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = cuvil.div %3, %o2 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = cuvil.max %4, %4 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = cuvil.add %i, %zi : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  %7 = cuvil.mul %oi, %6 : tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
  return %0, %1, %2, %3, %5, %6, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xi32>
}

// -----

// Not identities: the broadcast would change the shape, zero on the left of
// a sub, one on the left of a div, and x + (+0.0) (it maps -0.0 to +0.0).
// CHECK-LABEL: func.func @not_identities
// CHECK:         cuvil.add
// CHECK:         cuvil.sub
// CHECK:         cuvil.div
// CHECK:         cuvil.mul
// CHECK:         cuvil.add
func.func @not_identities(%x: tensor<4x1xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %z = arith.constant dense<0.0> : tensor<4x8xf32>
  %o = arith.constant dense<1.0> : tensor<4x8xf32>
  %t = arith.constant dense<2.0> : tensor<4x8xf32>
  %0 = cuvil.add %x, %z : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = cuvil.sub %z, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = cuvil.div %o, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = cuvil.mul %y, %t : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = cuvil.add %y, %z : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A cast whose first step is exact collapses: i8 -> i32 -> f32 is i8 -> f32,
// f16 -> f32 -> bf16 is f16 -> bf16 (the outer rounding mode is kept); a
// cast to the same type folds away.
// CHECK-LABEL: func.func @cast_chains
// CHECK-SAME:    (%[[I:.*]]: tensor<4xi8>, %[[H:.*]]: tensor<4xf16>, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[A:.*]] = cuvil.dtype_cast %[[I]] : tensor<4xi8> to tensor<4xf32>
// CHECK:         %[[B:.*]] = cuvil.dtype_cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK:         %[[C:.*]] = cuvil.dtype_cast %[[H]] {rounding = #cuvil<rounding toward_zero>} : tensor<4xf16> to tensor<4xi8>
// CHECK:         return %[[A]], %[[B]], %[[C]], %[[X]]
func.func @cast_chains(%i: tensor<4xi8>, %h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xi8>, tensor<4xf32>) {
  %0 = cuvil.dtype_cast %i : tensor<4xi8> to tensor<4xi32>
  %1 = cuvil.dtype_cast %0 : tensor<4xi32> to tensor<4xf32>
  %2 = cuvil.dtype_cast %h : tensor<4xf16> to tensor<4xf32>
  %3 = cuvil.dtype_cast %2 : tensor<4xf32> to tensor<4xbf16>
  %4 = cuvil.dtype_cast %2 {rounding = #cuvil<rounding toward_zero>} : tensor<4xf32> to tensor<4xi8>
  %5 = cuvil.dtype_cast %x : tensor<4xf32> to tensor<4xf32>
  return %1, %3, %4, %5 : tensor<4xf32>, tensor<4xbf16>, tensor<4xi8>, tensor<4xf32>
}

// -----

// An inexact first step must stay: f32 -> f16 -> f32 rounds (and
// saturates to inf), f32 -> i32 -> f32 truncates, f16 -> bf16 -> f32 rounds.
// CHECK-LABEL: func.func @cast_chains_kept
// CHECK-COUNT-6: cuvil.dtype_cast
// CHECK-NOT:     cuvil.dtype_cast
func.func @cast_chains_kept(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = cuvil.dtype_cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = cuvil.dtype_cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = cuvil.dtype_cast %x : tensor<4xf32> to tensor<4xi32>
  %3 = cuvil.dtype_cast %2 : tensor<4xi32> to tensor<4xf32>
  %4 = cuvil.dtype_cast %h : tensor<4xf16> to tensor<4xbf16>
  %5 = cuvil.dtype_cast %4 : tensor<4xbf16> to tensor<4xf32>
  return %1, %3, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

#csr = #cuvil.sparse_csr<{row_ptr = [0, 1, 1], col_idx = [2]}>
#csr2 = #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [2, 0]}>
// to_layout(to_dense(x)) is x for the same layout; with another layout it
// drops entries, so it stays.
// CHECK-LABEL: func.func @layout_roundtrip
// CHECK-SAME:    (%[[S:.*]]: tensor<2x3xf32, #cuvil.sparse_csr<{{.*}}>>)
// CHECK:         %[[D:.*]] = cuvil.to_dense %[[S]]
// CHECK:         %[[T:.*]] = cuvil.to_layout %[[D]] : tensor<2x3xf32> to tensor<2x3xf32, #cuvil.sparse_csr<{row_ptr = [0, 1, 2], col_idx = [2, 0]}>>
// CHECK:         return %[[S]], %[[T]]
func.func @layout_roundtrip(%s: tensor<2x3xf32, #csr>) -> (tensor<2x3xf32, #csr>, tensor<2x3xf32, #csr2>) {
  %d = cuvil.to_dense %s : tensor<2x3xf32, #csr> to tensor<2x3xf32>
  %e = cuvil.to_layout %d : tensor<2x3xf32> to tensor<2x3xf32, #csr>
  %f = cuvil.to_layout %d : tensor<2x3xf32> to tensor<2x3xf32, #csr2>
  return %e, %f : tensor<2x3xf32, #csr>, tensor<2x3xf32, #csr2>
}
