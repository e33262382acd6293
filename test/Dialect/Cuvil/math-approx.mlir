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

// -----

// f32 erf: one rational function on the clamped argument (x P(x^2) / Q(x^2)),
// no per-interval coefficient selects: the two selects are the clamp.
// CHECK-LABEL: func.func @erf_rational
// CHECK:         arith.cmpf ult
// CHECK:         arith.select
// CHECK:         arith.cmpf ugt
// CHECK:         arith.select
// CHECK-NOT:     arith.select
// CHECK-COUNT-10: math.fma
// CHECK:         arith.divf
// CHECK-NOT:     arith.divf
// CHECK-NOT:     math.erf
// CHECK:         return
func.func @erf_rational(%x: vector<16xf32>) -> vector<16xf32> {
  %a = math.erf %x : vector<16xf32>
  return %a : vector<16xf32>
}

// -----

// GELU's erf(x / sqrt(2)): the division by a constant becomes a multiply by
// its reciprocal, so the only division left is the rational function's.
// CHECK-LABEL: func.func @erf_of_division_by_constant
// CHECK:         %[[INV:.*]] = arith.constant dense<0.707106769> : vector<16xf32>
// CHECK:         arith.mulf %{{.*}}, %[[INV]] : vector<16xf32>
// CHECK-COUNT-1: arith.divf
// CHECK-NOT:     arith.divf
// CHECK:         return
func.func @erf_of_division_by_constant(%x: vector<16xf32>) -> vector<16xf32> {
  %c = arith.constant dense<1.41421354> : vector<16xf32>
  %d = arith.divf %x, %c : vector<16xf32>
  %a = math.erf %d : vector<16xf32>
  return %a : vector<16xf32>
}

// -----

// A division by a value, or by zero, stays.
// CHECK-LABEL: func.func @erf_of_division_kept
// CHECK:         arith.divf %arg0, %arg1
// CHECK:         arith.divf %arg0, %{{.*}}
// CHECK:         return
func.func @erf_of_division_kept(%x: f32, %y: f32) -> (f32, f32) {
  %d = arith.divf %x, %y : f32
  %a = math.erf %d : f32
  %z = arith.constant 0.0 : f32
  %e = arith.divf %x, %z : f32
  %b = math.erf %e : f32
  return %a, %b : f32, f32
}
