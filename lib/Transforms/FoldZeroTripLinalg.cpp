//===- FoldZeroTripLinalg.cpp - linalg ops with an empty domain -----------===//
// A linalg op whose loops run zero times leaves its inits as they are; see
// the pass description in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDZEROTRIPLINALG
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CuvilFoldZeroTripLinalgPass
    : cuvil::impl::CuvilFoldZeroTripLinalgBase<CuvilFoldZeroTripLinalgPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> empty;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Tensor semantics only: a memref op writes in place, and its results
      // (none) have nothing to forward.
      if (!op.hasPureTensorSemantics() || op->getNumResults() != op.getNumDpsInits())
        return;
      if (llvm::is_contained(op.getStaticLoopRanges(), 0))
        empty.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : empty) {
      SmallVector<Value> inits(op.getDpsInits());
      rewriter.replaceOp(op, inits);
    }
  }
};

} // namespace
