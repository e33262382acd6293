// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-math-approx))" | FileCheck %s
// f32 erf / exp / tanh become arith + fma polynomials on the same vector
// type (no per-lane libm call); other element types are left to the lowering.

// CHECK-LABEL: func.func @f32_vectors
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK:         math.fma {{.*}} : vector<16xf32>
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK:         return
func.func @f32_vectors(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %a = math.erf %x : vector<16xf32>
  %b = math.exp %x : vector<16xf32>
  %c = math.tanh %x : vector<16xf32>
  return %a, %b, %c : vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @f64_left_alone
// CHECK:         math.erf %{{.*}} : f64
// CHECK:         math.log %{{.*}} : f32
func.func @f64_left_alone(%x: f64, %y: f32) -> (f64, f32) {
  %a = math.erf %x : f64
  %b = math.log %y : f32
  return %a, %b : f64, f32
}
