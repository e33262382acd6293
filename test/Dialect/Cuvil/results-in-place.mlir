// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-results-in-place))" | FileCheck %s
// A result that is a reshape of a buffer is written into the out-param.

// A packed matmul's [M, N/64, 64] product returned as [M, N]: the buffer
// becomes the out-param expanded; no allocation, no copy.
// CHECK-LABEL: func.func @collapsed_result
// CHECK-SAME:    (%[[X:.*]]: memref<8x128xf32>, %[[OUT:.*]]: memref<8x128xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[V:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]] output_shape [8, 2, 64] : memref<8x128xf32> into memref<8x2x64xf32>
// CHECK-NEXT:    call @k(%[[X]], %[[V]])
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func private @k(memref<8x128xf32>, memref<8x2x64xf32>)
func.func @collapsed_result(%x: memref<8x128xf32>, %out: memref<8x128xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<8x2x64xf32>
  call @k(%x, %a) : (memref<8x128xf32>, memref<8x2x64xf32>) -> ()
  %c = memref.collapse_shape %a [[0], [1, 2]] : memref<8x2x64xf32> into memref<8x128xf32>
  memref.copy %c, %out : memref<8x128xf32> to memref<8x128xf32>
  return
}

// -----

// Two reshapes (expanded, then collapsed the other way): undone in reverse.
// CHECK-LABEL: func.func @two_reshapes
// CHECK-SAME:    (%[[OUT:.*]]: memref<1x8x128xf32>)
// CHECK:         %[[C:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1], [2]] : memref<1x8x128xf32> into memref<8x128xf32>
// CHECK-NEXT:    %[[E:.*]] = memref.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [8, 2, 64]
// CHECK-NEXT:    call @k(%[[E]])
// CHECK-NOT:     memref.copy
func.func private @k(memref<8x2x64xf32>)
func.func @two_reshapes(%out: memref<1x8x128xf32>) {
  %a = memref.alloc() : memref<8x2x64xf32>
  call @k(%a) : (memref<8x2x64xf32>) -> ()
  %c = memref.collapse_shape %a [[0], [1, 2]] : memref<8x2x64xf32> into memref<8x128xf32>
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [1, 8, 128] : memref<8x128xf32> into memref<1x8x128xf32>
  memref.copy %e, %out : memref<1x8x128xf32> to memref<1x8x128xf32>
  return
}

// -----

// The buffer is read after the copy (a second result computed from it):
// writing it into the out-param would be fine here, but the pass does not
// reason about what the later reader does: the copy stays.
// CHECK-LABEL: func.func @used_after_copy
// CHECK:         memref.alloc
// CHECK:         memref.copy
// CHECK:         call @k2
func.func private @k(memref<8x2x64xf32>)
func.func private @k2(memref<8x2x64xf32>, memref<4xf32>)
func.func @used_after_copy(%out: memref<8x128xf32>, %out2: memref<4xf32>) {
  %a = memref.alloc() : memref<8x2x64xf32>
  call @k(%a) : (memref<8x2x64xf32>) -> ()
  %c = memref.collapse_shape %a [[0], [1, 2]] : memref<8x2x64xf32> into memref<8x128xf32>
  memref.copy %c, %out : memref<8x128xf32> to memref<8x128xf32>
  call @k2(%a, %out2) : (memref<8x2x64xf32>, memref<4xf32>) -> ()
  return
}

// -----

// One buffer returned twice (two out-params): the last copy's out-param
// takes the buffer's place; the first copy reads it from there.
// CHECK-LABEL: func.func @returned_twice
// CHECK-SAME:    (%[[OUT:.*]]: memref<8x128xf32>, %[[OUT2:.*]]: memref<8x128xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[V:.*]] = memref.expand_shape %[[OUT2]]
// CHECK-NEXT:    call @k(%[[V]])
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %[[V]]
// CHECK-NEXT:    memref.copy %[[C]], %[[OUT]]
// CHECK-NEXT:    return
func.func private @k(memref<8x2x64xf32>)
func.func @returned_twice(%out: memref<8x128xf32>, %out2: memref<8x128xf32>) {
  %a = memref.alloc() : memref<8x2x64xf32>
  call @k(%a) : (memref<8x2x64xf32>) -> ()
  %c = memref.collapse_shape %a [[0], [1, 2]] : memref<8x2x64xf32> into memref<8x128xf32>
  memref.copy %c, %out : memref<8x128xf32> to memref<8x128xf32>
  memref.copy %c, %out2 : memref<8x128xf32> to memref<8x128xf32>
  return
}

// -----

// Kernels (private functions) are left alone: they write their destination
// argument already.
// CHECK-LABEL: func.func private @kernel
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func private @k(memref<8x2x64xf32>)
func.func private @kernel(%out: memref<8x128xf32>) {
  %a = memref.alloc() : memref<8x2x64xf32>
  call @k(%a) : (memref<8x2x64xf32>) -> ()
  %c = memref.collapse_shape %a [[0], [1, 2]] : memref<8x2x64xf32> into memref<8x128xf32>
  memref.copy %c, %out : memref<8x128xf32> to memref<8x128xf32>
  return
}
