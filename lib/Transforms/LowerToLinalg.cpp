//===- LowerToLinalg.cpp - Cuvil ops to linalg on tensors -----------------===//
// Dense ops become linalg named ops where a schedule can use them
// (linalg.matmul for 2-D matmuls, so the transform scripts match them) and
// linalg.generic otherwise. Layout-carrying ops are handled by the patterns
// in LowerLayouts.cpp, which run in the same pass.
//===----------------------------------------------------------------------===//
#include "LowerLayouts.h"
#include "LoweringUtils.h"

#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILLOWERTOLINALG
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

Value dimOf(OpBuilder &b, Location loc, Value v, int64_t i) {
  return tensor::DimOp::create(b, loc, v, i);
}

struct LowerMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    if (getLayout(op.getLhs().getType()))
      return failure(); // LowerLayouts handles sparse operands.
    Location loc = op.getLoc();
    Value lhs = op.getLhs(), rhs = op.getRhs();
    auto lt = op.getLhs().getType(), rt = op.getRhs().getType();
    RankedTensorType resultType = op.getType();
    Type et = resultType.getElementType();
    unsigned rank = resultType.getRank();

    // Folding the lhs batch dims into M needs at most one dynamic size in
    // the folded group: a tensor.expand_shape back with several becomes a
    // memref.expand_shape that expand-strided-metadata cannot lower (it
    // asserts). Such lhs take the batched generic path below.
    bool foldableLhs = llvm::count_if(lt.getShape().drop_back(), ShapedType::isDynamic) <= 1;
    if (rt.getRank() == 2 && foldableLhs) {
      // Plain GEMM, with the lhs batch dims folded into M: linalg.matmul is
      // what the matmul schedules match.
      if (op.getTransposeB()) {
        Value init = emptyTensor(rewriter, loc, {rt.getDimSize(1), rt.getDimSize(0)},
                                 rt.getElementType(),
                                 [&](unsigned i) { return dimOf(rewriter, loc, rhs, 1 - i); });
        rhs = linalg::TransposeOp::create(rewriter, loc, rhs, init,
                                          ArrayRef<int64_t>{1, 0})
                  .getResult()[0];
      }
      // lhs [B.., M, K] <-> [B..*M, K], and the result likewise.
      SmallVector<ReassociationIndices> batchAndM(2);
      for (int64_t d = 0; d < lt.getRank() - 1; ++d)
        batchAndM[0].push_back(d);
      batchAndM[1].push_back(lt.getRank() - 1);
      Value lhs2 = lhs;
      if (lt.getRank() > 2)
        lhs2 = tensor::CollapseShapeOp::create(rewriter, loc, lhs, batchAndM);
      auto l2 = cast<RankedTensorType>(lhs2.getType());
      int64_t n = cast<RankedTensorType>(rhs.getType()).getDimSize(1);
      Value init = filledTensor(
          rewriter, loc, {l2.getDimSize(0), n}, et,
          [&](unsigned i) { return i == 0 ? dimOf(rewriter, loc, lhs2, 0) : dimOf(rewriter, loc, rhs, 1); },
          scalarConstant(rewriter, loc, et, 0.0));
      Value mm = linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs2, rhs}, ValueRange{init})
                     .getResult(0);
      if (lt.getRank() > 2) {
        SmallVector<OpFoldResult> outShape;
        for (int64_t d = 0; d < lt.getRank() - 1; ++d)
          outShape.push_back(tensor::getMixedSize(rewriter, loc, lhs, d));
        outShape.push_back(tensor::getMixedSize(rewriter, loc, rhs, 1));
        mm = tensor::ExpandShapeOp::create(rewriter, loc, resultType, mm, batchAndM, outShape);
      }
      rewriter.replaceOp(op, mm);
      return success();
    }

    auto dynSize = [&](unsigned i) -> Value {
      if (i == rank - 2)
        return dimOf(rewriter, loc, lhs, lt.getRank() - 2);
      if (i == rank - 1)
        return dimOf(rewriter, loc, rhs, op.getTransposeB() ? rt.getRank() - 2 : rt.getRank() - 1);
      ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
      // Batch dims: look through operands' batch parts (right-aligned).
      for (Value v : {lhs, rhs}) {
        auto t = cast<RankedTensorType>(v.getType());
        unsigned vb = t.getRank() - 2, offset = batch.size() - vb;
        if (i >= offset && t.getDimSize(i - offset) != 1)
          return dimOf(rewriter, loc, v, i - offset);
      }
      return arith::ConstantIndexOp::create(rewriter, loc, 1);
    };
    rewriter.replaceOp(op, batchedContraction(rewriter, loc, lhs, rhs, op.getTransposeB(),
                                              resultType, dynSize));
    return success();
  }
};

/// Elementwise binary op with numpy broadcasting as one linalg.generic.
template <typename OpTy>
struct LowerBinary : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    ArrayRef<int64_t> shape = resultType.getShape();
    Value lhs = op.getLhs(), rhs = op.getRhs();
    MLIRContext *ctx = rewriter.getContext();
    Value init = emptyTensor(rewriter, loc, shape, resultType.getElementType(), [&](unsigned i) {
      return broadcastDimSize(rewriter, loc, {lhs, rhs}, shape, i);
    });
    SmallVector<AffineMap> maps = {
        broadcastMap(ctx, op.getLhs().getType().getShape(), shape),
        broadcastMap(ctx, op.getRhs().getType().getShape(), shape),
        AffineMap::getMultiDimIdentityMap(shape.size(), ctx)};
    SmallVector<utils::IteratorType> iters(shape.size(), utils::IteratorType::parallel);
    Value result =
        linalg::GenericOp::create(rewriter, loc, resultType, ValueRange{lhs, rhs}, init, maps,
                                  iters,
                                  [&](OpBuilder &b, Location l, ValueRange a) {
                                    linalg::YieldOp::create(b, l, scalar(b, l, a[0], a[1]));
                                  })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
  static Value scalar(OpBuilder &b, Location l, Value x, Value y) {
    bool f = isFloat(x.getType());
    if constexpr (std::is_same_v<OpTy, AddOp>)
      return f ? Value(arith::AddFOp::create(b, l, x, y)) : Value(arith::AddIOp::create(b, l, x, y));
    if constexpr (std::is_same_v<OpTy, SubOp>)
      return f ? Value(arith::SubFOp::create(b, l, x, y)) : Value(arith::SubIOp::create(b, l, x, y));
    if constexpr (std::is_same_v<OpTy, MulOp>)
      return f ? Value(arith::MulFOp::create(b, l, x, y)) : Value(arith::MulIOp::create(b, l, x, y));
    if constexpr (std::is_same_v<OpTy, DivOp>)
      return f ? Value(arith::DivFOp::create(b, l, x, y)) : Value(arith::DivSIOp::create(b, l, x, y));
    return f ? Value(arith::MaximumFOp::create(b, l, x, y)) : Value(arith::MaxSIOp::create(b, l, x, y));
  }
};

Value geluScalar(OpBuilder &b, Location l, Value x, bool tanhApprox) {
  Type t = x.getType();
  auto c = [&](double v) { return scalarConstant(b, l, t, v); };
  Value inner;
  if (tanhApprox) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 = arith::MulFOp::create(b, l, x, arith::MulFOp::create(b, l, x, x));
    Value poly = arith::AddFOp::create(b, l, x, arith::MulFOp::create(b, l, c(0.044715), x3));
    inner = math::TanhOp::create(b, l, arith::MulFOp::create(b, l, c(std::sqrt(2.0 / M_PI)), poly));
  } else {
    // 0.5 x (1 + erf(x / sqrt(2)))
    inner = math::ErfOp::create(b, l, arith::MulFOp::create(b, l, x, c(M_SQRT1_2)));
  }
  Value half = arith::MulFOp::create(b, l, c(0.5), x);
  return arith::MulFOp::create(b, l, half, arith::AddFOp::create(b, l, c(1.0), inner));
}

template <typename OpTy>
struct LowerUnary : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    unsigned rank = op.getType().getRank();
    Value result = elementwise(
        rewriter, op.getLoc(), input, op.getType().getElementType(), input,
        {AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value x = a[0];
          if constexpr (std::is_same_v<OpTy, ReluOp>)
            return arith::MaximumFOp::create(b, l, x, scalarConstant(b, l, x.getType(), 0.0));
          if constexpr (std::is_same_v<OpTy, TanhOp>)
            return math::TanhOp::create(b, l, x);
          if constexpr (std::is_same_v<OpTy, ExpOp>)
            return math::ExpOp::create(b, l, x);
          if constexpr (std::is_same_v<OpTy, GeluOp>) {
            // f16/bf16: computed in f32 and rounded once, as PyTorch does
            // (its "opmath"). It also keeps math.erf on f32: for narrower
            // types convert-math-to-libm wraps erff in arith.extf/truncf
            // after arith has been lowered, and translation fails.
            Type t = x.getType();
            if (t.getIntOrFloatBitWidth() < 32) {
              Value wide = arith::ExtFOp::create(b, l, b.getF32Type(), x);
              return arith::TruncFOp::create(b, l, t, geluScalar(b, l, wide, op.getTanhApprox()));
            }
            return geluScalar(b, l, x, op.getTanhApprox());
          }
          llvm_unreachable("unhandled unary op");
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, softmaxAlong(rewriter, op.getLoc(), op.getInput(),
                                        op.getNormalizedAxis()));
    return success();
  }
};

struct LowerLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = op.getInput().getType();
    Type et = type.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = type.getRank();
    int64_t axis = rank - 1;
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap red = dropAxisMap(ctx, rank, axis);
    AffineMap last = AffineMap::get(rank, 0, getAffineDimExpr(axis, ctx), ctx);
    // 1/N as a scalar computed once, captured by the generic bodies.
    Value n = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                         dimOf(rewriter, loc, x, axis));
    Value invN = arith::DivFOp::create(rewriter, loc, scalarConstant(rewriter, loc, et, 1.0),
                                       arith::SIToFPOp::create(rewriter, loc, et, n));
    auto add = [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
      return arith::AddFOp::create(nb, l, acc, v);
    };
    Value zero = scalarConstant(rewriter, loc, et, 0.0);
    Value sum = reduceAlong(rewriter, loc, x, axis, zero, add);
    Value centered = elementwise(rewriter, loc, x, et, {x, sum}, {id, red},
                                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                   return arith::SubFOp::create(
                                       nb, l, a[0], arith::MulFOp::create(nb, l, a[1], invN));
                                 });
    Value sq = reduceAlong(rewriter, loc, centered, axis, zero,
                           [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
                             return arith::AddFOp::create(nb, l, acc,
                                                          arith::MulFOp::create(nb, l, v, v));
                           });
    Value eps = scalarConstant(rewriter, loc, et, op.getEpsilon().convertToDouble());
    Value out = elementwise(
        rewriter, loc, x, et, {centered, sq, op.getWeight(), op.getBias()}, {id, red, last, last},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value var = arith::MulFOp::create(nb, l, a[1], invN);
          Value rstd = math::RsqrtOp::create(nb, l, arith::AddFOp::create(nb, l, var, eps));
          Value norm = arith::MulFOp::create(nb, l, a[0], rstd);
          return arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, norm, a[2]), a[3]);
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct LowerAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    if (op.getLayoutAttr())
      return failure(); // LowerLayouts computes present blocks only.
    Location loc = op.getLoc();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Type et = op.getType().getElementType();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = op.getType();
    unsigned rank = resultType.getRank();
    ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
    auto batchDim = [&](unsigned i) -> Value {
      for (Value t : {q, k, v}) {
        auto tt = cast<RankedTensorType>(t.getType());
        if (tt.getDimSize(i) != 1)
          return dimOf(rewriter, loc, t, i);
      }
      return arith::ConstantIndexOp::create(rewriter, loc, 1);
    };
    // Scale q (S*D multiplies) rather than the scores (S*T).
    unsigned qRank = op.getQuery().getType().getRank();
    Value scale = attentionScale(rewriter, loc, op, q);
    q = elementwise(rewriter, loc, q, et, q, {AffineMap::getMultiDimIdentityMap(qRank, ctx)},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      return arith::MulFOp::create(b, l, a[0], scale);
                    });
    // scores[B.., s, t] = sum_d q[B.., s, d] * k[B.., t, d]
    SmallVector<int64_t> scoreShape(batch);
    scoreShape.append({op.getQuery().getType().getDimSize(qRank - 2),
                       op.getKey().getType().getDimSize(qRank - 2)});
    auto scoreType = RankedTensorType::get(scoreShape, et);
    Value scores = batchedContraction(rewriter, loc, q, k, /*bTransposed=*/true, scoreType,
                                      [&](unsigned i) -> Value {
                                        if (i == rank - 2) return dimOf(rewriter, loc, q, qRank - 2);
                                        if (i == rank - 1) return dimOf(rewriter, loc, k, qRank - 2);
                                        return batchDim(i);
                                      });
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    if (Value mask = op.getMask()) {
      AffineMap mm = broadcastMap(ctx, cast<RankedTensorType>(mask.getType()).getShape(), scoreShape);
      scores = elementwise(rewriter, loc, scores, et, {scores, mask}, {id, mm},
                           [](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::AddFOp::create(b, l, a[0], a[1]);
                           });
    }
    if (op.getCausal()) {
      Value negInf = lowestConstant(rewriter, loc, et);
      scores = elementwise(rewriter, loc, scores, et, {scores}, {id},
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             Value s = linalg::IndexOp::create(b, l, rank - 2);
                             Value t = linalg::IndexOp::create(b, l, rank - 1);
                             Value future = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, t, s);
                             return arith::SelectOp::create(b, l, future, negInf, a[0]);
                           });
    }
    // A query row whose keys are all masked gives zeros (as PyTorch's SDPA
    // and the block-masked lowering do), not NaN.
    Value probs = softmaxAlong(rewriter, loc, scores, rank - 1, /*emptyIsZero=*/true);
    Value out = batchedContraction(rewriter, loc, probs, v, /*bTransposed=*/false, resultType,
                                   [&](unsigned i) -> Value {
                                     if (i == rank - 2) return dimOf(rewriter, loc, q, qRank - 2);
                                     if (i == rank - 1) return dimOf(rewriter, loc, v, qRank - 1);
                                     return batchDim(i);
                                   });
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct LowerDtypeCast : OpRewritePattern<DtypeCastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DtypeCastOp op, PatternRewriter &rewriter) const override {
    if (getLayout(op.getType()))
      return failure(); // LowerLayouts casts the stored values.
    Type to = op.getType().getElementType();
    unsigned rank = op.getType().getRank();
    Value result = elementwise(rewriter, op.getLoc(), op.getInput(), to, op.getInput(),
                               {AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
                               [&](OpBuilder &b, Location l, ValueRange a) {
                                 return castScalar(b, l, a[0], to, op.getRounding());
                               });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CuvilLowerToLinalgPass
    : mlir::cuvil::impl::CuvilLowerToLinalgBase<CuvilLowerToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Layouts first: they change types (encoded tensors -> stored values).
    if (failed(lowerLayouts(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    populateLowerToLinalgPatterns(patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<CuvilDialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                           math::MathDialect, scf::SCFDialect, func::FuncDialect>();
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(applyPartialConversion(getOperation(), target, frozen)))
      return signalPassFailure();
  }
};

} // namespace

void mlir::cuvil::populateLowerToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerMatmul, LowerBinary<AddOp>, LowerBinary<SubOp>, LowerBinary<MulOp>, LowerBinary<DivOp>,
               LowerBinary<MaxOp>, LowerUnary<ReluOp>, LowerUnary<TanhOp>, LowerUnary<ExpOp>,
               LowerUnary<GeluOp>, LowerSoftmax, LowerLayerNorm, LowerAttention, LowerDtypeCast>(
      patterns.getContext());
}
