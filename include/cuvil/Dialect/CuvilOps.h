//===- CuvilOps.h - Cuvil ops ----------------------------------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVILOPS_H
#define CUVIL_DIALECT_CUVILOPS_H

#include "cuvil/Dialect/CuvilAttrs.h"
#include "cuvil/Dialect/CuvilDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "cuvil/Dialect/CuvilOps.h.inc"

#endif
