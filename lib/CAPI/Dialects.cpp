//===- Dialects.cpp - C API for the Cuvil dialect -------------------------===//
#include "cuvil-c/Dialects.h"

#include "cuvil/Dialect/CuvilOps.h"
#include "cuvil/Dialect/TMTensorStandIn.h"
#include "cuvil/InitCuvil.h"
#include "cuvil/TransformOps/CuvilTransformOps.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::cuvil;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Cuvil, cuvil, mlir::cuvil::CuvilDialect)

void cuvilRegisterTransformExtension(MlirDialectRegistry registry) {
  registerCuvilTransformExtension(*unwrap(registry));
}

void cuvilRegisterTMTensorStandIn(MlirDialectRegistry registry) {
  unwrap(registry)->insert<TMTensorStandInDialect>();
}

void cuvilRegisterPasses(void) { registerAllCuvilPasses(); }

static ArrayRef<int64_t> arr(intptr_t n, const int64_t *p) {
  return ArrayRef<int64_t>(p, static_cast<size_t>(n));
}

bool cuvilAttributeIsASparseCSR(MlirAttribute attr) {
  return isa<SparseCSRAttr>(unwrap(attr));
}

MlirAttribute cuvilSparseCSRAttrGetChecked(MlirLocation loc, intptr_t numRowPtr,
                                           const int64_t *rowPtr, intptr_t numColIdx,
                                           const int64_t *colIdx) {
  Location l = unwrap(loc);
  return wrap(SparseCSRAttr::getChecked([&] { return emitError(l); }, l.getContext(),
                                        arr(numRowPtr, rowPtr), arr(numColIdx, colIdx)));
}

intptr_t cuvilSparseCSRAttrGetNumRowPtr(MlirAttribute attr) {
  return cast<SparseCSRAttr>(unwrap(attr)).getRowPtr().size();
}
int64_t cuvilSparseCSRAttrGetRowPtr(MlirAttribute attr, intptr_t pos) {
  return cast<SparseCSRAttr>(unwrap(attr)).getRowPtr()[pos];
}
intptr_t cuvilSparseCSRAttrGetNumColIdx(MlirAttribute attr) {
  return cast<SparseCSRAttr>(unwrap(attr)).getColIdx().size();
}
int64_t cuvilSparseCSRAttrGetColIdx(MlirAttribute attr, intptr_t pos) {
  return cast<SparseCSRAttr>(unwrap(attr)).getColIdx()[pos];
}

bool cuvilAttributeIsABlockMasked(MlirAttribute attr) {
  return isa<BlockMaskedAttr>(unwrap(attr));
}

MlirAttribute cuvilBlockMaskedAttrGetChecked(MlirLocation loc, int64_t blockRows,
                                             int64_t blockCols, intptr_t numRowPtr,
                                             const int64_t *rowPtr, intptr_t numColIdx,
                                             const int64_t *colIdx) {
  Location l = unwrap(loc);
  int64_t block[2] = {blockRows, blockCols};
  return wrap(BlockMaskedAttr::getChecked([&] { return emitError(l); }, l.getContext(),
                                          ArrayRef<int64_t>(block), arr(numRowPtr, rowPtr),
                                          arr(numColIdx, colIdx)));
}

int64_t cuvilBlockMaskedAttrGetBlockDim(MlirAttribute attr, intptr_t pos) {
  return cast<BlockMaskedAttr>(unwrap(attr)).getBlock()[pos];
}
intptr_t cuvilBlockMaskedAttrGetNumRowPtr(MlirAttribute attr) {
  return cast<BlockMaskedAttr>(unwrap(attr)).getRowPtr().size();
}
int64_t cuvilBlockMaskedAttrGetRowPtr(MlirAttribute attr, intptr_t pos) {
  return cast<BlockMaskedAttr>(unwrap(attr)).getRowPtr()[pos];
}
intptr_t cuvilBlockMaskedAttrGetNumColIdx(MlirAttribute attr) {
  return cast<BlockMaskedAttr>(unwrap(attr)).getColIdx().size();
}
int64_t cuvilBlockMaskedAttrGetColIdx(MlirAttribute attr, intptr_t pos) {
  return cast<BlockMaskedAttr>(unwrap(attr)).getColIdx()[pos];
}
