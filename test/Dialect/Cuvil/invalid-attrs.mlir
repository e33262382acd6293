// RUN: cuvil-opt %s --split-input-file --verify-diagnostics
// The discardable attributes of the Cuvil IR contract: right types, right
// places, known kinds.

// Valid uses: no diagnostics (llvm.func too, which convert-func-to-llvm
// gives the attributes of the func.func it converts).
func.func @main(%x: tensor<4xf32> {cuvil.arg = "x", cuvil.kind = "user_input"},
                %w: tensor<4xf32> {cuvil.arg = "w", cuvil.kind = "parameter", cuvil.weight},
                %p: tensor<4xf32> {cuvil.packed = 0 : i64}) {
  return
}
func.func private @cuvil_kernel_0_generic() attributes {cuvil.kernel = 0 : i64}
llvm.func @lowered(%arg0: !llvm.ptr {cuvil.arg = "x", cuvil.weight}) attributes {cuvil.kernel = 3 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{'cuvil.weight' on argument #0 must be a unit attribute, got true}}
func.func @weight_not_unit(%w: tensor<4xf32> {cuvil.weight = true}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.packed' on argument #1 must be a non-negative i64 (a prepack result index), got 0 : i32}}
func.func @packed_i32(%x: tensor<4xf32>, %p: tensor<4xf32> {cuvil.packed = 0 : i32}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.packed' on argument #0 must be a non-negative i64 (a prepack result index), got -1 : i64}}
func.func @packed_negative(%p: tensor<4xf32> {cuvil.packed = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.arg' on argument #0 must be a string (the model tensor's name), got 3 : i64}}
func.func @arg_not_string(%x: tensor<4xf32> {cuvil.arg = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.kind' on argument #0 must be one of "user_input", "parameter", "buffer", "buffer_nonpersistent", "constant", got "weight"}}
func.func @unknown_kind(%x: tensor<4xf32> {cuvil.kind = "weight"}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.kind' on argument #0 must be one of}}
func.func @kind_not_string(%x: tensor<4xf32> {cuvil.kind = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.kernel' is a function attribute, not an argument attribute}}
func.func @kernel_on_argument(%x: tensor<4xf32> {cuvil.kernel = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{'cuvil.kernel' must be a non-negative i64 (the kernel id), got "3"}}
func.func private @kernel_not_integer() attributes {cuvil.kernel = "3"}

// -----

// expected-error @+1 {{'cuvil.kernel' must be a non-negative i64 (the kernel id), got 3 : i32}}
func.func private @kernel_i32() attributes {cuvil.kernel = 3 : i32}

// -----

func.func @kernel_on_an_op() {
  // expected-error @+1 {{'cuvil.kernel' is only valid on a function}}
  %c = arith.constant {cuvil.kernel = 0 : i64} 0 : i64
  return
}

// -----

func.func @weight_on_an_op() {
  // expected-error @+1 {{'cuvil.weight' is an argument attribute: put it on a function argument}}
  %c = arith.constant {cuvil.weight} 0 : i64
  return
}

// -----

// expected-error @+1 {{'cuvil.weight' is an argument attribute: put it on a function argument}}
func.func @weight_on_a_function() attributes {cuvil.weight} {
  return
}
