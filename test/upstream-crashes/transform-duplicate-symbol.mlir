// An assertion in upstream MLIR 22.1.8, found by the cuvil-opt mutation
// campaign (see fuzz/README.md): the transform dialect's
// transform.with_named_sequence verifier builds a call graph before the
// symbol table is verified, and a symbol defined twice asserts in
// SymbolTable's constructor ("expected region to contain uniquely named
// symbol operations").
// Kept as a tripwire: when an MLIR upgrade fixes it, this test fails; then
// delete it and its line in fuzz/README.md. Cuvil's transform driver refuses
// the pattern before parsing (cuvil.parser_guards).
// RUN: not --crash cuvil-opt %s
module attributes {transform.with_named_sequence} {
  transform.named_sequence private @a(%op: !transform.any_op {transform.readonly})
  transform.named_sequence private @a(%op: !transform.any_op {transform.readonly})
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.include @a failures(propagate) (%root) : (!transform.any_op) -> ()
    transform.yield
  }
}
