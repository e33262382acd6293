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
  }];
  let cppNamespace = "::mlir::cuvil";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let extraClassDeclaration = [{
    /// Defined in CuvilAttrs.cpp, where the attribute storage is complete.
    void registerAttributes();
  }];
}

class Cuvil_Op<string mnemonic, list<Trait> traits = []> :
    Op<Cuvil_Dialect, mnemonic, traits>;

#endif // CUVIL_DIALECT
