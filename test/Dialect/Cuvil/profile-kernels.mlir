// RUN: cuvil-opt %s --split-input-file --cuvil-profile-kernels --verify-diagnostics | FileCheck %s
// Every call of an outlined kernel is timed: clock before, record(id, start)
// after, with the id of the callee's cuvil.kernel attribute (not its name);
// other calls are left alone.

// CHECK-LABEL: func.func @main
// CHECK:         %[[T0:.*]] = call @cuvil_profile_clock() : () -> i64
// CHECK-NEXT:    %[[R0:.*]] = call @cuvil_kernel_0_generic(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[ID0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    call @cuvil_profile_record(%[[ID0]], %[[T0]]) : (i64, i64) -> ()
// CHECK:         %[[T1:.*]] = call @cuvil_profile_clock() : () -> i64
// CHECK-NEXT:    call @cuvil_kernel_12_matmul(%[[R0]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[ID12:.*]] = arith.constant 12 : i64
// CHECK-NEXT:    call @cuvil_profile_record(%[[ID12]], %[[T1]]) : (i64, i64) -> ()
// CHECK:         %[[T2:.*]] = call @cuvil_profile_clock() : () -> i64
// CHECK-NEXT:    call @renamed(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[ID7:.*]] = arith.constant 7 : i64
// CHECK-NEXT:    call @cuvil_profile_record(%[[ID7]], %[[T2]]) : (i64, i64) -> ()
// CHECK-NOT:     call @cuvil_profile_clock
// CHECK:         call @helper
// CHECK:         call @cuvil_kernel_3_lookalike
// CHECK-NOT:     call @cuvil_profile_record
// CHECK:         return
// CHECK-DAG:   func.func private @cuvil_profile_clock() -> i64
// CHECK-DAG:   func.func private @cuvil_profile_record(i64, i64)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @cuvil_kernel_0_generic(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @cuvil_kernel_12_matmul(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = call @renamed(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = call @helper(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = call @cuvil_kernel_3_lookalike(%3) : (tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}
func.func private @cuvil_kernel_0_generic(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 0 : i64} {
  return %x : tensor<4xf32>
}
func.func private @cuvil_kernel_12_matmul(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 12 : i64} {
  return %x : tensor<4xf32>
}
// The id is the attribute, whatever the name.
func.func private @renamed(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 7 : i64} {
  return %x : tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// A kernel's name without the attribute is not a kernel.
func.func private @cuvil_kernel_3_lookalike(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Nothing to time: no declarations are added.
// CHECK-LABEL: func.func @no_kernels
// CHECK-NOT:   cuvil_profile
func.func @no_kernels(%x: memref<4xf32>) {
  return
}

// -----

// A user function that takes the profiler's name with another type is reported.
// expected-error @+1 {{'func.func' op is reserved for the kernel profiler and must have type '() -> i64'}}
func.func private @cuvil_profile_clock() -> f32
func.func @clash(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @cuvil_kernel_1_generic(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @cuvil_kernel_1_generic(%x: tensor<4xf32>) -> tensor<4xf32> attributes {cuvil.kernel = 1 : i64} {
  return %x : tensor<4xf32>
}
