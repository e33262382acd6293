// RUN: cuvil-opt %s --split-input-file --cuvil-collapse-parallel-loops | FileCheck %s
// Multi-dimensional scf.parallel loops get one induction variable (so that
// async-parallel-for never takes its block-aligned path, which reruns
// iterations); loops with reductions and 1-D loops are left alone.

// CHECK-LABEL: func.func @two_dims
// CHECK:         scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NOT:     scf.parallel
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<36x2xf32>
func.func @two_dims(%out: memref<36x2xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c36 = arith.constant 36 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c36, %c2) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<36x2xf32>
    scf.reduce
  }
  return
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK:         scf.parallel (%{{.*}}) =
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} init
func.func @left_alone(%out: memref<8xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %v, %out[%i] : memref<8xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) init (%zero) -> f32 {
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
