//===- RoundToNearestInt.cpp - fptosi(roundeven(x)) as llvm.intr.lrint ----===//
// LLVM lowers llvm.roundeven + fptosi as two instructions (vrndscaleps,
// vcvttps2dq); llvm.lrint under the default rounding mode (round to nearest
// even, which compiled code never changes) is one (vcvtps2dq). See the pass
// description in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILROUNDTONEARESTINT
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// f32 / f64 -> i32 / i64 on a scalar or a 1-D vector (llvm.intr.lrint takes
/// no n-D vector).
bool convertsToInt(arith::FPToSIOp op) {
  Type in = op.getIn().getType(), out = op.getType();
  if (auto vector = dyn_cast<VectorType>(in); vector && (vector.getRank() != 1 || vector.isScalable()))
    return false;
  Type inElem = getElementTypeOrSelf(in), outElem = getElementTypeOrSelf(out);
  return (inElem.isF32() || inElem.isF64()) && (outElem.isInteger(32) || outElem.isInteger(64));
}

struct CuvilRoundToNearestIntPass : cuvil::impl::CuvilRoundToNearestIntBase<CuvilRoundToNearestIntPass> {
  void runOnOperation() override {
    getOperation().walk([](arith::FPToSIOp op) {
      auto round = op.getIn().getDefiningOp<math::RoundEvenOp>();
      if (!round || !convertsToInt(op))
        return;
      OpBuilder b(op);
      Value lrint = LLVM::LrintOp::create(b, op.getLoc(), op.getType(), round.getOperand());
      op.replaceAllUsesWith(lrint);
      op.erase();
      if (round->use_empty())
        round.erase();
    });
  }
};

} // namespace
