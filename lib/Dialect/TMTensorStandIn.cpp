//===- TMTensorStandIn.cpp - a holder for torch-mlir's tm_tensor ops ------===//
#include "cuvil/Dialect/TMTensorStandIn.h"

using namespace mlir;

MLIR_DEFINE_EXPLICIT_TYPE_ID(mlir::cuvil::TMTensorStandInDialect)

cuvil::TMTensorStandInDialect::TMTensorStandInDialect(MLIRContext *context)
    : Dialect(getDialectNamespace(), context, TypeID::get<TMTensorStandInDialect>()) {
  // Its ops are parsed and printed in the generic form only.
  allowUnknownOperations();
}
