//===- Passes.h - Cuvil passes ---------------------------------*- C++ -*-===//
#ifndef CUVIL_TRANSFORMS_PASSES_H
#define CUVIL_TRANSFORMS_PASSES_H

#include "cuvil/Dialect/CuvilOps.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {
#define GEN_PASS_DECL
#include "cuvil/Dialect/CuvilPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

#endif
