//===- CuvilDialect.h - the Cuvil dialect ----------------------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVILDIALECT_H
#define CUVIL_DIALECT_CUVILDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>

#include "cuvil/Dialect/CuvilDialect.h.inc"

#endif
