//===- CuvilPasses.td - Cuvil passes -----------------------*- tablegen -*-===//
#ifndef CUVIL_PASSES
#define CUVIL_PASSES

include "mlir/Pass/PassBase.td"

def CuvilLowerToLinalg : Pass<"cuvil-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower Cuvil ops and layouts to linalg/tensor/arith/scf on tensors";
  let description = [{
    Rewrites every Cuvil op into upstream dialects on value-semantics
    tensors, dynamic dims included. Tensors with a `#cuvil.sparse_csr` or
    `#cuvil.block_masked` encoding become dense 1-D tensors of their stored
    values; ops on them iterate the stored entries only.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"
  ];
}

def CuvilRaiseLinalg : Pass<"cuvil-raise-linalg", "::mlir::ModuleOp"> {
  let summary = "Raise recognised linalg patterns (from torch-mlir) to Cuvil ops";
  let description = [{
    Recognises linalg.matmul / linalg.batch_matmul (with a transposed
    right-hand side) and rewrites them to `cuvil.matmul`, so the schedule
    sees one op per matmul and weights can be prepacked.
  }];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

def CuvilSplitPrepack : Pass<"cuvil-split-prepack", "::mlir::ModuleOp"> {
  let summary = "Hoist computations on weights into a run-once prepack function";
  let description = [{
    For each function whose arguments carry the `cuvil.weight` unit
    attribute, ops that depend only on weights and constants (e.g. the
    transpose of an `nn.Linear` weight) move into a new function
    `@<name>_prepack(weights...) -> (packed...)`. The original function then
    takes the packed values in place of the weights they were computed from
    (weights still read directly stay as arguments), so the work runs once at
    load instead of on every call. The argument attribute
    `cuvil.packed = <index>` records which prepack result feeds each argument.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def CuvilWidenBoolMemrefs : Pass<"cuvil-widen-bool-memrefs", "::mlir::ModuleOp"> {
  let summary = "Store booleans as bytes: memref<...xi1> becomes memref<...xi8>";
  let description = [{
    After bufferization and loop lowering, rewrites every memref of `i1` to a
    memref of `i8` (loads truncate, stores zero-extend), function signatures
    included. One byte per boolean is also what numpy and PyTorch use, so
    boolean inputs and outputs keep their layout. MLIR's memref-to-LLVM
    lowering does not accept stores of sub-byte elements.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

#endif // CUVIL_PASSES
