//===- MathApprox.cpp - polynomial erf / exp / tanh -----------------------===//
// LLVM has no vector erf/exp/tanh for x86 without a vector math library, so
// `llvm.intr.exp` on a vector<16xf32> becomes sixteen `expf` calls. MLIR's
// polynomial approximations are plain arith + fma and vectorize as written.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILMATHAPPROX
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The ops approximated; upstream passes either "math.erf" or "erf".
bool isApproximated(StringRef name) {
  name.consume_front("math.");
  return name == "erf" || name == "exp" || name == "tanh";
}

struct CuvilMathApproxPass : cuvil::impl::CuvilMathApproxBase<CuvilMathApproxPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    cuvil::populateMathApproxPatterns(set);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      return signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::cuvil::populateMathApproxPatterns(RewritePatternSet &patterns) {
  // f16/bf16 operands computed in f32, then the f32 polynomials.
  populateMathF32ExpansionPatterns(patterns, isApproximated);
  populateMathPolynomialApproximationPatterns(patterns, isApproximated);
}
