// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-fold-concat-slices),canonicalize)' | FileCheck %s
// A slice of a tensor.concat that lies within one operand reads that operand.

// A complex pair's parts: the concat along the trailing dim of 2 goes.
// CHECK-LABEL: func.func @pair_parts
// CHECK-SAME:    (%[[RE:.*]]: tensor<3x5x1xf32>, %[[IM:.*]]: tensor<3x5x1xf32>)
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[RE]], %[[IM]]
func.func @pair_parts(%re: tensor<3x5x1xf32>, %im: tensor<3x5x1xf32>) -> (tensor<3x5x1xf32>, tensor<3x5x1xf32>) {
  %c = tensor.concat dim(2) %re, %im : (tensor<3x5x1xf32>, tensor<3x5x1xf32>) -> tensor<3x5x2xf32>
  %a = tensor.extract_slice %c[0, 0, 0] [3, 5, 1] [1, 1, 1] : tensor<3x5x2xf32> to tensor<3x5x1xf32>
  %b = tensor.extract_slice %c[0, 0, 1] [3, 5, 1] [1, 1, 1] : tensor<3x5x2xf32> to tensor<3x5x1xf32>
  return %a, %b : tensor<3x5x1xf32>, tensor<3x5x1xf32>
}

// -----

// Inside the second operand, with offsets in other dims kept; a slice that
// spans two operands still reads the concat.
// CHECK-LABEL: func.func @within_and_across
// CHECK-SAME:    (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<4x6xf32>)
// CHECK:         %[[C:.*]] = tensor.concat dim(1) %[[A]], %[[B]]
// CHECK:         %[[IN:.*]] = tensor.extract_slice %[[B]][1, 2] [2, 3] [1, 1] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK:         %[[SPAN:.*]] = tensor.extract_slice %[[C]][0, 2] [4, 2] [1, 1] : tensor<4x9xf32> to tensor<4x2xf32>
// CHECK:         return %[[IN]], %[[SPAN]]
func.func @within_and_across(%a: tensor<4x3xf32>, %b: tensor<4x6xf32>) -> (tensor<2x3xf32>, tensor<4x2xf32>) {
  %c = tensor.concat dim(1) %a, %b : (tensor<4x3xf32>, tensor<4x6xf32>) -> tensor<4x9xf32>
  %in = tensor.extract_slice %c[1, 5] [2, 3] [1, 1] : tensor<4x9xf32> to tensor<2x3xf32>
  %span = tensor.extract_slice %c[0, 2] [4, 2] [1, 1] : tensor<4x9xf32> to tensor<4x2xf32>
  return %in, %span : tensor<2x3xf32>, tensor<4x2xf32>
}

// -----

// A strided slice along the concat dim (every other column) is left alone.
// CHECK-LABEL: func.func @strided
// CHECK:         tensor.concat
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [2, 2] [1, 2]
func.func @strided(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %s = tensor.extract_slice %c[0, 0] [2, 2] [1, 2] : tensor<2x8xf32> to tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}
