// RUN: cuvil-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cuvil-propagate-channels-last))' | FileCheck %s
// A conv's NHWC -> NCHW output transpose moves down past elementwise ops and
// pads until it meets the next conv's NCHW -> NHWC transpose and folds.

// Conv product (i32, NHWC) -> per-channel requantize to i8 -> pad -> the
// next conv's input transpose: no transpose left; the requantize iterates in
// NHWC order, its per-channel operand read along the last loop; the pad
// pads H and W of the NHWC tensor.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @between_two_convs
// CHECK-SAME:    (%[[P:.*]]: tensor<1x6x7x8xi32>, %[[S:.*]]: tensor<8xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[Q:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]]
// CHECK-SAME:      ins(%[[P]], %[[S]] : tensor<1x6x7x8xi32>, tensor<8xf32>) outs(%{{.*}} : tensor<1x6x7x8xi8>)
// CHECK:         %[[PAD:.*]] = tensor.pad %[[Q]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         } : tensor<1x6x7x8xi8> to tensor<1x8x9x8xi8>
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[PAD]]
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @between_two_convs(%p: tensor<1x6x7x8xi32>, %s: tensor<8xf32>) -> tensor<1x8x9x8xi8> {
  %e = tensor.empty() : tensor<1x8x6x7xi32>
  %t = linalg.transpose ins(%p : tensor<1x6x7x8xi32>) outs(%e : tensor<1x8x6x7xi32>) permutation = [0, 3, 1, 2]
  %o = tensor.empty() : tensor<1x8x6x7xi8>
  %q = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t, %s : tensor<1x8x6x7xi32>, tensor<8xf32>) outs(%o : tensor<1x8x6x7xi8>) {
  ^bb0(%a: i32, %b: f32, %out: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %b : f32
    %i = arith.fptosi %m : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x8x6x7xi8>
  %c0 = arith.constant 0 : i8
  %padded = tensor.pad %q low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %c0 : i8
  } : tensor<1x8x6x7xi8> to tensor<1x8x8x9xi8>
  %e2 = tensor.empty() : tensor<1x8x9x8xi8>
  %next = linalg.transpose ins(%padded : tensor<1x8x8x9xi8>) outs(%e2 : tensor<1x8x9x8xi8>) permutation = [0, 2, 3, 1]
  return %next : tensor<1x8x9x8xi8>
}

// -----

// A residual add of two transposed tensors reads both in NHWC; the model's
// NCHW result is one transpose at the end. linalg.index of the channel loop
// (NCHW loop 1) becomes NHWC loop 3.
// CHECK-LABEL: func.func @residual_add
// CHECK-SAME:    (%[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x4x4x8xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK:           linalg.index 3 : index
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[SUM]] : tensor<1x4x4x8xf32>) outs(%{{.*}} : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
// CHECK:         return %[[R]]
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @residual_add(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %tb = linalg.transpose ins(%b : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ta, %tb : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %cf = arith.sitofp %ci : i64 to f32
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %cf : f32
    linalg.yield %t : f32
  } -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// An operand that is not transposed is read through a permuted map.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @mixed_layouts
// CHECK-SAME:    (%[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x8x4x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[PERM]], #[[ID]]]
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<1x4x4x8xf32>, tensor<1x8x4x4xf32>)
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @mixed_layouts(%a: tensor<1x4x4x8xf32>, %b: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ta, %b : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// i8 -> f32 (a dequantize) whose input is also used elsewhere: moving the
// transpose would leave one on the i8 tensor and add a 4x wider one; a
// reduction (average pool) does not take it in either. Both stay.
// CHECK-LABEL: func.func @widening_and_reductions_stay
// CHECK:         %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x4x4x8xi8>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : tensor<1x8x4x4xi8>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[T]] : tensor<1x8x4x4xi8>)
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#nc = affine_map<(n, c, h, w) -> (n, c)>
func.func @widening_and_reductions_stay(%a: tensor<1x4x4x8xi8>) -> (tensor<1x8x4x4xf32>, tensor<1x8xi32>) {
  %e = tensor.empty() : tensor<1x8x4x4xi8>
  %t = linalg.transpose ins(%a : tensor<1x4x4x8xi8>) outs(%e : tensor<1x8x4x4xi8>) permutation = [0, 3, 1, 2]
  %o = tensor.empty() : tensor<1x8x4x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x8x4x4xi8>) outs(%o : tensor<1x8x4x4xf32>) {
  ^bb0(%x: i8, %out: f32):
    %f = arith.sitofp %x : i8 to f32
    linalg.yield %f : f32
  } -> tensor<1x8x4x4xf32>
  %z = arith.constant 0 : i32
  %acc0 = tensor.empty() : tensor<1x8xi32>
  %acc = linalg.fill ins(%z : i32) outs(%acc0 : tensor<1x8xi32>) -> tensor<1x8xi32>
  %s = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%t : tensor<1x8x4x4xi8>) outs(%acc : tensor<1x8xi32>) {
  ^bb0(%x: i8, %out: i32):
    %w = arith.extsi %x : i8 to i32
    %r = arith.addi %w, %out : i32
    linalg.yield %r : i32
  } -> tensor<1x8xi32>
  return %d, %s : tensor<1x8x4x4xf32>, tensor<1x8xi32>
}

// -----

// An op already in NHWC order that reads an NCHW transpose back through the
// inverse permutation (a residual add whose other operand became NHWC later)
// reads the transpose's source whole.
// CHECK-LABEL: func.func @read_back_in_nhwc_order
// CHECK-SAME:    (%[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x4x4x8xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = {{.*}}} ins(%[[A]], %[[B]] : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
// CHECK-NOT:     linalg.transpose
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#nchw = affine_map<(n, h, w, c) -> (n, c, h, w)>
func.func @read_back_in_nhwc_order(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %tb = linalg.transpose ins(%b : tensor<1x4x4x8xf32>) outs(%e : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %o = tensor.empty() : tensor<1x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #nchw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a, %tb : tensor<1x4x4x8xf32>, tensor<1x8x4x4xf32>) outs(%o : tensor<1x4x4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

// Index elements have no bit width: the transpose moves only where every
// user takes it in (here the function's return does not), never a crash.
// CHECK-LABEL: func.func @index_elements
// CHECK:         %[[T:.*]] = linalg.transpose
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : tensor<1x8x4x4xindex>)
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @index_elements(%a: tensor<1x4x4x8xindex>) -> tensor<1x8x4x4xi32> {
  %e = tensor.empty() : tensor<1x8x4x4xindex>
  %t = linalg.transpose ins(%a : tensor<1x4x4x8xindex>) outs(%e : tensor<1x8x4x4xindex>) permutation = [0, 3, 1, 2]
  %o = tensor.empty() : tensor<1x8x4x4xi32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x8x4x4xindex>) outs(%o : tensor<1x8x4x4xi32>) {
  ^bb0(%x: index, %out: i32):
    %i = arith.index_cast %x : index to i32
    linalg.yield %i : i32
  } -> tensor<1x8x4x4xi32>
  return %r : tensor<1x8x4x4xi32>
}
