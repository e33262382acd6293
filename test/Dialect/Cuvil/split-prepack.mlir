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

// No weights, nothing costly on constants: nothing changes, no prepack
// function.
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

// -----

// Costly work on constants alone (a DFT's cosine table: no weight, no input)
// moves too, with the cast that continues it; the index arithmetic feeding it
// is cloned, and @dft keeps only the product with its input.
// CHECK-LABEL: func.func @dft
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xf32>, %[[T:.*]]: tensor<8x5xf32> {cuvil.packed = 0 : i64}) -> tensor<2x5xf32>
// CHECK-NOT:     math.cos
// CHECK-NOT:     arith.truncf
// CHECK:         linalg.matmul ins(%[[X]], %[[T]] : tensor<2x8xf32>, tensor<8x5xf32>)
// CHECK-LABEL: func.func @dft_prepack
// CHECK-SAME:    () -> tensor<8x5xf32>
// CHECK:         arith.muli
// CHECK:         math.cos
// CHECK:         arith.truncf
// CHECK:         return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @dft(%x: tensor<2x8xf32>) -> tensor<2x5xf32> {
  %step = arith.constant 0.785398163397 : f64
  %zero = arith.constant 0.0 : f32
  %e64 = tensor.empty() : tensor<8x5xf64>
  %angles = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e64 : tensor<8x5xf64>) {
  ^bb0(%o: f64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ij = arith.muli %i, %j : index
    %n = arith.index_cast %ij : index to i64
    %f = arith.sitofp %n : i64 to f64
    %a = arith.mulf %f, %step : f64
    linalg.yield %a : f64
  } -> tensor<8x5xf64>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%angles : tensor<8x5xf64>) outs(%e64 : tensor<8x5xf64>) {
  ^bb0(%a: f64, %o: f64):
    %c = math.cos %a : f64
    linalg.yield %c : f64
  } -> tensor<8x5xf64>
  %e32 = tensor.empty() : tensor<8x5xf32>
  %table = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%cos : tensor<8x5xf64>) outs(%e32 : tensor<8x5xf32>) {
  ^bb0(%c: f64, %o: f32):
    %t = arith.truncf %c : f64 to f32
    linalg.yield %t : f32
  } -> tensor<8x5xf32>
  %eo = tensor.empty() : tensor<2x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r = linalg.matmul ins(%x, %table : tensor<2x8xf32>, tensor<8x5xf32>) outs(%z : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// A broadcast of such a table (ALiBi-like slopes over a 64 x 64 grid of
// positions) stays in @bias, reading the stored slopes: a stored grid would
// cost more memory and reads than recomputing it; cheap index arithmetic
// alone is never hoisted.
// CHECK-LABEL: func.func @bias
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64x64xf32>, %[[S:.*]]: tensor<8xf32> {cuvil.packed = 0 : i64})
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<8xf32>) outs(%{{.*}} : tensor<8x64x64xf32>)
// CHECK-LABEL: func.func @bias_prepack
// CHECK-SAME:    () -> tensor<8xf32>
// CHECK:         math.exp2
// CHECK-NOT:     tensor<8x64x64xf32>
// CHECK:         return
#h = affine_map<(d0, d1, d2) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @bias(%x: tensor<8x64x64xf32>) -> tensor<8x64x64xf32> {
  %e8 = tensor.empty() : tensor<8xf32>
  %slopes = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e8 : tensor<8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    %s = math.exp2 %f : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<8x64x64xf32>
  %grid = linalg.generic {indexing_maps = [#h, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%slopes : tensor<8xf32>) outs(%e : tensor<8x64x64xf32>) {
  ^bb0(%s: f32, %o: f32):
    %j = linalg.index 2 : index
    %n = arith.index_cast %j : index to i64
    %f = arith.sitofp %n : i64 to f32
    %b = arith.mulf %s, %f : f32
    linalg.yield %b : f32
  } -> tensor<8x64x64xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %grid : tensor<8x64x64xf32>, tensor<8x64x64xf32>) outs(%e : tensor<8x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64x64xf32>
  return %r : tensor<8x64x64xf32>
}

// -----

// Only tensors are main_prepack's results: the reduction of a constant
// (quantile's check that all of q lies in [0, 1]) moves, the scalar read out
// of it stays in @scalar_check, reading the stored tensor.
// CHECK-LABEL: func.func @scalar_check
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[ALL:.*]]: tensor<i1> {cuvil.packed = 0 : i64})
// CHECK:         %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK:         cf.assert %[[OK]]
// CHECK-LABEL: func.func @scalar_check_prepack
// CHECK-SAME:    () -> tensor<i1>
func.func @scalar_check(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = arith.constant dense<[0.25, 0.5]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %true = arith.constant true
  %e = tensor.empty() : tensor<i1>
  %init = linalg.fill ins(%true : i1) outs(%e : tensor<i1>) -> tensor<i1>
  %all = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%q : tensor<2xf32>) outs(%init : tensor<i1>) {
  ^bb0(%v: f32, %acc: i1):
    %ge = arith.cmpf oge, %v, %zero : f32
    %le = arith.cmpf ole, %v, %one : f32
    %in = arith.andi %ge, %le : i1
    %r = arith.andi %acc, %in : i1
    linalg.yield %r : i1
  } -> tensor<i1>
  %ok = tensor.extract %all[] : tensor<i1>
  cf.assert %ok, "q must be in [0, 1]"
  return %x : tensor<4xf32>
}
