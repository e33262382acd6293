//===- CuvilAttrs.h - Cuvil layout encodings -------------------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVILATTRS_H
#define CUVIL_DIALECT_CUVILATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/DialectImplementation.h"

#include "cuvil/Dialect/CuvilEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "cuvil/Dialect/CuvilAttrs.h.inc"

namespace mlir::cuvil {
/// The layout encoding of a tensor type, if it is one of Cuvil's.
inline Attribute getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  Attribute enc = tensor.getEncoding();
  return isa_and_nonnull<SparseCSRAttr, BlockMaskedAttr>(enc) ? enc : Attribute();
}
} // namespace mlir::cuvil

#endif
