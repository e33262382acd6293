// RUN: cuvil-opt %s --split-input-file --cuvil-prepare-entry-points | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-prepare-entry-points --cuvil-prepare-entry-points | FileCheck %s
// The public functions with a body (main, main_prepack) get a C interface
// and read-only arguments, other attributes kept; private kernels and
// declarations are left alone. Running it twice gives the same IR.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%{{.*}}: tensor<4xf32> {bufferization.writable = false, cuvil.arg = "x", cuvil.kind = "user_input"},
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {bufferization.writable = false, cuvil.packed = 0 : i64})
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @main_prepack
// CHECK-SAME:    (%{{.*}}: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32>
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func private @cuvil_kernel_0_generic
// CHECK-SAME:    (%{{.*}}: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 0 : i64} {
// CHECK-LABEL: func.func private @cuvil_profile_clock() -> i64
// CHECK-NOT:     llvm.emit_c_interface
func.func @main(%x: tensor<4xf32> {cuvil.arg = "x", cuvil.kind = "user_input"},
                %p: tensor<4xf32> {cuvil.packed = 0 : i64}) -> tensor<4xf32> {
  %0 = call @cuvil_kernel_0_generic(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main_prepack(%w: tensor<4xf32>) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}
func.func private @cuvil_kernel_0_generic(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 0 : i64} {
  return %x : tensor<4xf32>
}
func.func private @cuvil_profile_clock() -> i64

// -----

// An argument already marked writable is made read-only.
// CHECK-LABEL: func.func @writable
// CHECK-SAME:    (%{{.*}}: tensor<4xf32> {bufferization.writable = false})
func.func @writable(%x: tensor<4xf32> {bufferization.writable = true}) {
  return
}

// -----

// A tensor returned twice: the second result is a copy (an allocation, which
// CSE keeps apart), so that every result is a buffer of its own; an argument
// or a value returned once stays as it is.
// CHECK-LABEL: func.func @returned_twice
// CHECK:         %[[Y:.*]] = arith.mulf
// CHECK:         %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<4xf32>
// CHECK-NOT:     bufferization.alloc_tensor
// CHECK:         return %[[Y]], %[[COPY]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @returned_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y = arith.mulf %x, %x : tensor<4xf32>
  return %y, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
