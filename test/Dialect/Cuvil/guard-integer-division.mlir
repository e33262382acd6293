// RUN: cuvil-opt %s --split-input-file --cuvil-guard-integer-division | FileCheck %s

// A divisor that may be 0: divide by 1 there, report it once per op.
// CHECK-LABEL: func.func private @cuvil_runtime_error(i32)
// CHECK-LABEL: func.func @signed_scalar
// CHECK-SAME:    (%[[N:.*]]: i64, %[[D:.*]]: i64)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[IS0:.*]] = arith.cmpi eq, %[[D]], %[[ZERO]]
// CHECK:         %[[OVF:.*]] = arith.andi
// CHECK:         %[[BAD:.*]] = arith.ori %[[IS0]], %[[OVF]]
// CHECK:         %[[SAFE:.*]] = arith.select %[[BAD]], %[[ONE]], %[[D]]
// CHECK:         %[[Q:.*]] = arith.divsi %[[N]], %[[SAFE]]
// CHECK:         scf.if %[[IS0]] {
// CHECK:           func.call @cuvil_runtime_error(%{{.*}}) : (i32) -> ()
// INT_MIN / -1 wraps to INT_MIN, as in eager.
// CHECK:         %[[NEG:.*]] = arith.subi %[[ZERO]], %[[N]]
// CHECK:         %[[R:.*]] = arith.select %[[OVF]], %[[NEG]], %[[Q]]
// CHECK:         return %[[R]]
func.func @signed_scalar(%n: i64, %d: i64) -> i64 {
  %q = arith.divsi %n, %d : i64
  return %q : i64
}

// -----

// Vectors: any lane with a zero divisor reports; remainders of INT_MIN % -1 are 0.
// CHECK-LABEL: func.func @vector_remainder
// CHECK:         %[[IS0:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : vector<4x8xi32>
// CHECK:         arith.remsi %{{.*}}, %{{.*}} : vector<4x8xi32>
// CHECK:         %[[FLAT:.*]] = vector.shape_cast %[[IS0]] : vector<4x8xi1> to vector<32xi1>
// CHECK:         %[[ANY:.*]] = vector.reduction <or>, %[[FLAT]] : vector<32xi1> into i1
// CHECK:         scf.if %[[ANY]]
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4x8xi1>, vector<4x8xi32>
func.func @vector_remainder(%n: vector<4x8xi32>, %d: vector<4x8xi32>) -> vector<4x8xi32> {
  %r = arith.remsi %n, %d : vector<4x8xi32>
  return %r : vector<4x8xi32>
}

// -----

// Unsigned ops cannot overflow: only the zero check.
// CHECK-LABEL: func.func @unsigned
// CHECK-NOT:     arith.andi
// CHECK:         arith.divui
// CHECK:         scf.if
func.func @unsigned(%n: i8, %d: i8) -> i8 {
  %q = arith.divui %n, %d : i8
  return %q : i8
}

// -----

// Safe constant divisors, index arithmetic and floats are left alone (no
// runtime declaration either).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     cuvil_runtime_error
// CHECK-NOT:     scf.if
// CHECK:         arith.floordivsi %{{.*}}, %{{.*}} : i64
// CHECK:         arith.remsi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK:         arith.divui %{{.*}}, %{{.*}} : index
// CHECK:         arith.divf
func.func @left_alone(%n: i64, %v: vector<4xi32>, %i: index, %j: index, %f: f32) -> (i64, vector<4xi32>, index, f32) {
  %c3 = arith.constant 3 : i64
  %a = arith.floordivsi %n, %c3 : i64
  %c = arith.constant dense<[2, 3, 4, 5]> : vector<4xi32>
  %b = arith.remsi %v, %c : vector<4xi32>
  %x = arith.divui %i, %j : index
  %y = arith.divf %f, %f : f32
  return %a, %b, %x, %y : i64, vector<4xi32>, index, f32
}

// -----

// A constant -1 divisor is a possible INT_MIN / -1: guarded.
// CHECK-LABEL: func.func @minus_one
// CHECK:         arith.select
// CHECK:         arith.divsi
func.func @minus_one(%n: i32) -> i32 {
  %m = arith.constant -1 : i32
  %q = arith.divsi %n, %m : i32
  return %q : i32
}

// -----

// In a linalg body: a safe divisor there (no side effect), the report from a
// reduction over the divisor tensor after the op.
#map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @floor_divide_tensors
// CHECK-SAME:    (%[[A:.*]]: tensor<4x37xi64>, %[[B:.*]]: tensor<4x37xi64>)
// CHECK:         %[[Q:.*]] = linalg.generic
// CHECK:           arith.select
// CHECK:           arith.floordivsi
// CHECK-NOT:       call
// CHECK:         } -> tensor<4x37xi64>
// The divisor alone gives the reduction its loops.
// CHECK:         %[[ANY:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[B]] : tensor<4x37xi64>) outs(%{{.*}} : tensor<i8>)
// CHECK:           arith.cmpi eq
// CHECK:           arith.ori
// CHECK:         %[[FLAG:.*]] = tensor.extract %[[ANY]][] : tensor<i8>
// CHECK:         %[[SET:.*]] = arith.cmpi ne, %[[FLAG]]
// CHECK:         scf.if %[[SET]] {
// CHECK-NEXT:      %[[CODE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      func.call @cuvil_runtime_error(%[[CODE]])
// CHECK:         return %[[Q]]
func.func @floor_divide_tensors(%a: tensor<4x37xi64>, %b: tensor<4x37xi64>) -> tensor<4x37xi64> {
  %e = tensor.empty() : tensor<4x37xi64>
  %q = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x37xi64>, tensor<4x37xi64>) outs(%e : tensor<4x37xi64>) {
  ^bb0(%x: i64, %y: i64, %o: i64):
    %r = arith.floordivsi %x, %y : i64
    linalg.yield %r : i64
  } -> tensor<4x37xi64>
  return %q : tensor<4x37xi64>
}
