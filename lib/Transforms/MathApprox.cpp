//===- MathApprox.cpp - polynomial erf / exp / tanh -----------------------===//
// LLVM has no vector erf/exp/tanh for x86 without a vector math library, so
// `llvm.intr.exp` on a vector<16xf32> becomes sixteen `expf` calls. MLIR's
// polynomial approximations are plain arith + fma and vectorize as written;
// f32 erf has its own (ErfRational), cheaper than MLIR's.
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <cmath>

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

/// A constant of f32 scalar or vector type `type`.
Value f32Constant(PatternRewriter &rewriter, Location loc, Type type, double value) {
  return cuvil::splatConstant(rewriter, loc, type, rewriter.getF32FloatAttr(static_cast<float>(value)));
}

bool isF32ScalarOrVector(Type type) {
  return (isa<FloatType>(type) || isa<VectorType>(type)) && getElementTypeOrSelf(type).isF32();
}

/// f32 erf(x) = x P(x^2) / Q(x^2) on x clamped to [-4, 4] (beyond, erf is
/// +-1 in f32), P of degree 6 and Q of degree 4 in x^2: the rational
/// approximation of Eigen's and XLA's float erf (within 2e-7 of erf
/// everywhere; test_math_approx.py checks a dense grid against torch.erf).
/// One division and no selects of coefficients: upstream's approximation
/// picks coefficients from three intervals per lane (18 blends per vector
/// beside 2 divisions: BERT's GELU ran at ~40 cycles per 16 lanes).
struct ErfRational : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isF32ScalarOrVector(type))
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    auto cst = [&](double v) { return f32Constant(rewriter, loc, type, v); };
    auto fma = [&](Value a, Value b, Value c) { return math::FmaOp::create(rewriter, loc, a, b, c).getResult(); };
    // Clamps that keep a NaN (an unordered compare selects x): x86 makes
    // each one vminps / vmaxps with the operands in this order.
    Value x = op.getOperand();
    Value four = cst(4.0), minusFour = cst(-4.0);
    x = arith::SelectOp::create(rewriter, loc,
                                arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::ULT, x, four), x, four);
    x = arith::SelectOp::create(rewriter, loc,
                                arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UGT, x, minusFour), x,
                                minusFour);
    Value x2 = arith::MulFOp::create(rewriter, loc, x, x);
    // Numerator (odd in x) and denominator (even) coefficients, highest first.
    const double alpha[] = {-2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
                            -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                            -1.60960333262415e-02};
    const double beta[] = {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                           -7.37332916720468e-03, -1.42647390514189e-02};
    Value p = cst(alpha[0]);
    for (double a : ArrayRef<double>(alpha).drop_front())
      p = fma(x2, p, cst(a));
    p = arith::MulFOp::create(rewriter, loc, x, p);
    Value q = cst(beta[0]);
    for (double b : ArrayRef<double>(beta).drop_front())
      q = fma(x2, q, cst(b));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, q);
    return success();
  }
};

/// erf(x / c) -> erf(x * (1 / c)) for a constant c: GELU's erf(x / sqrt(2))
/// from torch-mlir's decomposition was a vector division per 16 lanes (a
/// third of the remaining GELU time on Zen 4). Eager's GELU kernel multiplies
/// by M_SQRT1_2 as well, and erf is approximated anyway.
struct ErfOfDivisionByConstant : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    auto div = op.getOperand().getDefiningOp<arith::DivFOp>();
    if (!div || !isF32ScalarOrVector(div.getType()))
      return rewriter.notifyMatchFailure(op, "operand is not an f32 division");
    FloatAttr divisor;
    Attribute attr;
    if (!matchPattern(div.getRhs(), m_Constant(&attr)))
      return rewriter.notifyMatchFailure(op, "divisor is not a constant");
    if (auto splat = dyn_cast<SplatElementsAttr>(attr))
      divisor = dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>());
    else
      divisor = dyn_cast<FloatAttr>(attr);
    if (!divisor || divisor.getValueAsDouble() == 0.0 || !std::isfinite(divisor.getValueAsDouble()))
      return rewriter.notifyMatchFailure(op, "divisor is not a finite non-zero splat");
    Value inverse = f32Constant(rewriter, op.getLoc(), div.getType(), 1.0 / divisor.getValueAsDouble());
    Value scaled = arith::MulFOp::create(rewriter, op.getLoc(), div.getLhs(), inverse);
    rewriter.replaceOpWithNewOp<math::ErfOp>(op, scaled);
    return success();
  }
};

/// Upstream's approximations: all but erf (ErfRational's).
bool isApproximatedUpstream(StringRef name) {
  name.consume_front("math.");
  return name == "exp" || name == "tanh";
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
  // f16/bf16 operands computed in f32, then the f32 polynomials (erf's
  // argument folded first: the higher benefit).
  populateMathF32ExpansionPatterns(patterns, isApproximated);
  patterns.add<ErfOfDivisionByConstant>(patterns.getContext(), /*benefit=*/2);
  patterns.add<ErfRational>(patterns.getContext());
  populateMathPolynomialApproximationPatterns(patterns, isApproximatedUpstream);
}
