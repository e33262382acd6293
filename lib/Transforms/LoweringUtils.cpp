//===- LoweringUtils.cpp - IR-building helpers for Cuvil lowering ---------===//
#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cuvil;

bool mlir::cuvil::readsByIndex(linalg::GenericOp op) {
  return op.getBody()
      ->walk([](Operation *nested) {
        return isa<tensor::ExtractOp, linalg::IndexOp>(nested) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

Value mlir::cuvil::scalarConstant(OpBuilder &b, Location loc, Type type, double v) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(ft, v));
  return arith::ConstantOp::create(b, loc, type,
                                   b.getIntegerAttr(type, static_cast<int64_t>(v)));
}

Value mlir::cuvil::splatConstant(OpBuilder &b, Location loc, Type type, TypedAttr scalar) {
  TypedAttr attr = scalar;
  if (auto vector = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vector, ArrayRef<Attribute>(scalar));
  return arith::ConstantOp::create(b, loc, type, attr);
}

Value mlir::cuvil::lowestConstant(OpBuilder &b, Location loc, Type type) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, type,
        b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), /*Negative=*/true)));
  auto it = cast<IntegerType>(type);
  return arith::ConstantOp::create(
      b, loc, type, b.getIntegerAttr(type, APInt::getSignedMinValue(it.getWidth())));
}

Value mlir::cuvil::emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                               Type elementType,
                               function_ref<Value(unsigned)> dynSize) {
  SmallVector<Value> dyn;
  for (auto [i, d] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(d))
      dyn.push_back(dynSize(i));
  return tensor::EmptyOp::create(b, loc, shape, elementType, dyn);
}

Value mlir::cuvil::filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                                Type elementType,
                                function_ref<Value(unsigned)> dynSize, Value fill) {
  Value empty = emptyTensor(b, loc, shape, elementType, dynSize);
  return linalg::FillOp::create(b, loc, fill, empty).getResult(0);
}

AffineMap mlir::cuvil::broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> resultShape) {
  unsigned rank = resultShape.size(), offset = rank - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool stretched = d == 1 && resultShape[offset + i] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value mlir::cuvil::broadcastDimSize(OpBuilder &b, Location loc,
                                    ArrayRef<Value> operands,
                                    ArrayRef<int64_t> resultShape, unsigned i) {
  unsigned rank = resultShape.size();
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    unsigned offset = rank - type.getRank();
    if (i < offset)
      continue;
    int64_t d = type.getDimSize(i - offset);
    if (d != 1)
      return tensor::DimOp::create(b, loc, operand, i - offset);
  }
  return arith::ConstantIndexOp::create(b, loc, 1);
}

AffineMap mlir::cuvil::dropAxisMap(MLIRContext *ctx, unsigned rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    if (i != axis)
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value mlir::cuvil::reduceAlong(
    OpBuilder &b, Location loc, Value input, int64_t axis, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape;
  SmallVector<unsigned> srcDims;
  for (unsigned i = 0; i < rank; ++i)
    if (i != axis) {
      shape.push_back(type.getDimSize(i));
      srcDims.push_back(i);
    }
  Value acc = filledTensor(b, loc, shape, type.getElementType(),
                           [&](unsigned i) {
                             return tensor::DimOp::create(b, loc, input, srcDims[i]);
                           },
                           init);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 dropAxisMap(ctx, rank, axis)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters[axis] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, acc.getType(), input, acc, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, combine(nb, nl, args[1], args[0]));
             })
      .getResult(0);
}

Value mlir::cuvil::elementwise(
    OpBuilder &b, Location loc, Value like, Type elementType, ValueRange inputs,
    ArrayRef<AffineMap> maps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(like.getType());
  unsigned rank = type.getRank();
  Value init = emptyTensor(b, loc, type.getShape(), elementType, [&](unsigned i) {
    return tensor::DimOp::create(b, loc, like, i);
  });
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), inputs, init, allMaps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args.drop_back()));
             })
      .getResult(0);
}

/// Map for a batched operand: its leading (batch) dims aligned on the right
/// with `resultBatch` (broadcasting), followed by `tail`.
AffineMap mlir::cuvil::batchedMap(MLIRContext *ctx, unsigned numLoops, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> resultBatch, ArrayRef<AffineExpr> tail) {
  ArrayRef<int64_t> batch = shape.drop_back(tail.size());
  AffineMap bm = broadcastMap(ctx, batch, resultBatch);
  SmallVector<AffineExpr> exprs(bm.getResults());
  exprs.append(tail.begin(), tail.end());
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

/// Multiply-accumulate body for contractions in `et`.
static Value macBody(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isFloat(acc.getType()))
    return arith::AddFOp::create(b, loc, acc, arith::MulFOp::create(b, loc, x, y));
  // int8 operands of an i32 accumulator (cuvil.matmul): sign-extended, as
  // linalg.matmul's body does for mixed types.
  if (x.getType() != acc.getType())
    x = arith::ExtSIOp::create(b, loc, acc.getType(), x);
  if (y.getType() != acc.getType())
    y = arith::ExtSIOp::create(b, loc, acc.getType(), y);
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

Value mlir::cuvil::batchedContractionInto(OpBuilder &b, Location loc, Value lhs, Value rhs,
                                          bool bTransposed, Value init,
                                          bool reductionInner) {
  MLIRContext *ctx = b.getContext();
  auto resultType = cast<RankedTensorType>(init.getType());
  unsigned rank = resultType.getRank(), loops = rank + 1;
  ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
  // Loop order: batch.., i, j, r (reduction innermost) or batch.., i, r, j.
  unsigned iPos = rank - 2, jPos = reductionInner ? rank - 1 : rank,
           rPos = reductionInner ? rank : rank - 1;
  AffineExpr i = getAffineDimExpr(iPos, ctx), j = getAffineDimExpr(jPos, ctx),
             r = getAffineDimExpr(rPos, ctx);
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  SmallVector<AffineExpr> rhsTail = bTransposed ? SmallVector<AffineExpr>{j, r}
                                                : SmallVector<AffineExpr>{r, j};
  SmallVector<AffineExpr> outExprs;
  for (unsigned d = 0; d + 2 < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  outExprs.append({i, j});
  SmallVector<AffineMap> maps = {
      batchedMap(ctx, loops, lt.getShape(), batch, {i, r}),
      batchedMap(ctx, loops, rt.getShape(), batch, rhsTail),
      AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iters(loops, utils::IteratorType::parallel);
  iters[rPos] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, resultType, ValueRange{lhs, rhs}, init, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, macBody(nb, nl, args[0], args[1], args[2]));
             })
      .getResult(0);
}

/// Batched contraction `out[B.., i, j] = sum_r a[B.., i, r] * b[B.., r, j]` as a
/// linalg.generic; `bTransposed` reads `b[B.., j, r]`.
Value mlir::cuvil::batchedContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         bool bTransposed, RankedTensorType resultType,
                         function_ref<Value(unsigned)> dynSize) {
  Type et = resultType.getElementType();
  Value init = filledTensor(b, loc, resultType.getShape(), et, dynSize,
                            scalarConstant(b, loc, et, 0.0));
  // Reduction innermost (i, j, r) carries the accumulator through memory in
  // scalar loops (one store-to-load chain per MAC); i, r, j does not, and
  // measured 2.3x (attention-sized) to 5x (1024-wide) faster. With a
  // transposed b that order strides through b, so b is transposed once.
  if (bTransposed)
    rhs = transposeLastTwo(b, loc, rhs);
  return batchedContractionInto(b, loc, lhs, rhs, /*bTransposed=*/false, init,
                                /*reductionInner=*/false);
}

Value mlir::cuvil::transposeLastTwo(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  unsigned rank = t.getRank();
  SmallVector<int64_t> shape(t.getShape());
  std::swap(shape[rank - 1], shape[rank - 2]);
  SmallVector<unsigned> src(rank);
  for (unsigned i = 0; i < rank; ++i)
    src[i] = i;
  std::swap(src[rank - 1], src[rank - 2]);
  Value init = emptyTensor(b, loc, shape, t.getElementType(), [&](unsigned i) -> Value {
    return tensor::DimOp::create(b, loc, v, src[i]);
  });
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    exprs.push_back(getAffineDimExpr(src[i], ctx));
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, init.getType(), v, init, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) { linalg::YieldOp::create(nb, nl, a[0]); })
      .getResult(0);
}

Value mlir::cuvil::castScalar(OpBuilder &b, Location l, Value x, Type to,
                              RoundingMode rounding) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto ff = dyn_cast<FloatType>(from), tf = dyn_cast<FloatType>(to);
  if (ff && tf) {
    if (ff.getWidth() < tf.getWidth())
      return arith::ExtFOp::create(b, l, to, x);
    if (ff.getWidth() == tf.getWidth()) // f16 <-> bf16 goes through f32 (exact).
      x = arith::ExtFOp::create(b, l, b.getF32Type(), x);
    return arith::TruncFOp::create(b, l, to, x); // rounds to nearest-even
  }
  if (ff) {
    // float -> int: round, then saturate. The bounds are compared in the
    // float type before converting: fptosi of an out-of-range value is
    // poison, and INT_MAX itself is not representable in f32/bf16 (it
    // rounds up to 2^(w-1)). -2^(w-1) and 2^(w-1) are powers of two, so they
    // are exact (or +-inf where the float type has not the range, e.g. f16
    // vs i32, which then only catches +-inf).
    auto it = cast<IntegerType>(to);
    unsigned w = it.getWidth();
    Value r = rounding == RoundingMode::nearest_even ? Value(math::RoundEvenOp::create(b, l, x))
                                                      : Value(math::TruncOp::create(b, l, x));
    double bound = std::ldexp(1.0, static_cast<int>(w) - 1);
    Value tooBig = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, r,
                                         scalarConstant(b, l, from, bound));
    Value tooSmall = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, r,
                                           scalarConstant(b, l, from, -bound));
    Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, r, r);
    Value bad = arith::OrIOp::create(b, l, arith::OrIOp::create(b, l, tooBig, tooSmall), isNan);
    Value safe = arith::SelectOp::create(b, l, bad, scalarConstant(b, l, from, 0.0), r);
    Value i = arith::FPToSIOp::create(b, l, to, safe); // NaN -> 0
    auto intConst = [&](const APInt &v) {
      return arith::ConstantOp::create(b, l, to, b.getIntegerAttr(to, v));
    };
    i = arith::SelectOp::create(b, l, tooBig, intConst(APInt::getSignedMaxValue(w)), i);
    return arith::SelectOp::create(b, l, tooSmall, intConst(APInt::getSignedMinValue(w)), i);
  }
  if (tf)
    return arith::SIToFPOp::create(b, l, to, x);
  auto fi = cast<IntegerType>(from), ti = cast<IntegerType>(to);
  if (fi.getWidth() < ti.getWidth())
    return arith::ExtSIOp::create(b, l, to, x);
  // Integer narrowing saturates, like float -> int.
  APInt lo = APInt::getSignedMinValue(ti.getWidth()).sext(fi.getWidth());
  APInt hi = APInt::getSignedMaxValue(ti.getWidth()).sext(fi.getWidth());
  Value c = arith::MaxSIOp::create(b, l, x, arith::ConstantOp::create(b, l, from, b.getIntegerAttr(from, lo)));
  c = arith::MinSIOp::create(b, l, c, arith::ConstantOp::create(b, l, from, b.getIntegerAttr(from, hi)));
  return arith::TruncIOp::create(b, l, to, c);
}

Value mlir::cuvil::attentionScale(OpBuilder &b, Location loc, AttentionOp op, Value query) {
  Type et = op.getType().getElementType();
  auto qt = cast<RankedTensorType>(query.getType());
  if (op.getScale() || !qt.isDynamicDim(qt.getRank() - 1))
    return scalarConstant(b, loc, et, op.getEffectiveScale());
  // 1/sqrt(D) computed in f64 and rounded once, like the static case.
  Value d = tensor::DimOp::create(b, loc, query, qt.getRank() - 1);
  Value df = arith::SIToFPOp::create(
      b, loc, b.getF64Type(), arith::IndexCastOp::create(b, loc, b.getI64Type(), d));
  Value s = arith::DivFOp::create(b, loc, scalarConstant(b, loc, b.getF64Type(), 1.0),
                                  math::SqrtOp::create(b, loc, df));
  return et.isF64() ? s : Value(arith::TruncFOp::create(b, loc, et, s));
}

/// softmax(x) along `axis` = exp(x - max) / sum(exp(x - max)), three generics.
Value mlir::cuvil::softmaxAlong(OpBuilder &b, Location loc, Value x, int64_t axis,
                                bool emptyIsZero) {
  auto type = cast<RankedTensorType>(x.getType());
  Type et = type.getElementType();
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropAxisMap(ctx, rank, axis);
  Value negInf = lowestConstant(b, loc, et), zero = scalarConstant(b, loc, et, 0.0);
  Value max = reduceAlong(b, loc, x, axis, negInf,
                          [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
                            return arith::MaximumFOp::create(nb, l, acc, v);
                          });
  Value e = elementwise(b, loc, x, et, {x, max}, {id, red},
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          Value shift = a[1];
                          if (emptyIsZero) { // all -inf: exp(-inf - 0) = 0, not NaN
                            Value isInf = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                                                shift, negInf);
                            shift = arith::SelectOp::create(nb, l, isInf, zero, shift);
                          }
                          return math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, a[0], shift));
                        });
  Value sum = reduceAlong(b, loc, e, axis, zero,
                          [](OpBuilder &nb, Location l, Value acc, Value v) -> Value {
                            return arith::AddFOp::create(nb, l, acc, v);
                          });
  return elementwise(b, loc, x, et, {e, sum}, {id, red},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value q = arith::DivFOp::create(nb, l, a[0], a[1]);
                       if (!emptyIsZero)
                         return q;
                       Value none = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[1], zero);
                       return arith::SelectOp::create(nb, l, none, zero, q);
                     });
}
