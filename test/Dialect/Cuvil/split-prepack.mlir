// RUN: cuvil-opt %s --split-input-file --cuvil-lower-to-linalg --canonicalize --cse --cuvil-split-prepack | FileCheck %s
// Weight-only computations move into @<fn>_prepack; the function takes
// their results as {cuvil.packed = i} arguments.

// The W^T of an nn.Linear moves out; the bias (read directly) stays a weight
// argument; the unused weight W is dropped from @main.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<16xf32> {cuvil.weight}, %[[WT:.*]]: tensor<8x16xf32> {cuvil.packed = 0 : i64}) -> tensor<4x16xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul ins(%[[X]], %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[B]] :
// CHECK-LABEL: func.func @main_prepack
// CHECK-SAME:    (%[[W:.*]]: tensor<16x8xf32>, %{{.*}}: tensor<16xf32>) -> tensor<8x16xf32>
// CHECK-NOT:     llvm.emit_c_interface
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<16x8xf32>) outs(%[[E]] : tensor<8x16xf32>) permutation = [1, 0]
// CHECK:         return %[[T]] : tensor<8x16xf32>
func.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32> {cuvil.weight}, %b: tensor<16xf32> {cuvil.weight}) -> tensor<4x16xf32> {
  %0 = cuvil.matmul %x, %w {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %1 = cuvil.add %0, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Two packed values, numbered in order; a computation on an input is not
// hoisted.
// CHECK-LABEL: func.func @net
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xf32>, %{{.*}}: tensor<8x8xf32> {cuvil.packed = 0 : i64}, %{{.*}}: tensor<8x4xf32> {cuvil.packed = 1 : i64})
// CHECK-NOT:     linalg.transpose
// CHECK:         math.tanh
// CHECK-LABEL: func.func @net_prepack
// CHECK-SAME:    -> (tensor<8x8xf32>, tensor<8x4xf32>)
// CHECK-COUNT-2: linalg.transpose
// CHECK-NOT:     math.tanh
func.func @net(%x: tensor<2x8xf32>, %w1: tensor<8x8xf32> {cuvil.weight}, %w2: tensor<4x8xf32> {cuvil.weight}) -> tensor<2x4xf32> {
  %0 = cuvil.matmul %x, %w1 {transpose_b} : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %1 = cuvil.tanh %0 : tensor<2x8xf32>
  %2 = cuvil.matmul %1, %w2 {transpose_b} : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// No weights: nothing changes, no prepack function.
// CHECK-LABEL: func.func @plain
// CHECK:         linalg.transpose
// CHECK-NOT:     func.func @plain_prepack
func.func @plain(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = cuvil.matmul %x, %w {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A free value (no weight, no input: a decode step's position ids) whose
// body yields a constant from above is cloned into the prepack function with
// that constant, not left reading @main's.
// CHECK-LABEL: func.func @positions
// CHECK-LABEL: func.func @positions_prepack
// CHECK:         %[[C:.*]] = arith.constant 7 : i64
// CHECK:         linalg.generic
// CHECK:           linalg.yield %[[C]] : i64
// CHECK:         linalg.generic
// CHECK:         return
func.func @positions(%x: tensor<4xi64>, %w: tensor<4xi64> {cuvil.weight}) -> tensor<4xi64> {
  %c7 = arith.constant 7 : i64
  %e = tensor.empty() : tensor<4xi64>
  %pos = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e : tensor<4xi64>) {
  ^bb0(%o: i64):
    linalg.yield %c7 : i64
  } -> tensor<4xi64>
  %shifted = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                             iterator_types = ["parallel"]}
      ins(%pos, %w : tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%p: i64, %a: i64, %o: i64):
    %s = arith.addi %p, %a : i64
    linalg.yield %s : i64
  } -> tensor<4xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%shifted, %x : tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%p: i64, %a: i64, %o: i64):
    %s = arith.muli %p, %a : i64
    linalg.yield %s : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// A weight-only broadcast that only initializes an accumulator (an int8
// matmul's zero-point correction per column) stays in @acc: the column sums
// are packed, not a full-size tensor copied into the accumulator per call.
// CHECK-LABEL: func.func @acc
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xi32>, %[[W:.*]]: tensor<8x16xi32> {cuvil.weight}, %[[S:.*]]: tensor<16xi32> {cuvil.packed = 0 : i64}) -> tensor<4x16xi32>
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<16xi32>) outs(%{{.*}} : tensor<4x16xi32>)
// CHECK:         linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xi32>, tensor<8x16xi32>) outs(%[[INIT]] : tensor<4x16xi32>)
// CHECK-LABEL: func.func @acc_prepack
// CHECK-SAME:    -> tensor<16xi32>
// CHECK-NOT:     tensor<4x16xi32>
// CHECK:         return
#col = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> (d1)>
func.func @acc(%x: tensor<4x8xi32>, %w: tensor<8x16xi32> {cuvil.weight}) -> tensor<4x16xi32> {
  %c0 = arith.constant 0 : i32
  %e16 = tensor.empty() : tensor<16xi32>
  %z16 = linalg.fill ins(%c0 : i32) outs(%e16 : tensor<16xi32>) -> tensor<16xi32>
  %s = linalg.generic {indexing_maps = [#id2, #sum], iterator_types = ["reduction", "parallel"]}
      ins(%w : tensor<8x16xi32>) outs(%z16 : tensor<16xi32>) {
  ^bb0(%in: i32, %out: i32):
    %v = arith.addi %in, %out : i32
    linalg.yield %v : i32
  } -> tensor<16xi32>
  %e = tensor.empty() : tensor<4x16xi32>
  %init = linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16xi32>) outs(%e : tensor<4x16xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<4x16xi32>
  %r = linalg.matmul ins(%x, %w : tensor<4x8xi32>, tensor<8x16xi32>) outs(%init : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}
