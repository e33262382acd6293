// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-early-dealloc))" | FileCheck %s
// Deallocations move up to just after the last use of the buffer or a view.

// CHECK-LABEL: func.func @chain
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         call @k(%{{.*}}, %[[A]])
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK:         call @k1(%[[V]], %[[B]])
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK:         call @k(%[[B]], %arg1)
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    return
func.func private @k(memref<4x8xf32>, memref<4x8xf32>)
func.func private @k1(memref<32xf32>, memref<4x8xf32>)
func.func @chain(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  call @k(%x, %a) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %b = memref.alloc() : memref<4x8xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  call @k1(%v, %b) : (memref<32xf32>, memref<4x8xf32>) -> ()
  call @k(%b, %out) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  memref.dealloc %a : memref<4x8xf32>
  memref.dealloc %b : memref<4x8xf32>
  return
}

// -----

// A buffer used inside a loop is freed after the loop (not inside it); one
// whose last use is a copy is freed right after the copy. The returned
// buffer is the caller's: it must never be freed here (names are bound so
// that a dealloc of %c cannot stand in for the one of %b).
// CHECK-LABEL: func.func @loop_and_escape
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.store %{{.*}}, %[[A]][%{{.*}}] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[A]] : memref<8xf32>
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:    memref.copy %[[B]], %[[C]] : memref<8xf32> to memref<8xf32>
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<8xf32>
// CHECK-NOT:     memref.dealloc %[[C]]
// CHECK:         return %[[C]] : memref<8xf32>
func.func @loop_and_escape(%n: index) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %f, %a[%c0] : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  memref.copy %b, %c : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return %c : memref<8xf32>
}
