//===- InitCuvil.cpp - registration entry points --------------------------===//
#include "cuvil/InitCuvil.h"
#include "cuvil/Dialect/TMTensorStandIn.h"
#include "cuvil/TransformOps/CuvilTransformOps.h"
#include "cuvil/Transforms/Passes.h"

void mlir::cuvil::registerCuvilDialect(DialectRegistry &registry) {
  registry.insert<CuvilDialect, TMTensorStandInDialect>();
  registerCuvilTransformExtension(registry);
}

void mlir::cuvil::registerAllCuvilPasses() {
  // Every pass of dialects/CuvilPasses.td (the generated list: a pass added
  // there cannot be left out here).
  static bool once = [] {
    registerCuvilPasses();
    return true;
  }();
  (void)once;
}
