//===- PartitionParallelLoops.cpp - one contiguous part per thread --------===//
// scf.parallel (i) = (lb) to (ub) step (s)  { body(i) }
//   ->
// scf.parallel (p) = (0) to (parts) step (1) {
//   scf.for (i) = (lb + p*chunk) to (min(lb + (p+1)*chunk, ub)) step (s) { body(i) }
// }
// with chunk = ceil(ceil((ub - lb) / s) / parts) * s. A part past the end
// is an empty loop.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILPARTITIONPARALLELLOOPS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

void partition(scf::ParallelOp loop, int64_t parts) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound()[0], ub = loop.getUpperBound()[0], step = loop.getStep()[0];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = arith::ConstantIndexOp::create(b, loc, parts);
  Value trip = arith::CeilDivSIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), step);
  Value chunk = arith::MulIOp::create(b, loc, arith::CeilDivSIOp::create(b, loc, trip, count), step);

  auto outer = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{count}, ValueRange{one});
  b.setInsertionPointToStart(outer.getBody());
  Value part = outer.getInductionVars()[0];
  Value lo = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, part, chunk));
  Value hi = arith::MinSIOp::create(b, loc, arith::AddIOp::create(b, loc, lo, chunk), ub);
  auto inner = scf::ForOp::create(b, loc, lo, hi, step);

  Block *from = loop.getBody(), *to = inner.getBody();
  from->getArgument(0).replaceAllUsesWith(inner.getInductionVar());
  // Everything but the scf.reduce terminator moves in front of the scf.yield.
  to->getOperations().splice(to->getTerminator()->getIterator(), from->getOperations(), from->begin(),
                             std::prev(from->end()));
  loop.erase();
}

struct CuvilPartitionParallelLoopsPass
    : cuvil::impl::CuvilPartitionParallelLoopsBase<CuvilPartitionParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (parts < 2)
      return;
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() == 1 && loop.getNumReductions() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      partition(loop, parts);
  }
};

} // namespace
