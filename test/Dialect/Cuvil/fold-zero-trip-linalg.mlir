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

// -----

// roll of an empty tensor as torch-mlir writes it: a slice with a dynamic 0
// size (which canonicalization would fold into one its verifier rejects) and
// a concat; both produce tensors without elements: tensor.empty.
// CHECK-LABEL: func.func @roll_of_empty
// CHECK-NOT:     tensor.extract_slice
// CHECK-NOT:     tensor.concat
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<0x0x0xf32>
// CHECK:         return %[[E]]
func.func @roll_of_empty(%arg0: tensor<0x0x0xf32>) -> tensor<0x0x0xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = tensor.extract_slice %arg0[%c0, %c0, %c0] [%c0, 0, 0] [%c1, %c1, %c1] : tensor<0x0x0xf32> to tensor<?x0x0xf32>
  %r = tensor.concat dim(0) %s, %s : (tensor<?x0x0xf32>, tensor<?x0x0xf32>) -> tensor<0x0x0xf32>
  return %r : tensor<0x0x0xf32>
}

// -----

// A slice with a dynamic size keeps it in its tensor.empty; an op with a
// dynamic non-slice result and a non-empty result stay.
// CHECK-LABEL: func.func @dynamic_sizes
// CHECK-SAME:    %[[N:[a-z0-9]+]]: index
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x0xf32>
// CHECK:         tensor.cast
// CHECK:         linalg.add
// CHECK:         return %[[E]]
func.func @dynamic_sizes(%t: tensor<8x0xf32>, %n: index, %u: tensor<?x0xf32>, %v: tensor<4xf32>) -> (tensor<?x0xf32>, tensor<?x0xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %s = tensor.extract_slice %t[%c0, %c0] [%n, 0] [1, 1] : tensor<8x0xf32> to tensor<?x0xf32>
  %c = tensor.cast %u : tensor<?x0xf32> to tensor<?x0xf32>
  %a = linalg.add ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%v : tensor<4xf32>) -> tensor<4xf32>
  return %s, %c, %a : tensor<?x0xf32>, tensor<?x0xf32>, tensor<4xf32>
}

// -----

// roll by 0 as torch-mlir writes it: a concat with an input of no extent
// along the concat dim (seen through a cast); the input goes.
// CHECK-LABEL: func.func @concat_with_empty_input
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<5x5xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         %[[C:.*]] = tensor.cast %[[X]] : tensor<5x5xf32> to tensor<?x5xf32>
// CHECK-NOT:     tensor.concat
// CHECK:         %[[R:.*]] = tensor.cast %[[C]] : tensor<?x5xf32> to tensor<5x5xf32>
// CHECK-NEXT:    return %[[R]]
func.func @concat_with_empty_input(%x: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %cast = tensor.cast %x : tensor<5x5xf32> to tensor<?x5xf32>
  %e = tensor.empty() : tensor<0x5xf32>
  %ce = tensor.cast %e : tensor<0x5xf32> to tensor<?x5xf32>
  %r = tensor.concat dim(0) %cast, %ce : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<5x5xf32>
  return %r : tensor<5x5xf32>
}
