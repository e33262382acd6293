// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-raise-linalg))" | FileCheck %s
// torch-mlir's matmul forms raised to cuvil.matmul.

// nn.Linear: x @ W^T as linalg.transpose + linalg.matmul into a zero fill.
// CHECK-LABEL: func.func @linear
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = cuvil.matmul %[[X]], %[[W]] {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     linalg.
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// Batched, with the last two dims of rhs swapped; dynamic batch.
// CHECK-LABEL: func.func @batch_matmul_transposed
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4x8xf32>, %[[Y:.*]]: tensor<?x16x8xf32>)
// CHECK:         cuvil.matmul %[[X]], %[[Y]] {transpose_b} : tensor<?x4x8xf32>, tensor<?x16x8xf32> -> tensor<?x4x16xf32>
// CHECK-NOT:     linalg.batch_matmul
func.func @batch_matmul_transposed(%x: tensor<?x4x8xf32>, %y: tensor<?x16x8xf32>) -> tensor<?x4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%b) : tensor<?x8x16xf32>
  %t = linalg.transpose ins(%y : tensor<?x16x8xf32>) outs(%e : tensor<?x8x16xf32>) permutation = [0, 2, 1]
  %o = tensor.empty(%b) : tensor<?x4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<?x4x16xf32>) -> tensor<?x4x16xf32>
  %m = linalg.batch_matmul ins(%x, %t : tensor<?x4x8xf32>, tensor<?x8x16xf32>) outs(%f : tensor<?x4x16xf32>) -> tensor<?x4x16xf32>
  return %m : tensor<?x4x16xf32>
}

// -----

// Not raised: an accumulator that is not a zero fill (C += A B).
// CHECK-LABEL: func.func @accumulating
// CHECK:         linalg.matmul
// CHECK-NOT:     cuvil.matmul
func.func @accumulating(%x: tensor<4x8xf32>, %y: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @filled_with_one
// CHECK:         linalg.matmul
// CHECK-NOT:     cuvil.matmul
func.func @filled_with_one(%x: tensor<4x8xf32>, %y: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %o = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A transpose that is not of the last two dims stays; the matmul is raised
// without transpose_b.
// CHECK-LABEL: func.func @other_permutation
// CHECK:         %[[T:.*]] = linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK:         cuvil.matmul %{{.*}}, %[[T]] : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// CHECK-NOT:     transpose_b
func.func @other_permutation(%x: tensor<2x4x8xf32>, %y: tensor<8x2x16xf32>) -> tensor<2x4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x8x16xf32>
  %t = linalg.transpose ins(%y : tensor<8x2x16xf32>) outs(%e : tensor<2x8x16xf32>) permutation = [1, 0, 2]
  %o = tensor.empty() : tensor<2x4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m = linalg.batch_matmul ins(%x, %t : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %m : tensor<2x4x16xf32>
}

// -----

// A widening product (ONNX MatMulInteger: i32 operands, i64 accumulator)
// has no cuvil.matmul form: it stays linalg.matmul, and the pass succeeds
// (it used to build and drop a cuvil.matmul on every try and never converge).
// CHECK-LABEL: func.func @widening_matmul_stays
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x64xi32>, tensor<64x16xi32>) outs(%{{.*}} : tensor<8x16xi64>)
// CHECK-NOT:     cuvil.matmul
func.func @widening_matmul_stays(%x: tensor<8x64xi32>, %w: tensor<64x16xi32>) -> tensor<8x16xi64> {
  %c0 = arith.constant 0 : i64
  %o = tensor.empty() : tensor<8x16xi64>
  %f = linalg.fill ins(%c0 : i64) outs(%o : tensor<8x16xi64>) -> tensor<8x16xi64>
  %m = linalg.matmul ins(%x, %w : tensor<8x64xi32>, tensor<64x16xi32>) outs(%f : tensor<8x16xi64>) -> tensor<8x16xi64>
  return %m : tensor<8x16xi64>
}

// -----

// ONNX's MatMul of a batched activation and a 2-D weight, as torch-mlir
// lowers it: the weight broadcast to the batch, then batch_matmul. Raised
// to cuvil.matmul of the 2-D weight itself (a weight that is packed once).
// CHECK-LABEL: func.func @batched_times_broadcast_weight
// CHECK-SAME:    (%[[X:.*]]: tensor<2x128x64xf32>, %[[W:.*]]: tensor<64x32xf32>)
// CHECK-NEXT:    %[[R:.*]] = cuvil.matmul %[[X]], %[[W]] : tensor<2x128x64xf32>, tensor<64x32xf32> -> tensor<2x128x32xf32>
// CHECK-NEXT:    return %[[R]]
#lead = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @batched_times_broadcast_weight(%x: tensor<2x128x64xf32>, %w: tensor<64x32xf32>) -> tensor<2x128x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %b = linalg.generic {indexing_maps = [#lead, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<64x32xf32>) outs(%e : tensor<2x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x32xf32>
  %o = tensor.empty() : tensor<2x128x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  %m = linalg.batch_matmul ins(%x, %b : tensor<2x128x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  return %m : tensor<2x128x32xf32>
}

// -----

// The named form of that broadcast, too.
// CHECK-LABEL: func.func @batched_times_named_broadcast
// CHECK:         cuvil.matmul %{{.*}}, %{{.*}} : tensor<2x128x64xf32>, tensor<64x32xf32> -> tensor<2x128x32xf32>
// CHECK-NOT:     linalg.batch_matmul
func.func @batched_times_named_broadcast(%x: tensor<2x128x64xf32>, %w: tensor<64x32xf32>) -> tensor<2x128x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %b = linalg.broadcast ins(%w : tensor<64x32xf32>) outs(%e : tensor<2x64x32xf32>) dimensions = [0]
  %o = tensor.empty() : tensor<2x128x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%o : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  %m = linalg.batch_matmul ins(%x, %b : tensor<2x128x64xf32>, tensor<2x64x32xf32>) outs(%f : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  return %m : tensor<2x128x32xf32>
}

// -----

// An int8 matmul with an i32 accumulator (torch._int_mm, PT2E's quantized
// linear layers) is a cuvil.matmul: int8 products accumulate in i32 there,
// and the matmul is then out of reach of the elementwise fusion (which would
// fold the reshapes around it into a higher-rank generic).
// CHECK-LABEL: func.func @int8_matmul
// CHECK:         %[[M:.*]] = cuvil.matmul %{{.*}}, %{{.*}} {transpose_b} : tensor<32x64xi8>, tensor<128x64xi8> -> tensor<32x128xi32>
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[M]]
func.func @int8_matmul(%x: tensor<32x64xi8>, %w: tensor<128x64xi8>) -> tensor<32x128xi32> {
  %c0 = arith.constant 0 : i32
  %t0 = tensor.empty() : tensor<64x128xi8>
  %wt = linalg.transpose ins(%w : tensor<128x64xi8>) outs(%t0 : tensor<64x128xi8>) permutation = [1, 0]
  %o = tensor.empty() : tensor<32x128xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%o : tensor<32x128xi32>) -> tensor<32x128xi32>
  %m = linalg.matmul ins(%x, %wt : tensor<32x64xi8>, tensor<64x128xi8>) outs(%f : tensor<32x128xi32>) -> tensor<32x128xi32>
  return %m : tensor<32x128xi32>
}
