//===- CuvilDialect.cpp - dialect registration ----------------------------===//
#include "cuvil/Dialect/CuvilDialect.h"
#include "cuvil/Dialect/CuvilOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cuvil;

#include "cuvil/Dialect/CuvilDialect.cpp.inc"

void CuvilDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cuvil/Dialect/CuvilOps.cpp.inc"
      >();
  registerAttributes();
}

/// Folds produce dense splats/elements; they become arith.constant.
Operation *CuvilDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}
