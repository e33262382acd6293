//===- CollapseParallelLoops.cpp - one induction variable per scf.parallel ===//
// Works around async-parallel-for's block-aligned dispatch (see the pass
// description in CuvilPasses.td): only loops with one induction variable
// are dispatched, and those take its plain path. The collapsed trip count is
// the product of the per-dim ones: loops from tiling never have ub < lb, so
// no two negative counts can multiply into a positive one.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILCOLLAPSEPARALLELLOOPS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CuvilCollapseParallelLoopsPass
    : cuvil::impl::CuvilCollapseParallelLoopsBase<CuvilCollapseParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1 && loop.getNumReductions() == 0)
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};

} // namespace
