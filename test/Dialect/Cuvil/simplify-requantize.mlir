// RUN: cuvil-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(cuvil-simplify-requantize))" | FileCheck %s

// torch-mlir's quantize_per_tensor after a ReLU (zero point -128 = qmin):
// the clamp moves before the rounding, the zero point becomes an integer add,
// and the ReLU goes (the lower clamp at 0 already does it).
// CHECK-LABEL: func.func @relu_requantize
//  CHECK-SAME:   (%[[X:.*]]: f32)
//   CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//   CHECK-DAG:   %[[HI:.*]] = arith.constant 2.550000e+02 : f32
//   CHECK-DAG:   %[[ZP:.*]] = arith.constant -128 : i32
//   CHECK-DAG:   %[[S:.*]] = arith.truncf %{{.*}} : f64 to f32
//       CHECK:   %[[Y:.*]] = arith.mulf %[[X]], %[[S]] : f32
//       CHECK:   %[[LT:.*]] = arith.cmpf olt, %[[Y]], %[[ZERO]] : f32
//       CHECK:   %[[C0:.*]] = arith.select %[[LT]], %[[ZERO]], %[[Y]] : f32
//       CHECK:   %[[GT:.*]] = arith.cmpf ogt, %[[C0]], %[[HI]] : f32
//       CHECK:   %[[C1:.*]] = arith.select %[[GT]], %[[HI]], %[[C0]] : f32
//       CHECK:   %[[R:.*]] = math.roundeven %[[C1]] : f32
//       CHECK:   %[[I:.*]] = arith.fptosi %[[R]] : f32 to i32
//       CHECK:   %[[Q:.*]] = arith.addi %[[I]], %[[ZP]] : i32
//       CHECK:   %[[T:.*]] = arith.trunci %[[Q]] : i32 to i8
//       CHECK:   return %[[T]] : i8
func.func @relu_requantize(%x: f32) -> i8 {
  %zero = arith.constant 0.000000e+00 : f32
  %inv = arith.constant 104.21872092105689 : f64
  %lo = arith.constant -1.280000e+02 : f32
  %hi = arith.constant 1.270000e+02 : f32
  %pos = arith.cmpf ugt, %x, %zero : f32
  %relu = arith.select %pos, %x, %zero : f32
  %s = arith.truncf %inv : f64 to f32
  %y = arith.mulf %relu, %s : f32
  %r = math.roundeven %y : f32
  %z = arith.addf %r, %lo : f32
  %under = arith.cmpf olt, %z, %lo : f32
  %c0 = arith.select %under, %lo, %z : f32
  %over = arith.cmpf ogt, %c0, %hi : f32
  %c1 = arith.select %over, %hi, %c0 : f32
  %q = arith.fptosi %c1 : f32 to i8
  return %q : i8
}

// -----

// A zero point that is not qmin keeps the ReLU (values below the zero point
// are representable); vectors take splat constants.
// CHECK-LABEL: func.func @requantize_vector
//   CHECK-DAG:   %[[LO:.*]] = arith.constant dense<-1.330000e+02> : vector<16xf32>
//   CHECK-DAG:   %[[HI:.*]] = arith.constant dense<1.220000e+02> : vector<16xf32>
//   CHECK-DAG:   %[[ZP:.*]] = arith.constant dense<5> : vector<16xi32>
//       CHECK:   arith.cmpf ugt
//       CHECK:   %[[RELU:.*]] = arith.select
//       CHECK:   %[[Y:.*]] = arith.mulf %[[RELU]]
//       CHECK:   arith.cmpf olt, %[[Y]], %[[LO]]
//       CHECK:   arith.cmpf ogt, %{{.*}}, %[[HI]]
//       CHECK:   math.roundeven
//       CHECK:   arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi32>
//       CHECK:   arith.addi %{{.*}}, %[[ZP]] : vector<16xi32>
//       CHECK:   arith.trunci %{{.*}} : vector<16xi32> to vector<16xi8>
func.func @requantize_vector(%x: vector<16xf32>) -> vector<16xi8> {
  %zero = arith.constant dense<0.000000e+00> : vector<16xf32>
  %s = arith.constant dense<2.5> : vector<16xf32>
  %zp = arith.constant dense<5.0> : vector<16xf32>
  %lo = arith.constant dense<-1.280000e+02> : vector<16xf32>
  %hi = arith.constant dense<1.270000e+02> : vector<16xf32>
  %pos = arith.cmpf ugt, %x, %zero : vector<16xf32>
  %relu = arith.select %pos, %x, %zero : vector<16xi1>, vector<16xf32>
  %y = arith.mulf %relu, %s : vector<16xf32>
  %r = math.roundeven %y : vector<16xf32>
  %z = arith.addf %r, %zp : vector<16xf32>
  %c0 = arith.maximumf %z, %lo : vector<16xf32>
  %c1 = arith.minimumf %c0, %hi : vector<16xf32>
  %q = arith.fptosi %c1 : vector<16xf32> to vector<16xi8>
  return %q : vector<16xi8>
}

// -----

// Not rewritten: the clamp's bounds are not integers, or outside i8.
// CHECK-LABEL: func.func @not_integral_bounds
//       CHECK:   %[[R:.*]] = math.roundeven
//       CHECK:   arith.addf %[[R]]
//       CHECK:   arith.fptosi %{{.*}} : f32 to i8
//   CHECK-NOT:   arith.trunci
func.func @not_integral_bounds(%y: f32) -> i8 {
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant -1.275000e+02 : f32
  %hi = arith.constant 1.270000e+02 : f32
  %r = math.roundeven %y : f32
  %z = arith.addf %r, %zp : f32
  %under = arith.cmpf olt, %z, %lo : f32
  %c0 = arith.select %under, %lo, %z : f32
  %over = arith.cmpf ogt, %c0, %hi : f32
  %c1 = arith.select %over, %hi, %c0 : f32
  %q = arith.fptosi %c1 : f32 to i8
  return %q : i8
}

// CHECK-LABEL: func.func @bounds_outside_i8
//       CHECK:   arith.fptosi %{{.*}} : f32 to i8
//   CHECK-NOT:   arith.trunci
func.func @bounds_outside_i8(%y: f32) -> i8 {
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %r = math.roundeven %y : f32
  %under = arith.cmpf olt, %r, %lo : f32
  %c0 = arith.select %under, %lo, %r : f32
  %over = arith.cmpf ogt, %c0, %hi : f32
  %c1 = arith.select %over, %hi, %c0 : f32
  %q = arith.fptosi %c1 : f32 to i8
  return %q : i8
}

// An i32 quantize with bounds past 2^23: lo - zp (-2^24 - 1) has no exact
// f32, so the bounds cannot move before the zero point's add.
// CHECK-LABEL: func.func @bounds_past_exact_f32
//       CHECK:   arith.fptosi %{{.*}} : f32 to i32
//   CHECK-NOT:   arith.addi
func.func @bounds_past_exact_f32(%y: f32) -> i32 {
  %zp = arith.constant 1.0 : f32
  %lo = arith.constant -1.6777216e+07 : f32
  %hi = arith.constant 1.6777216e+07 : f32
  %r = math.roundeven %y : f32
  %z = arith.addf %r, %zp : f32
  %under = arith.cmpf olt, %z, %lo : f32
  %c0 = arith.select %under, %lo, %z : f32
  %over = arith.cmpf ogt, %c0, %hi : f32
  %c1 = arith.select %over, %hi, %c0 : f32
  %q = arith.fptosi %c1 : f32 to i32
  return %q : i32
}

// -----

// A negative scale keeps the ReLU: max(x, 0) * c is then min(x * c, 0).
// CHECK-LABEL: func.func @negative_scale_keeps_relu
//       CHECK:   arith.cmpf ugt
//       CHECK:   %[[RELU:.*]] = arith.select
//       CHECK:   arith.mulf %[[RELU]]
func.func @negative_scale_keeps_relu(%x: f32) -> f32 {
  %zero = arith.constant 0.000000e+00 : f32
  %s = arith.constant -2.0 : f32
  %pos = arith.cmpf ugt, %x, %zero : f32
  %relu = arith.select %pos, %x, %zero : f32
  %y = arith.mulf %relu, %s : f32
  %under = arith.cmpf olt, %y, %zero : f32
  %c = arith.select %under, %zero, %y : f32
  return %c : f32
}
