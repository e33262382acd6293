// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-round-to-nearest-int))" | FileCheck %s

// CHECK-LABEL: func.func @vector_to_i32
//  CHECK-SAME:   (%[[X:.*]]: vector<16xf32>)
//       CHECK:   %[[I:.*]] = llvm.intr.lrint(%[[X]]) : (vector<16xf32>) -> vector<16xi32>
//   CHECK-NOT:   math.roundeven
//       CHECK:   return %[[I]]
func.func @vector_to_i32(%x: vector<16xf32>) -> vector<16xi32> {
  %r = math.roundeven %x : vector<16xf32>
  %i = arith.fptosi %r : vector<16xf32> to vector<16xi32>
  return %i : vector<16xi32>
}

// -----

// The rounded value's other users keep it; i8 results and 2-D vectors stay
// as they are (no lrint to i8, none on n-D vectors).
// CHECK-LABEL: func.func @kept
//       CHECK:   %[[R:.*]] = math.roundeven
//       CHECK:   llvm.intr.lrint(%{{.*}}) : (f64) -> i64
//       CHECK:   arith.fptosi %[[R]] : f32 to i8
//       CHECK:   math.roundeven %{{.*}} : vector<2x8xf32>
//       CHECK:   arith.fptosi %{{.*}} : vector<2x8xf32> to vector<2x8xi32>
func.func @kept(%x: f32, %d: f64, %v: vector<2x8xf32>) -> (f32, i64, i8, vector<2x8xi32>) {
  %r = math.roundeven %x : f32
  %rd = math.roundeven %d : f64
  %l = arith.fptosi %rd : f64 to i64
  %b = arith.fptosi %r : f32 to i8
  %rv = math.roundeven %v : vector<2x8xf32>
  %iv = arith.fptosi %rv : vector<2x8xf32> to vector<2x8xi32>
  return %r, %l, %b, %iv : f32, i64, i8, vector<2x8xi32>
}
