// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-widen-bool-tensors,canonicalize))" | FileCheck %s
// i1 tensors between linalg.generic ops are computed as i8: the producer
// yields extui, readers trunci. Others (returned, fed to non-generic ops)
// stay i1. A reduction's and/or/xor combiner moves to i8 itself (so that
// reduction tiling still sees a plain combiner).

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// The "all -inf" row flag of torch-mlir's SDPA softmax and the select on it.
// CHECK-LABEL: func.func @row_flag
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i8
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ONE]] : i8) outs(%{{.*}} : tensor<4xi8>)
// CHECK:         %[[FLAG:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<4xi8>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: i8):
// CHECK:           %[[EQ:.*]] = arith.cmpf oeq, %[[IN]]
// CHECK:           %[[EQ8:.*]] = arith.extui %[[EQ]] : i1 to i8
// CHECK:           %[[AND:.*]] = arith.andi %[[EQ8]], %[[ACC]] : i8
// CHECK:           linalg.yield %[[AND]] : i8
// CHECK:         linalg.generic {{.*}} ins(%[[FLAG]], %{{.*}} : tensor<4xi8>, tensor<4x8xf32>)
// CHECK:         ^bb0(%[[F:.*]]: i8, %{{.*}}: f32, %{{.*}}: f32):
// CHECK:           %[[BIT:.*]] = arith.trunci %[[F]] : i8 to i1
// CHECK:           arith.select %[[BIT]]
func.func @row_flag(%s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xi1>
  %init = linalg.fill ins(%true : i1) outs(%e : tensor<4xi1>) -> tensor<4xi1>
  %flag = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x8xf32>) outs(%init : tensor<4xi1>) {
  ^bb0(%in: f32, %acc: i1):
    %eq = arith.cmpf oeq, %in, %ninf : f32
    %and = arith.andi %eq, %acc : i1
    linalg.yield %and : i1
  } -> tensor<4xi1>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%flag, %s : tensor<4xi1>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%f: i1, %in: f32, %out: f32):
    %v = arith.select %f, %zero, %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
// A returned i1 result stays i1.
// CHECK-LABEL: func.func @returned
// CHECK:         } -> tensor<4xi1>
// CHECK-NOT:     i8
func.func @returned(%x: tensor<4xf32>) -> tensor<4xi1> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xi1>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// -----

#id = affine_map<(d0) -> (d0)>
// A mask read by another generic (not a reduction): extui on yield.
// CHECK-LABEL: func.func @mask
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi8>)
// CHECK:           %[[C:.*]] = arith.cmpf ogt
// CHECK:           %[[B:.*]] = arith.extui %[[C]] : i1 to i8
// CHECK:           linalg.yield %[[B]] : i8
// CHECK:         linalg.generic {{.*}} ins(%[[M]], %{{.*}} : tensor<4xi8>, tensor<4xf32>)
func.func @mask(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xi1>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %c : i1
  } -> tensor<4xi1>
  %e2 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %x : tensor<4xi1>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%b: i1, %in: f32, %out: f32):
    %v = arith.select %b, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
