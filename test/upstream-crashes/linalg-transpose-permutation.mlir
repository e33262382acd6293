// An assertion in upstream MLIR 22.1.8's parser, found by cuvil-fuzz (see
// fuzz/README.md): a missing permutation array reaches NamedAttrList::set as a null attribute ("attributes may never be null").
// Kept as a tripwire: when an MLIR upgrade fixes it, this test fails; then
// delete it and its line in fuzz/README.md. Cuvil's import path refuses the
// pattern before parsing (cuvil.parser_guards).
// RUN: not --crash cuvil-opt %s
linalg.transpose permutation=
