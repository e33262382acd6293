// RUN: cuvil-opt %s --pass-pipeline='builtin.module(func.func(cuvil-stack-tile-buffers))' | FileCheck %s

// Small fixed-size buffers freed in their loop iteration go on the stack, the
// stack pointer saved at the start of each iteration and restored before its
// terminator; a 128 KB one and one outside loops stay on the heap.
// CHECK-LABEL: func.func @f
// CHECK:         scf.for
// CHECK-NEXT:      %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT:      memref.alloca() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:      memref.alloc() : memref<32768xf32>
// CHECK-NOT:       memref.dealloc %{{.*}} : memref<8xf32>
// CHECK:           memref.dealloc %{{.*}} : memref<32768xf32>
// CHECK-NEXT:      llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT:    }
// CHECK:         scf.for {{.*}} iter_args
// CHECK-NEXT:      %[[SP2:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT:      memref.alloca() : memref<8xf32>
// CHECK:           llvm.intr.stackrestore %[[SP2]] : !llvm.ptr
// CHECK-NEXT:      scf.yield
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NEXT:    memref.dealloc
func.func @f(%n: index, %out: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
    %big = memref.alloc() : memref<32768xf32>
    memref.store %cst, %a[%c0] : memref<8xf32>
    memref.store %cst, %big[%c0] : memref<32768xf32>
    %v = memref.load %a[%c0] : memref<8xf32>
    memref.store %v, %out[%c0, %c0] : memref<16x8xf32>
    memref.dealloc %a : memref<8xf32>
    memref.dealloc %big : memref<32768xf32>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %cst) -> (f32) {
    %a = memref.alloc() : memref<8xf32>
    memref.store %acc, %a[%c0] : memref<8xf32>
    %v = memref.load %a[%c0] : memref<8xf32>
    %s = arith.addf %v, %acc : f32
    memref.dealloc %a : memref<8xf32>
    scf.yield %s : f32
  }
  memref.store %r, %out[%c1, %c0] : memref<16x8xf32>
  %top = memref.alloc() : memref<8xf32>
  memref.dealloc %top : memref<8xf32>
  return
}

// A buffer the iteration does not free (it outlives it) stays on the heap.
// CHECK-LABEL: func.func @not_freed_here
// CHECK:         scf.for
// CHECK-NOT:       llvm.intr.stacksave
// CHECK:           memref.alloc() : memref<8xf32>
func.func @not_freed_here(%n: index, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<8xf32>
    memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  }
  return
}
