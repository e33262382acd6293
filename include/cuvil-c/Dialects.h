/*===- cuvil-c/Dialects.h - C API for the Cuvil dialect -----------*- C -*-===*/
#ifndef CUVIL_C_DIALECTS_H
#define CUVIL_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Cuvil, cuvil);

/// Adds the transform.cuvil.* ops (a Transform-dialect extension) to `registry`.
MLIR_CAPI_EXPORTED void cuvilRegisterTransformExtension(MlirDialectRegistry registry);

/// Adds the stand-in for torch-mlir's tm_tensor ops (cuvil/Dialect/TMTensorStandIn.h).
MLIR_CAPI_EXPORTED void cuvilRegisterTMTensorStandIn(MlirDialectRegistry registry);

/// Registers Cuvil's passes (cuvil-lower-to-linalg, cuvil-raise-linalg).
MLIR_CAPI_EXPORTED void cuvilRegisterPasses(void);

/* #cuvil.sparse_csr */
MLIR_CAPI_EXPORTED bool cuvilAttributeIsASparseCSR(MlirAttribute attr);
/// Returns a null attribute (and emits a diagnostic) if the pattern is invalid.
MLIR_CAPI_EXPORTED MlirAttribute cuvilSparseCSRAttrGetChecked(
    MlirLocation loc, intptr_t numRowPtr, const int64_t *rowPtr,
    intptr_t numColIdx, const int64_t *colIdx);
MLIR_CAPI_EXPORTED intptr_t cuvilSparseCSRAttrGetNumRowPtr(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cuvilSparseCSRAttrGetRowPtr(MlirAttribute attr, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t cuvilSparseCSRAttrGetNumColIdx(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cuvilSparseCSRAttrGetColIdx(MlirAttribute attr, intptr_t pos);

/* #cuvil.block_masked */
MLIR_CAPI_EXPORTED bool cuvilAttributeIsABlockMasked(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute cuvilBlockMaskedAttrGetChecked(
    MlirLocation loc, int64_t blockRows, int64_t blockCols, intptr_t numRowPtr,
    const int64_t *rowPtr, intptr_t numColIdx, const int64_t *colIdx);
MLIR_CAPI_EXPORTED int64_t cuvilBlockMaskedAttrGetBlockDim(MlirAttribute attr, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t cuvilBlockMaskedAttrGetNumRowPtr(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cuvilBlockMaskedAttrGetRowPtr(MlirAttribute attr, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t cuvilBlockMaskedAttrGetNumColIdx(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t cuvilBlockMaskedAttrGetColIdx(MlirAttribute attr, intptr_t pos);

#ifdef __cplusplus
}
#endif

#endif
