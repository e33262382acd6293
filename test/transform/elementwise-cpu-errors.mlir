// RUN: not cuvil-opt %s --split-input-file --transform-preload-library=transform-library-paths=%transform_scripts/elementwise_cpu.mlir \
// RUN:   --transform-interpreter 2>&1 | FileCheck %s

// What the actions of transform_scripts/elementwise_cpu.mlir reject. The errors
// point into the script, hence FileCheck on stderr, not --verify-diagnostics
// (see elementwise-cpu.mlir for the schedule itself).

// CHECK: elementwise_cpu.mlir:{{[0-9]+}}:{{[0-9]+}}: error: too many tile sizes: 3 for an op with 2 loop(s)
// CHECK: elementwise-cpu-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: note: target op

// An action given sizes for more loops than its op has fails.
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_tile_rows_serial(%op: !transform.any_op {transform.consumed}, %rows: !transform.param<i64> {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %rows = transform.param.constant 8 : i64 -> !transform.param<i64>
    %three = transform.merge_handles %rows, %rows, %rows : !transform.param<i64>
    transform.include @cuvil_ew_tile_rows_serial failures(propagate) (%op, %three) : (!transform.any_op, !transform.param<i64>) -> ()
    transform.yield
  }
}

func.func @wrong_sizes(%x: tensor<24x64xi1>) -> tensor<24x64xi1> {
  %true = arith.constant true
  %f = linalg.fill ins(%true : i1) outs(%x : tensor<24x64xi1>) -> tensor<24x64xi1>
  return %f : tensor<24x64xi1>
}

// -----

// The transpose tiles need two loops: a rank-1 op is rejected.
// CHECK: elementwise_cpu.mlir:{{[0-9]+}}:{{[0-9]+}}: error: every row of sizes is longer than the 1 loop(s) of the op
module attributes {transform.with_named_sequence} {
  // The library's sequences used here (defined by the preloaded script).
  transform.named_sequence private @cuvil_ew_transpose_tiles(%t: !transform.any_op {transform.consumed}, %nest: !transform.any_op {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.fill"]} in %root : (!transform.any_op) -> !transform.any_op
    %forall = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @cuvil_ew_transpose_tiles failures(propagate) (%op, %forall) : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
}

func.func @rank1_transpose_tiles(%x: tensor<100xf32>) -> tensor<100xf32> {
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%x : tensor<100xf32>) -> tensor<100xf32>
  return %f : tensor<100xf32>
}
