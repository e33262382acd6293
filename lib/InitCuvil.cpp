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
  static bool once = [] {
    registerCuvilCheckGatherIndices();
    registerCuvilCollapseParallelLoops();
    registerCuvilAmxMatmul();
    registerCuvilBf16VectorMemoryAsI16();
    registerCuvilCollapseShortRows();
    registerCuvilEarlyDealloc();
    registerCuvilFoldUnitExtentDims();
    registerCuvilFoldZeroTripLinalg();
    registerCuvilGuardIntegerDivision();
    registerCuvilIm2colConv();
    registerCuvilPropagateChannelsLast();
    registerCuvilLowerToLinalg();
    registerCuvilLowerTMTensor();
    registerCuvilLowerX86Dot();
    registerCuvilMarkWeights();
    registerCuvilMathApprox();
    registerCuvilNarrowContractionOperands();
    registerCuvilUnsignedInt8Lhs();
    registerCuvilOutlineKernels();
    registerCuvilPartitionParallelLoops();
    registerCuvilPrepareEntryPoints();
    registerCuvilProfileKernels();
    registerCuvilRaiseLinalg();
    registerCuvilSplitPrepack();
    registerCuvilStripAsserts();
    registerCuvilWidenBoolMemrefs();
    registerCuvilWidenBoolTensors();
    registerCuvilWinogradConv();
    return true;
  }();
  (void)once;
}
