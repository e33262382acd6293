// RUN: cuvil-opt %s --split-input-file --cuvil-mark-weights | FileCheck %s
// The arguments of @main with a cuvil.kind other than "user_input" become
// weights; inputs, arguments without a kind and other functions are left
// alone.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    %{{.*}}: tensor<4x8xf32> {cuvil.arg = "x", cuvil.kind = "user_input"}
// CHECK-SAME:    %{{.*}}: tensor<8x8xf32> {cuvil.arg = "l.weight", cuvil.kind = "parameter", cuvil.weight}
// CHECK-SAME:    %{{.*}}: tensor<8xf32> {cuvil.arg = "bn.running_mean", cuvil.kind = "buffer", cuvil.weight}
// CHECK-SAME:    %{{.*}}: tensor<8xi64> {cuvil.arg = "pos", cuvil.kind = "buffer_nonpersistent", cuvil.weight}
// CHECK-SAME:    %{{.*}}: tensor<8xf32> {cuvil.arg = "c", cuvil.kind = "constant", cuvil.weight}
// CHECK-SAME:    %{{.*}}: tensor<8xf32>)
// CHECK-LABEL: func.func @other
// CHECK-SAME:    %{{.*}}: tensor<8xf32> {cuvil.kind = "parameter"})
func.func @main(%x: tensor<4x8xf32> {cuvil.arg = "x", cuvil.kind = "user_input"},
                %w: tensor<8x8xf32> {cuvil.arg = "l.weight", cuvil.kind = "parameter"},
                %m: tensor<8xf32> {cuvil.arg = "bn.running_mean", cuvil.kind = "buffer"},
                %p: tensor<8xi64> {cuvil.arg = "pos", cuvil.kind = "buffer_nonpersistent"},
                %c: tensor<8xf32> {cuvil.arg = "c", cuvil.kind = "constant"},
                %u: tensor<8xf32>) {
  return
}
func.func @other(%w: tensor<8xf32> {cuvil.kind = "parameter"}) {
  return
}

// -----

// Already marked: unchanged (the pass can run twice).
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%{{.*}}: tensor<8xf32> {cuvil.kind = "parameter", cuvil.weight})
func.func @main(%w: tensor<8xf32> {cuvil.kind = "parameter", cuvil.weight}) {
  return
}

// -----

// A private @main is not the entry point.
// CHECK-LABEL: func.func private @main
// CHECK-SAME:    (%{{.*}}: tensor<8xf32> {cuvil.kind = "parameter"})
func.func private @main(%w: tensor<8xf32> {cuvil.kind = "parameter"}) {
  return
}
