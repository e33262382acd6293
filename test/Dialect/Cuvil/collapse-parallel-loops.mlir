// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-collapse-parallel-loops,canonicalize))" | FileCheck %s
// Multi-dimensional scf.parallel loops get one induction variable (so that
// async-parallel-for never takes its block-aligned path, which reruns
// iterations); loops with reductions and 1-D loops are left alone.
// --canonicalize folds the product of constant trip counts into one
// constant, so that the collapsed bound is checked as a number.

// The collapsed loop runs 36 * 2 = 72 iterations; i = iv / 2 and j = iv % 2
// (the last dim varies fastest), and the store uses those, in that order.
// CHECK-LABEL: func.func @two_dims
// CHECK-SAME:    (%[[OUT:.*]]: memref<36x2xf32>, %[[V:.*]]: f32)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C72:.*]] = arith.constant 72 : index
// CHECK:         scf.parallel (%[[IV:.*]]) = (%[[C0]]) to (%[[C72]]) step (%[[C1]]) {
// CHECK-NOT:     scf.parallel
// CHECK:           %[[J:.*]] = arith.remsi %[[IV]], %[[C2]] : index
// CHECK:           %[[I:.*]] = arith.divsi %[[IV]], %[[C2]] : index
// CHECK:           memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]] : memref<36x2xf32>
// CHECK-NOT:     scf.parallel
// CHECK:         return
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

// Non-zero lower bounds and non-unit steps: the trip counts are rounded up,
// ceil((36 - 2) / 3) = 12 and ceil((20 - 1) / 4) = 5 (neither division is
// exact, so rounding down would give 11 * 4 = 44), and each recovered
// normalized index is mapped back to lb + k * step.
// CHECK-DAG:   #[[$IMAP:.*]] = affine_map<(d0) -> (d0 * 3 + 2)>
// CHECK-DAG:   #[[$JMAP:.*]] = affine_map<(d0) -> (d0 * 4 + 1)>
// CHECK-LABEL: func.func @steps_and_offsets
// CHECK-SAME:    (%[[OUT:.*]]: memref<36x20xf32>, %[[V:.*]]: f32)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C60:.*]] = arith.constant 60 : index
// CHECK:         scf.parallel (%[[IV:.*]]) = (%[[C0]]) to (%[[C60]]) step (%[[C1]]) {
// CHECK:           %[[JN:.*]] = arith.remsi %[[IV]], %[[C5]] : index
// CHECK:           %[[IN:.*]] = arith.divsi %[[IV]], %[[C5]] : index
// CHECK-DAG:       %[[J:.*]] = affine.apply #[[$JMAP]](%[[JN]])
// CHECK-DAG:       %[[I:.*]] = affine.apply #[[$IMAP]](%[[IN]])
// CHECK:           memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]] : memref<36x20xf32>
func.func @steps_and_offsets(%out: memref<36x20xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  %c36 = arith.constant 36 : index
  scf.parallel (%i, %j) = (%c2, %c1) to (%c36, %c20) step (%c3, %c4) {
    memref.store %v, %out[%i, %j] : memref<36x20xf32>
    scf.reduce
  }
  return
}

// -----

// Dynamic bounds: the trip counts are computed at run time, m for i and
// ceil((n - lb) / 2) for j; the bound is their product and j's count is the
// divisor that recovers both indices.
// CHECK-DAG:   #[[$COUNT:.*]] = affine_map<()[s0, s1] -> ((-s0 + s1) ceildiv 2)>
// CHECK-DAG:   #[[$JMAP:.*]] = affine_map<(d0)[s0] -> (d0 * 2 + s0)>
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[OUT:.*]]: memref<?x?xf32>, %[[V:.*]]: f32, %[[M:.*]]: index, %[[N:.*]]: index, %[[LB:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[NJ:.*]] = affine.apply #[[$COUNT]]()[%[[LB]], %[[N]]]
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[M]], %[[NJ]] : index
// CHECK:         scf.parallel (%[[IV:.*]]) = (%[[C0]]) to (%[[TOTAL]]) step (%[[C1]]) {
// CHECK:           %[[JN:.*]] = arith.remsi %[[IV]], %[[NJ]] : index
// CHECK:           %[[I:.*]] = arith.divsi %[[IV]], %[[NJ]] : index
// CHECK:           %[[J:.*]] = affine.apply #[[$JMAP]](%[[JN]])[%[[LB]]]
// CHECK:           memref.store %[[V]], %[[OUT]][%[[I]], %[[J]]] : memref<?x?xf32>
func.func @dynamic(%out: memref<?x?xf32>, %v: f32, %m: index, %n: index, %lb: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i, %j) = (%c0, %lb) to (%m, %n) step (%c1, %c2) {
    memref.store %v, %out[%i, %j] : memref<?x?xf32>
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

// -----

// An empty body (found by fuzzing): upstream's collapse then builds
// affine.apply, whose dialect the pass must load (it aborted here); then
// canonicalize drops the loop.
// CHECK-LABEL: func.func @unused_induction_variables
// CHECK-NEXT:    return
func.func @unused_induction_variables(%out: memref<36x2xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c36 = arith.constant 36 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c36, %c2) step (%c1, %c1) {
    scf.reduce
  }
  return
}
