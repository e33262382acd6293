//===- InitCuvil.h - register everything Cuvil adds ------------*- C++ -*-===//
#ifndef CUVIL_INITCUVIL_H
#define CUVIL_INITCUVIL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::cuvil {
/// Adds the Cuvil dialect, the tm_tensor stand-in (TMTensorStandIn.h) and the
/// transform.cuvil.* ops (a Transform-dialect
/// extension) to `registry`.
void registerCuvilDialect(DialectRegistry &registry);
/// Registers Cuvil's passes with the global pass registry (idempotent).
void registerAllCuvilPasses();
} // namespace mlir::cuvil

#endif
