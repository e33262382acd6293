//===- SimplifyRequantize.cpp - int8 quantize in fewer vector ops ---------===//
// The quantize that ends every int8 epilogue (torch-mlir's
// quantize_per_tensor: x / scale, round to even, add the zero point, clamp
// to [qmin, qmax], convert) runs once per output element and, vectorized,
// was most of the epilogue's work. Two exact rewrites shorten it; see the
// pass description in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSIMPLIFYREQUANTIZE
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The value of a float constant (a scalar or a splat), also through a
/// truncf / extf of one (torch-mlir truncates an f64 1 / scale in the body):
/// converted to nearest even, as the op does at run time.
std::optional<APFloat> constantFloat(Value v) {
  APFloat value(0.0);
  if (matchPattern(v, m_ConstantFloat(&value)))
    return value;
  Operation *def = v.getDefiningOp();
  if (auto trunc = dyn_cast_or_null<arith::TruncFOp>(def); trunc && trunc.getRoundingmodeAttr())
    return std::nullopt;
  if (!isa_and_nonnull<arith::TruncFOp, arith::ExtFOp>(def))
    return std::nullopt;
  std::optional<APFloat> in = constantFloat(def->getOperand(0));
  if (!in)
    return std::nullopt;
  bool lost = false;
  in->convert(cast<FloatType>(getElementTypeOrSelf(v.getType())).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
  return in;
}

/// `input` clamped against a constant: max(input, bound) (`lower`) or
/// min(input, bound).
struct Clamp {
  Value input;
  APFloat bound;
  bool lower;
};

/// The clamp forms torch-mlir and upstream write: select(a < c, c, a),
/// select(a > c, a, c) (a ReLU), their mirror images, and the max / min ops.
std::optional<Clamp> matchClamp(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(def)) {
    bool lower = isa<arith::MaximumFOp, arith::MaxNumFOp>(def);
    for (unsigned i : {0u, 1u})
      if (std::optional<APFloat> bound = constantFloat(def->getOperand(1 - i)))
        return Clamp{def->getOperand(i), *bound, lower};
    return std::nullopt;
  }
  auto select = dyn_cast<arith::SelectOp>(def);
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>() : nullptr;
  if (!cmp)
    return std::nullopt;
  Value a = cmp.getLhs();
  std::optional<APFloat> bound = constantFloat(cmp.getRhs());
  if (!bound)
    return std::nullopt;
  auto isBound = [&](Value x) {
    std::optional<APFloat> c = constantFloat(x);
    return c && c->bitwiseIsEqual(*bound);
  };
  using P = arith::CmpFPredicate;
  P p = cmp.getPredicate();
  bool less = p == P::OLT || p == P::ULT || p == P::OLE || p == P::ULE;
  bool greater = p == P::OGT || p == P::UGT || p == P::OGE || p == P::UGE;
  if (!less && !greater)
    return std::nullopt;
  Value t = select.getTrueValue(), f = select.getFalseValue();
  // a < c ? c : a and a > c ? a : c are max(a, c); the others min(a, c).
  if (isBound(t) && f == a)
    return Clamp{a, *bound, less};
  if (t == a && isBound(f))
    return Clamp{a, *bound, greater};
  return std::nullopt;
}

/// `value` as an int64_t when it is an integer of at most 2^23 in magnitude:
/// exact in f32, and so is the difference of two of them (the clamp bounds
/// lo - zp and hi - zp).
std::optional<int64_t> smallInteger(const APFloat &value) {
  if (!value.isFinite() || !value.isInteger())
    return std::nullopt;
  llvm::APSInt i(64, /*isUnsigned=*/false);
  bool exact = false;
  if (value.convertToInteger(i, APFloat::rmTowardZero, &exact) != APFloat::opOK || !exact)
    return std::nullopt;
  int64_t v = i.getExtValue();
  if (v < -(int64_t(1) << 23) || v > (int64_t(1) << 23))
    return std::nullopt;
  return v;
}

/// The integer `value` as a constant of float scalar or vector type `type`.
Value floatConstant(PatternRewriter &rewriter, Location loc, Type type, int64_t value) {
  auto elem = cast<FloatType>(getElementTypeOrSelf(type));
  return cuvil::splatConstant(rewriter, loc, type, rewriter.getFloatAttr(elem, static_cast<double>(value)));
}

/// max(x, bound) or min(x, bound) as select(cmpf): x86 makes each one
/// vmaxps / vminps.
Value clampWith(PatternRewriter &rewriter, Location loc, Value x, Value bound, bool lower) {
  auto predicate = lower ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT;
  Value outside = arith::CmpFOp::create(rewriter, loc, predicate, x, bound);
  return arith::SelectOp::create(rewriter, loc, outside, bound, x);
}

bool isScalarOrVector(Type type) { return isa<FloatType, IntegerType, VectorType>(type); }

/// fptosi(clamp(roundeven(y) + zp, lo, hi)) : iN  ->
/// trunci(fptosi(roundeven(clamp(y, lo - zp, hi - zp))) : i32 + zp).
/// Exact: lo, hi and zp are integers, so the clamp commutes with the
/// rounding and the zero point (roundeven is monotone and keeps integers),
/// and roundeven(y) + zp is exact wherever the clamp does not decide the
/// result (|roundeven(y)| < 2^24 there: lo, hi and zp are within 2^23).
struct RequantizeInIntegers : OpRewritePattern<arith::FPToSIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::FPToSIOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto intType = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
    auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(op.getIn().getType()));
    if (!isScalarOrVector(type) || !intType || !floatType || intType.getWidth() > 32 ||
        floatType.getFPMantissaWidth() < 24)
      return rewriter.notifyMatchFailure(op, "not a float -> i8..i32 conversion of f32 or wider");
    std::optional<Clamp> outer = matchClamp(op.getIn());
    std::optional<Clamp> inner = outer ? matchClamp(outer->input) : std::nullopt;
    if (!inner || inner->lower == outer->lower)
      return rewriter.notifyMatchFailure(op, "not a clamp to [lo, hi]");
    std::optional<int64_t> lo = smallInteger(outer->lower ? outer->bound : inner->bound);
    std::optional<int64_t> hi = smallInteger(outer->lower ? inner->bound : outer->bound);
    // The rounded value, and the zero point added to it (none: 0).
    Value rounded = inner->input;
    std::optional<int64_t> zp = 0;
    if (auto add = rounded.getDefiningOp<arith::AddFOp>()) {
      for (unsigned i : {0u, 1u})
        if (add->getOperand(i).getDefiningOp<math::RoundEvenOp>())
          if (std::optional<APFloat> z = constantFloat(add->getOperand(1 - i))) {
            rounded = add->getOperand(i);
            zp = smallInteger(*z);
          }
    }
    auto round = rounded.getDefiningOp<math::RoundEvenOp>();
    if (!round || !lo || !hi || !zp || *lo > *hi)
      return rewriter.notifyMatchFailure(op, "not roundeven(y) + zp with integral zp, lo <= hi");
    // The original converts values in [lo, hi]; outside iN's range that is
    // poison, which this rewrite would not reproduce.
    int64_t width = intType.getWidth();
    if (width < 64 && (*lo < -(int64_t(1) << (width - 1)) || *hi > (int64_t(1) << (width - 1)) - 1))
      return rewriter.notifyMatchFailure(op, "clamp bounds outside the result type");
    Location loc = op.getLoc();
    Value y = round.getOperand();
    Type yType = y.getType();
    Value c = clampWith(rewriter, loc, y, floatConstant(rewriter, loc, yType, *lo - *zp), /*lower=*/true);
    c = clampWith(rewriter, loc, c, floatConstant(rewriter, loc, yType, *hi - *zp), /*lower=*/false);
    Value r = math::RoundEvenOp::create(rewriter, loc, c);
    Type i32 = rewriter.getI32Type();
    Type i32Type = isa<VectorType>(yType) ? Type(cast<VectorType>(yType).clone(i32)) : i32;
    Value q = arith::FPToSIOp::create(rewriter, loc, i32Type, r);
    if (*zp != 0)
      q = arith::AddIOp::create(rewriter, loc, q, cuvil::splatConstant(rewriter, loc, i32Type, rewriter.getI32IntegerAttr(*zp)));
    if (width < 32)
      q = arith::TruncIOp::create(rewriter, loc, type, q);
    rewriter.replaceOp(op, q);
    return success();
  }
};

/// max(max(x, 0) * c, lo) -> max(x * c, lo) for a constant c > 0 and lo >= 0:
/// max(x, 0) * c = max(x * c, 0), which the outer clamp already takes. What
/// is left of a ReLU in front of a requantize to a qmin zero point, after
/// RequantizeInIntegers.
struct ReluIntoLowerClamp : RewritePattern {
  ReluIntoLowerClamp(MLIRContext *ctx) : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 || !isScalarOrVector(op->getResult(0).getType()))
      return failure();
    std::optional<Clamp> clamp = matchClamp(op->getResult(0));
    if (!clamp || !clamp->lower || clamp->bound.isNegative() || !clamp->bound.isFinite())
      return failure();
    auto mul = clamp->input.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return failure();
    for (unsigned i : {0u, 1u}) {
      std::optional<Clamp> relu = matchClamp(mul->getOperand(i));
      std::optional<APFloat> scale = constantFloat(mul->getOperand(1 - i));
      if (!relu || !relu->lower || !relu->bound.isZero() || !scale || !scale->isFiniteNonZero() ||
          scale->isNegative())
        continue;
      Location loc = op->getLoc();
      Value scaled = arith::MulFOp::create(rewriter, loc, relu->input, mul->getOperand(1 - i), mul.getFastmathAttr());
      Type type = scaled.getType();
      TypedAttr bound = rewriter.getFloatAttr(getElementTypeOrSelf(type), clamp->bound);
      rewriter.replaceOp(op, clampWith(rewriter, loc, scaled, cuvil::splatConstant(rewriter, loc, type, bound), true));
      return success();
    }
    return failure();
  }
};

struct CuvilSimplifyRequantizePass : cuvil::impl::CuvilSimplifyRequantizeBase<CuvilSimplifyRequantizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RequantizeInIntegers, ReluIntoLowerClamp>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
