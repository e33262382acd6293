// RUN: cuvil-opt %s --split-input-file --cuvil-lower-tm-tensor | FileCheck %s

// index_put as torch-mlir writes it: one row of updates per index; the row's
// columns go to the original's trailing dim. Indices from the caller are
// wrapped (x[-1]), bounds-checked and reported.
// CHECK-LABEL: func.func private @cuvil_runtime_error(i32)
// CHECK-LABEL: func.func @index_put
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<4x8xf32> {{.*}}, %[[I:[^:]*]]: tensor<2x1xi64> {{.*}}, %[[U:[^:]*]]: tensor<2x1x8xf32>
// CHECK-NOT:     tm_tensor
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %c2 {{.*}} iter_args(%[[A:.*]] = %[[X]])
// CHECK:           scf.for %[[ONE:.*]] = %{{.*}} to %c1 {{.*}} iter_args(%[[B:.*]] = %[[A]])
// CHECK:             scf.for %[[C:.*]] = %{{.*}} to %c8{{.*}} iter_args(%[[D:.*]] = %[[B]])
// CHECK:               %[[V:.*]] = tensor.extract %[[U]][%[[N]], %[[ONE]], %[[C]]]
// CHECK:               %[[RAW:.*]] = tensor.extract %[[I]][%[[N]], %{{.*}}]
// CHECK:               %[[AT:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:               %[[ROW:.*]] = arith.addi %[[AT]], %[[ONE]]
// CHECK:               %[[NEG:.*]] = arith.cmpi slt, %[[ROW]]
// CHECK:               %[[WRAP:.*]] = arith.select %[[NEG]]
// CHECK:               %[[OK:.*]] = arith.cmpi ult, %[[WRAP]], %c4
// CHECK:               scf.if %{{.*}} -> (tensor<4x8xf32>)
// CHECK:                 tensor.insert %[[V]] into %[[D]][%[[WRAP]], %[[C]]]
// CHECK:               } else {
// CHECK:                 func.call @cuvil_runtime_error
func.func @index_put(%x: tensor<4x8xf32> {cuvil.kind = "user_input"}, %i: tensor<2x1xi64> {cuvil.kind = "user_input"},
                     %u: tensor<2x1x8xf32> {cuvil.kind = "user_input"}) -> tensor<4x8xf32> {
  %0 = "tm_tensor.scatter"(%u, %i, %x) <{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = true}> ({
  ^bb0(%a: f32, %b: f32):
    "tm_tensor.yield"(%a) : (f32) -> ()
  }) : (tensor<2x1x8xf32>, tensor<2x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// scatter_add: the combiner adds. Indices computed from weights only are not
// reported (the check could end up in the run-once prepack function).
// CHECK-LABEL: func.func @scatter_add_of_weight_indices
// CHECK-NOT:     cuvil_runtime_error
// CHECK:         %[[OLD:.*]] = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
// CHECK:         %[[SUM:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK:         tensor.insert %[[SUM]]
func.func @scatter_add_of_weight_indices(%x: tensor<4x8xf32>, %i: tensor<6x2xi64> {cuvil.kind = "parameter"},
                                         %u: tensor<6xf32>) -> tensor<4x8xf32> {
  %0 = "tm_tensor.scatter"(%u, %i, %x) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) : (tensor<6xf32>, tensor<6x2xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Sort with argsort's index operand: a merge sort of each line (dynamic
// count), runs of width w merged into 2w in scratch tensors (one each: not
// tensor.empty, which CSE would share) and copied back, both operands moved
// together by the comparator's choice.
// CHECK-LABEL: func.func @sort
// CHECK-SAME:    (%[[V:.*]]: tensor<?x37xf32>, %[[I:.*]]: tensor<?x37xi64>)
// CHECK:         %[[ROWS:.*]] = tensor.dim %[[V]], %{{.*}}
// CHECK-DAG:     %[[SV:.*]] = bufferization.alloc_tensor(%[[ROWS]]) : tensor<?x37xf32>
// CHECK-DAG:     %[[SI:.*]] = bufferization.alloc_tensor(%[[ROWS]]) : tensor<?x37xi64>
// CHECK:         %[[SORTED:.*]]:5 = scf.while (%[[W:.*]] = %{{.*}}, %{{.*}} = %[[V]], %{{.*}} = %[[I]], %{{.*}} = %[[SV]], %{{.*}} = %[[SI]])
// CHECK:           arith.cmpi ult, %[[W]], %c37
// CHECK:         } do {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[ROWS]]
// CHECK:             scf.for %{{.*}} = %{{.*}} to %c37 step
// CHECK:               scf.for
// NaN sorts last, as eager: a <= b becomes a <= b | isnan(b).
// CHECK:                 %[[LE:.*]] = arith.cmpf ole, %[[A:.*]], %[[B:.*]] : f32
// CHECK:                 %[[NAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK:                 arith.ori %[[LE]], %[[NAN]] : i1
// CHECK-COUNT-2:         tensor.insert
// CHECK:           linalg.copy
// CHECK:           linalg.copy
// CHECK:         return %[[SORTED]]#1, %[[SORTED]]#2
func.func @sort(%v: tensor<?x37xf32>, %i: tensor<?x37xi64>) -> (tensor<?x37xf32>, tensor<?x37xi64>) {
  %0:2 = "tm_tensor.sort"(%v, %i) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
  ^bb0(%a: f32, %b: f32, %c: i64, %d: i64):
    %le = arith.cmpf ole, %a, %b : f32
    "tm_tensor.yield"(%le) : (i1) -> ()
  }) : (tensor<?x37xf32>, tensor<?x37xi64>) -> (tensor<?x37xf32>, tensor<?x37xi64>)
  return %0#0, %0#1 : tensor<?x37xf32>, tensor<?x37xi64>
}

// -----

// Inclusive scan (cumprod): out[0] = in[0], out[i] = out[i - 1] * in[i];
// the accumulator gets every value, the last one stays.
// CHECK-LABEL: func.func @cumprod
// CHECK:         scf.for %[[R:.*]] = {{.*}} iter_args(%[[O:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}})
// CHECK:           scf.for %[[C:.*]] = {{.*}} iter_args(%[[O2:.*]] = %[[O]], %[[A2:.*]] = %[[A]])
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %[[C]], %c0
// CHECK:             %[[V:.*]] = scf.if %[[FIRST]] -> (f32)
// CHECK:               tensor.extract %{{.*}}[%[[R]], %[[C]]]
// CHECK:             } else {
// CHECK:               %[[P:.*]] = arith.subi %[[C]], %c1
// CHECK:               %[[PREV:.*]] = tensor.extract %[[O2]][%[[R]], %[[P]]]
// CHECK:               %[[IN:.*]] = tensor.extract %{{.*}}[%[[R]], %[[C]]]
// CHECK:               arith.mulf %[[PREV]], %[[IN]]
// CHECK:             tensor.insert %[[V]] into %[[O2]][%[[R]], %[[C]]]
// CHECK:             tensor.insert %[[V]] into %[[A2]][%[[R]]]
func.func @cumprod(%x: tensor<4x8xf32>, %out: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4x8xf32> {
  %0:2 = "tm_tensor.scan"(%x, %out, %acc) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "tm_tensor.yield"(%m) : (f32) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %0#0 : tensor<4x8xf32>
}

// -----

// topk (kthvalue's smallest 2): each element carried down the k slots.
// CHECK-LABEL: func.func @topk
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c2 step %{{.*}} iter_args
// NaN is never better than a number for the smallest k: a < b | (!isnan(a) & isnan(b)).
// CHECK:           %[[LT:.*]] = arith.cmpf olt, %[[A:.*]], %[[B:.*]] : f32
// CHECK:           %[[NUM:.*]] = arith.cmpf ord, %[[A]], %[[A]] : f32
// CHECK:           %[[NAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
// CHECK:           %[[BOTH:.*]] = arith.andi %[[NUM]], %[[NAN]] : i1
// CHECK:           arith.ori %[[LT]], %[[BOTH]] : i1
// CHECK:           arith.cmpf olt
// CHECK:           arith.cmpi eq
// CHECK:           arith.cmpi slt
func.func @topk(%x: tensor<5x37xf32>, %top: tensor<5x2xf32>, %idx: tensor<5x2xi32>) -> (tensor<5x2xf32>, tensor<5x2xi32>) {
  %0:2 = "tm_tensor.topk"(%x, %top, %idx) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    "tm_tensor.yield"(%lt) : (i1) -> ()
  }) : (tensor<5x37xf32>, tensor<5x2xf32>, tensor<5x2xi32>) -> (tensor<5x2xf32>, tensor<5x2xi32>)
  return %0#0, %0#1 : tensor<5x2xf32>, tensor<5x2xi32>
}

// -----

// Bools: torch-mlir compares i1 signed (true = -1 before false); eager puts
// false first, so the comparator compares unsigned.
// CHECK-LABEL: func.func @sort_bools
// CHECK:         arith.cmpi ule, %{{.*}}, %{{.*}} : i1
// CHECK-NOT:     arith.cmpi sle
func.func @sort_bools(%v: tensor<8xi1>) -> tensor<8xi1> {
  %0 = "tm_tensor.sort"(%v) <{dimension = 0 : i64, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%a: i1, %b: i1):
    %le = arith.cmpi sle, %a, %b : i1
    "tm_tensor.yield"(%le) : (i1) -> ()
  }) : (tensor<8xi1>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}
