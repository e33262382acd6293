// An assertion in upstream MLIR 22.1.8, found by cuvil-fuzz (see
// fuzz/README.md): a pattern op (transform.apply_patterns.*) directly in a
// transform.foreach body; verifying the sequence's consume annotations asks
// the foreach for its effects, which casts every body op to a transform op.
// Kept as a tripwire: when an MLIR upgrade fixes it, this test fails; then
// delete it and its line in fuzz/README.md. Cuvil's transform driver refuses
// the pattern before parsing (cuvil.parser_guards).
// RUN: not --crash cuvil-opt %s
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %ops = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops : !transform.any_op {
      transform.apply_patterns.vector.lower_multi_reduction
    }
    transform.yield
  }
}
