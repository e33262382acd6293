//===- InitCuvil.cpp - registration entry points --------------------------===//
#include "cuvil/InitCuvil.h"
#include "cuvil/Transforms/Passes.h"

void mlir::cuvil::registerCuvilDialect(DialectRegistry &registry) {
  registry.insert<CuvilDialect>();
}

void mlir::cuvil::registerAllCuvilPasses() {
  static bool once = [] {
    registerCuvilCollapseParallelLoops();
    registerCuvilEarlyDealloc();
    registerCuvilIm2colConv();
    registerCuvilLowerToLinalg();
    registerCuvilMathApprox();
    registerCuvilOutlineKernels();
    registerCuvilPartitionParallelLoops();
    registerCuvilProfileKernels();
    registerCuvilRaiseLinalg();
    registerCuvilSplitPrepack();
    registerCuvilWidenBoolMemrefs();
    registerCuvilWidenBoolTensors();
    registerCuvilWinogradConv();
    return true;
  }();
  (void)once;
}
