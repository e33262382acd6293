// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-fold-zero-trip-linalg))" | FileCheck %s
// Linalg ops whose loops run zero times are replaced by their inits.

// K = 0: the product is the zero fill.
// CHECK-LABEL: func.func @matmul_k0
// CHECK:         %[[FILL:.*]] = linalg.fill
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[FILL]]
func.func @matmul_k0(%a: tensor<3x0xf32>, %b: tensor<0x4xf32>) -> tensor<3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<3x0xf32>, tensor<0x4xf32>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %m : tensor<3x4xf32>
}

// -----

// An empty batch: the output has no elements either way.
// CHECK-LABEL: func.func @batch_matmul_empty_batch
// CHECK-SAME:    %[[OUT:[a-z0-9]+]]: tensor<0x3x4xf32>
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return %[[OUT]]
func.func @batch_matmul_empty_batch(%a: tensor<0x3x5xf32>, %b: tensor<0x5x4xf32>, %out: tensor<0x3x4xf32>) -> tensor<0x3x4xf32> {
  %m = linalg.batch_matmul ins(%a, %b : tensor<0x3x5xf32>, tensor<0x5x4xf32>) outs(%out : tensor<0x3x4xf32>) -> tensor<0x3x4xf32>
  return %m : tensor<0x3x4xf32>
}

// -----

// Non-empty domains, dynamic ones included, are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK:         linalg.matmul
func.func @left_alone(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>, %out: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x4xf32>) outs(%out : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %m : tensor<?x4xf32>
}
