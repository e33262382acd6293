//===- CuvilDialect.td - the Cuvil dialect -----------------*- tablegen -*-===//
// Tensor-level ops for transformer/CNN inference and layout encodings for
// sparse tensors. Everything lowers to upstream linalg/tensor/arith/scf.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT
#define CUVIL_DIALECT

include "mlir/IR/OpBase.td"

def Cuvil_Dialect : Dialect {
  let name = "cuvil";
  let summary = "Cuvil: tensor ops and sparse layouts for inference compilation";
  let description = [{
    Ops on value-semantics tensors (matmul, broadcasting elementwise ops,
    softmax, layer norm, attention, dtype casts) and tensor layout encodings
    (`#cuvil.sparse_csr`, `#cuvil.block_masked`). The `cuvil-lower-to-linalg`
    pass rewrites them into upstream dialects.

    ### Discardable attributes

    The compile path passes facts between its stages as attributes of
    `func.func` (kept by `convert-func-to-llvm` on `llvm.func`); the dialect
    verifies their types and places.

    On the arguments of a function:

    * `cuvil.arg = "<name>"` (string): the model tensor the argument is
      bound to (the importer puts it on every argument of `@main`).
    * `cuvil.kind = "<kind>"` (string): where the argument comes from, one of
      `"user_input"`, `"parameter"`, `"buffer"`, `"buffer_nonpersistent"`,
      `"constant"`.
    * `cuvil.weight` (unit): the argument is a weight, the same on every
      call (`cuvil-mark-weights` sets it from `cuvil.kind`); computations on
      weights alone move into the prepack function (`cuvil-split-prepack`).
    * `cuvil.packed = <index> : i64`: the argument is result `<index>` of the
      prepack function (set by `cuvil-split-prepack`).

    On a function:

    * `cuvil.kernel = <id> : i64`: the function is an outlined kernel
      (`cuvil-outline-kernels`); `<id>` is its index in the profiler's
      counters (`cuvil-profile-kernels`, `cuvil/profiling.py`).
  }];
  let cppNamespace = "::mlir::cuvil";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // The discardable attributes above.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let extraClassDeclaration = [{
    /// Defined in CuvilAttrs.cpp, where the attribute storage is complete.
    void registerAttributes();

    //===------------------------------------------------------------------===//
    // Discardable attributes (see the dialect description). Passes and the
    // C API use these names and accessors, never the strings.
    //===------------------------------------------------------------------===//

    static constexpr ::llvm::StringLiteral getArgAttrName() { return "cuvil.arg"; }
    static constexpr ::llvm::StringLiteral getKindAttrName() { return "cuvil.kind"; }
    static constexpr ::llvm::StringLiteral getWeightAttrName() { return "cuvil.weight"; }
    static constexpr ::llvm::StringLiteral getPackedAttrName() { return "cuvil.packed"; }
    static constexpr ::llvm::StringLiteral getKernelAttrName() { return "cuvil.kernel"; }

    /// The `cuvil.kind` of the model's inputs; every other kind is a weight.
    static constexpr ::llvm::StringLiteral getUserInputKind() { return "user_input"; }
    /// Every valid `cuvil.kind`.
    static ::llvm::ArrayRef<::llvm::StringLiteral> getArgKinds();

    /// The `cuvil.kind` of argument `index` of `fn`, if it has one.
    static std::optional<::llvm::StringRef> getArgKind(::mlir::FunctionOpInterface fn,
                                                       unsigned index);
    /// Whether argument `index` of `fn` carries `cuvil.weight`.
    static bool isWeight(::mlir::FunctionOpInterface fn, unsigned index);
    static void setWeight(::mlir::FunctionOpInterface fn, unsigned index);
    /// `cuvil.packed = <index>`, for the attributes of a new argument.
    static ::mlir::NamedAttribute getPackedAttr(::mlir::Builder &b, int64_t index);
    /// The prepack result feeding argument `index` of `fn`, if any.
    static std::optional<int64_t> getPackedIndex(::mlir::FunctionOpInterface fn,
                                                 unsigned index);
    /// The `cuvil.kernel` id of a function, if it is an outlined kernel.
    static std::optional<int64_t> getKernelId(::mlir::Operation *fn);
    static void setKernelId(::mlir::Operation *fn, int64_t id);
  }];
}

class Cuvil_Op<string mnemonic, list<Trait> traits = []> :
    Op<Cuvil_Dialect, mnemonic, traits>;

#endif // CUVIL_DIALECT
