// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-partition-parallel-loops{parts=2}))" | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-partition-parallel-loops))" | FileCheck %s --check-prefix=OFF
// Each outermost 1-D scf.parallel becomes `parts` contiguous ranges, one
// scf.for each; loops with reductions and nested loops are left alone.

// CHECK-LABEL: func.func @halves
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C37:.*]] = arith.constant 37 : index
// CHECK:         %[[SPAN:.*]] = arith.subi %[[C37]], %[[C0]] : index
// CHECK-NEXT:    %[[TRIP:.*]] = arith.ceildivsi %[[SPAN]], %[[C4]] : index
// CHECK-NEXT:    %[[PER:.*]] = arith.ceildivsi %[[TRIP]], %[[C2]] : index
// CHECK-NEXT:    %[[CHUNK:.*]] = arith.muli %[[PER]], %[[C4]] : index
// CHECK-NEXT:    scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[C2]]) step (%[[C1]]) {
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.muli %[[P]], %[[CHUNK]] : index
// CHECK-NEXT:      %[[LO:.*]] = arith.addi %[[C0]], %[[SHIFT]] : index
// CHECK-NEXT:      %[[END:.*]] = arith.addi %[[LO]], %[[CHUNK]] : index
// CHECK-NEXT:      %[[HI:.*]] = arith.minsi %[[END]], %[[C37]] : index
// CHECK-NEXT:      scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %[[C4]] {
// CHECK-NEXT:        memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<37xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// OFF-LABEL:   func.func @halves
// OFF:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// OFF-NEXT:        memref.store
func.func @halves(%out: memref<37xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c37 = arith.constant 37 : index
  scf.parallel (%i) = (%c0) to (%c37) step (%c4) {
    memref.store %v, %out[%i] : memref<37xf32>
    scf.reduce
  }
  return
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK:         scf.parallel (%{{.*}}) = {{.*}} init
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) =
func.func @left_alone(%out: memref<8x8xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return %sum : f32
}
