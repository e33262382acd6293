//===- FuseElementwiseChains.cpp - one kernel per elementwise chain -------===//
// Every linalg op becomes one kernel (cuvil-outline-kernels), and each kernel
// reads its inputs from memory and writes its result back. The raise step's
// first elementwise fusion runs before the contractions are lowered, the
// operand narrowing and the unit-dim folding, so the chains those leave were
// separate kernels: in BERT-base bf16 each of q and v was bias add ->
// [s, h, d] -> [h, s, d] transpose -> truncation to bf16, three passes over
// 128x768 f32 per head projection; softmax's masked scores were written out
// by their own kernel and read back by three reductions / maps.
//
// This pass fuses those chains late, with narrower rules than upstream's
// linalg-fuse-elementwise-ops (which would fuse into the packed contractions
// and repeat per-row work per element):
//   * a linalg.transpose that keeps its innermost dim (a permutation of
//     outer dims, read and written as contiguous rows) becomes a generic;
//   * an all-parallel producer fuses into a consumer that reads it through a
//     permutation (not a broadcast: that would recompute it per element) and
//     that is either all-parallel or a reduction of that one input (softmax's
//     max and sum, layer norm's statistics), never a contraction;
//   * a producer with several users fuses into all of them, or none, and only
//     when its body is cheap to repeat (no math functions, no divisions);
//   * an elementwise op reading another's result through a collapse_shape
//     (attention's output [s, h, d] as [s, h*d], truncated to bf16) is
//     expanded to the producer's shape, and the two fuse;
//   * gathers (tensor.extract, linalg.index) stay where they are.
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFUSEELEMENTWISECHAINS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Users of one producer fused at most: each repeats its body.
constexpr unsigned kMaxRepeats = 3;

bool isStatic(Operation *op) {
  auto isStaticType = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return !shaped || shaped.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStaticType) &&
         llvm::all_of(op->getResultTypes(), isStaticType);
}

bool isElementwise(linalg::GenericOp op) {
  return op && op.hasPureTensorSemantics() && op.getNumLoops() == op.getNumParallelLoops() &&
         op.getNumResults() == 1 && isStatic(op) && !cuvil::readsByIndex(op) &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isProjectedPermutation(); });
}

/// Math functions and divisions: more than the memory pass they would save
/// when computed once per user.
bool isCheapToRepeat(linalg::GenericOp op) {
  return !op.getBody()
              ->walk([](Operation *nested) {
                bool costly = isa<math::MathDialect>(nested->getDialect()) ||
                              isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp,
                                  arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
                                  arith::FloorDivSIOp>(nested);
                return costly ? WalkResult::interrupt() : WalkResult::advance();
              })
              .wasInterrupted();
}

/// `use` (an input of a generic) may take its producer's body.
bool acceptsProducer(OpOperand &use) {
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || !consumer.hasPureTensorSemantics() || !isStatic(consumer) ||
      !consumer.isDpsInput(&use) || !consumer.getMatchingIndexingMap(&use).isPermutation())
    return false;
  // All-parallel, or a reduction of this one input; contractions (two
  // inputs multiplied) keep the form the matmul schedules match.
  if (consumer.getNumReductionLoops() > 0 && consumer.getNumDpsInputs() != 1)
    return false;
  return linalg::areElementwiseOpsFusable(&use);
}

bool shouldFuse(OpOperand *use) {
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  if (!isElementwise(producer) || !acceptsProducer(*use))
    return false;
  Value result = use->get();
  if (result.hasOneUse())
    return true;
  if (!isCheapToRepeat(producer))
    return false;
  unsigned users = 0;
  for (OpOperand &other : result.getUses()) {
    if (!acceptsProducer(other))
      return false;
    ++users;
  }
  return users <= kMaxRepeats;
}

/// A transpose of outer dims: as a generic, the unit-dim folding drops its
/// unit dims too (it leaves named ops alone, and the reshapes it puts around
/// them would keep them from fusing), and the schedule copies its rows as it
/// does a transpose's.
bool shouldGeneralize(linalg::TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPermutation();
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1 &&
         op.hasPureTensorSemantics() && isStatic(op);
}

/// An elementwise op reading, through a collapse_shape, the result of another
/// (attention's output transpose [h, s, d] -> [s, h, d], collapsed to
/// [s, h*d] for the projection, then truncated to bf16): the reader is
/// expanded to the producer's shape, so that the two fuse.
bool shouldExpandThroughCollapse(OpOperand *use) {
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  auto collapse = use->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!consumer || !collapse || !isElementwise(consumer) || !use->get().hasOneUse() ||
      !consumer.isDpsInput(use) || !consumer.getMatchingIndexingMap(use).isPermutation())
    return false;
  auto producer = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  return isElementwise(producer) && collapse.getSrc().hasOneUse();
}

/// cmpf(extf(x), c) -> cmpf(x, c') where c converts exactly to x's type:
/// softmax's all-masked check (torch-mlir compares each score, extended to
/// f64, with -inf) then compares 16 f32 lanes per vector instead of 8 f64.
/// Extension is exact and keeps the order and NaNs, so every predicate
/// gives the same answer.
struct CompareBeforeExtension : OpRewritePattern<arith::CmpFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::CmpFOp cmp, PatternRewriter &rewriter) const override {
    auto ext = cmp.getLhs().getDefiningOp<arith::ExtFOp>();
    FloatAttr constant;
    if (!ext || !matchPattern(cmp.getRhs(), m_Constant(&constant)))
      return failure();
    auto narrow = dyn_cast<FloatType>(ext.getIn().getType());
    if (!narrow)
      return failure();
    APFloat value = constant.getValue();
    bool lost = false;
    if (value.convert(narrow.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost) != APFloat::opOK ||
        lost)
      return failure();
    Value narrowed = arith::ConstantOp::create(rewriter, cmp.getLoc(), narrow, rewriter.getFloatAttr(narrow, value));
    rewriter.replaceOpWithNewOp<arith::CmpFOp>(cmp, cmp.getPredicate(), ext.getIn(), narrowed);
    return success();
  }
};

struct CuvilFuseElementwiseChainsPass
    : cuvil::impl::CuvilFuseElementwiseChainsBase<CuvilFuseElementwiseChainsPass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation()->walk([&](linalg::TransposeOp op) {
      if (shouldGeneralize(op))
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldExpandThroughCollapse);
    patterns.add<CompareBeforeExtension>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
