//===- CuvilTransformOps.h - Cuvil's Transform-dialect extension -*- C++ -*-===//
//
// transform.cuvil.* ops (dialects/CuvilTransformOps.td): matchers, per-rank
// size lists and packed-size tiling/vectorization for the transform scripts.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMOPS_CUVILTRANSFORMOPS_H
#define CUVIL_TRANSFORMOPS_CUVILTRANSFORMOPS_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::cuvil {
/// Adds the transform.cuvil.* ops to the Transform dialect (when it loads).
void registerCuvilTransformExtension(DialectRegistry &registry);
} // namespace mlir::cuvil

#endif
