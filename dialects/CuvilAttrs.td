//===- CuvilAttrs.td - Cuvil layout encodings --------------*- tablegen -*-===//
// Layouts are tensor encodings: the sparsity pattern is part of the type, so
// lowering can emit code whose cost follows the number of stored entries.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_ATTRS
#define CUVIL_ATTRS

include "CuvilDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/EnumAttr.td"

class Cuvil_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Cuvil_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Cuvil_SparseCSRAttr : Cuvil_Attr<"SparseCSR", "sparse_csr",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A fixed compressed-sparse-row pattern for a rank-2 tensor";
  let description = [{
    `row_ptr[i]..row_ptr[i+1]` indexes the stored entries of row `i`;
    `col_idx[p]` is the column of stored entry `p`. A tensor with this
    encoding holds exactly `col_idx.size()` values, in that order.

    ```mlir
    tensor<4x8xf32, #cuvil.sparse_csr<{row_ptr = [0, 2, 5, 7, 7],
                                       col_idx = [1, 3, 0, 2, 4, 1, 3]}>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$rowPtr,
                        ArrayRefParameter<"int64_t">:$colIdx);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumRows() const { return getRowPtr().size() - 1; }
    int64_t getNumStored() const { return getColIdx().size(); }
  }];
}

def Cuvil_BlockMaskedAttr : Cuvil_Attr<"BlockMasked", "block_masked",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A block-sparse mask: which (bm x bn) blocks are present";
  let description = [{
    The last two dims are split into blocks of `block = [bm, bn]`; present
    blocks are listed in CSR form over block rows (`row_ptr`, `col_idx` count
    blocks, not elements). Used on attention scores (`cuvil.attention`'s
    `layout`) and on tensors; leading dims are batch dims sharing the mask.

    ```mlir
    #cuvil.block_masked<{block = [4, 4], row_ptr = [0, 1, 3], col_idx = [0, 0, 1]}>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$block,
                        ArrayRefParameter<"int64_t">:$rowPtr,
                        ArrayRefParameter<"int64_t">:$colIdx);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumBlockRows() const { return getRowPtr().size() - 1; }
    int64_t getNumStoredBlocks() const { return getColIdx().size(); }
    /// Checks the mask against a [..., rows, cols] shape (dynamic dims skip).
    ::llvm::LogicalResult verifyAgainstShape(::llvm::ArrayRef<int64_t> shape,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

def Cuvil_RoundingMode : I32EnumAttr<"RoundingMode",
    "Rounding used by cuvil.dtype_cast when precision is lost", [
      I32EnumAttrCase<"nearest_even", 0>,
      I32EnumAttrCase<"toward_zero", 1>
    ]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_RoundingModeAttr : EnumAttr<Cuvil_Dialect, Cuvil_RoundingMode, "rounding">;

#endif // CUVIL_ATTRS
