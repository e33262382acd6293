//===- LowerLayouts.cpp - sparse layouts to loops over stored entries -----===//
// Storage: a `#cuvil.sparse_csr` tensor<MxNxT> is stored as tensor<nnz x T>
// (values in CSR order); a `#cuvil.block_masked` tensor<B..xRxCxT> as
// tensor<B.. x nblocks x bm x bn x T> (present blocks in CSR order). The
// pattern is in the type, so row/column tables become constants.
//===----------------------------------------------------------------------===//
#include "LowerLayouts.h"
#include "LoweringUtils.h"

#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Row of each stored entry (expands row_ptr).
SmallVector<int64_t> rowsOf(ArrayRef<int64_t> rowPtr) {
  SmallVector<int64_t> rows;
  for (size_t r = 0; r + 1 < rowPtr.size(); ++r)
    for (int64_t p = rowPtr[r]; p < rowPtr[r + 1]; ++p)
      rows.push_back(r);
  return rows;
}

Value indexTable(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getIndexType());
  SmallVector<APInt> ints;
  for (int64_t v : values)
    ints.push_back(APInt(64, v));
  return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, ints));
}

Value extractIndex(OpBuilder &b, Location loc, Value table, Value pos) {
  return tensor::ExtractOp::create(b, loc, table, pos);
}

Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The storage type of an encoded tensor type (identity for others).
Type storageType(RankedTensorType type) {
  Attribute layout = getLayout(type);
  if (auto csr = dyn_cast_or_null<SparseCSRAttr>(layout))
    return RankedTensorType::get({csr.getNumStored()}, type.getElementType());
  if (auto bm = dyn_cast_or_null<BlockMaskedAttr>(layout)) {
    SmallVector<int64_t> shape(type.getShape().drop_back(2));
    shape.append({bm.getNumStoredBlocks(), bm.getBlock()[0], bm.getBlock()[1]});
    return RankedTensorType::get(shape, type.getElementType());
  }
  return type;
}

struct LayoutTypeConverter : TypeConverter {
  LayoutTypeConverter() {
    addConversion([](Type t) { return t; });
    addConversion([](RankedTensorType t) { return storageType(t); });
  }
};

/// Leading-dims sizes of `v` as OpFoldResults, then `tail`.
SmallVector<OpFoldResult> leadingSizes(OpBuilder &b, Location loc, Value v,
                                       unsigned count, ArrayRef<OpFoldResult> tail) {
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i < count; ++i)
    sizes.push_back(tensor::getMixedSize(b, loc, v, i));
  sizes.append(tail.begin(), tail.end());
  return sizes;
}

SmallVector<OpFoldResult> zerosThen(OpBuilder &b, unsigned count, ArrayRef<OpFoldResult> tail) {
  SmallVector<OpFoldResult> offs(count, b.getIndexAttr(0));
  offs.append(tail.begin(), tail.end());
  return offs;
}

struct LowerToLayout : OpConversionPattern<ToLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ToLayoutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dense = adaptor.getInput();
    auto storage = cast<RankedTensorType>(storageType(op.getType()));
    Attribute layout = getLayout(op.getType());
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = storage.getRank();
    Value init = emptyTensor(rewriter, loc, storage.getShape(), storage.getElementType(),
                             [&](unsigned i) { return tensor::DimOp::create(rewriter, loc, dense, i); });
    SmallVector<AffineMap> maps;
    SmallVector<Value> tables;
    if (auto csr = dyn_cast<SparseCSRAttr>(layout)) {
      tables = {indexTable(rewriter, loc, rowsOf(csr.getRowPtr())),
                indexTable(rewriter, loc, csr.getColIdx())};
    } else {
      auto bm = cast<BlockMaskedAttr>(layout);
      tables = {indexTable(rewriter, loc, rowsOf(bm.getRowPtr())),
                indexTable(rewriter, loc, bm.getColIdx())};
    }
    // Tables are indexed by the stored-entry / stored-block dim.
    AffineMap tableMap = AffineMap::get(rank, 0, getAffineDimExpr(isa<SparseCSRAttr>(layout) ? 0 : rank - 3, ctx), ctx);
    maps = {tableMap, tableMap, AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto gather = linalg::GenericOp::create(
        rewriter, loc, storage, tables, init, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> idx;
          if (isa<SparseCSRAttr>(layout)) {
            idx = {a[0], a[1]};
          } else {
            auto bm = cast<BlockMaskedAttr>(layout);
            for (unsigned d = 0; d + 3 < rank; ++d)
              idx.push_back(linalg::IndexOp::create(b, l, d));
            Value i = linalg::IndexOp::create(b, l, rank - 2), j = linalg::IndexOp::create(b, l, rank - 1);
            idx.push_back(arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, a[0], cIdx(b, l, bm.getBlock()[0])), i));
            idx.push_back(arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, a[1], cIdx(b, l, bm.getBlock()[1])), j));
          }
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, dense, idx).getResult());
        });
    rewriter.replaceOp(op, gather.getResult(0));
    return success();
  }
};

struct LowerToDense : OpConversionPattern<ToDenseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ToDenseOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value stored = adaptor.getInput();
    RankedTensorType dense = op.getType();
    Type et = dense.getElementType();
    Attribute layout = getLayout(op.getInput().getType());
    unsigned rank = dense.getRank();
    Value zeros = filledTensor(rewriter, loc, dense.getShape(), et,
                               [&](unsigned i) { return tensor::DimOp::create(rewriter, loc, stored, i); },
                               scalarConstant(rewriter, loc, et, 0.0));
    ArrayRef<int64_t> rowPtr, colIdx;
    if (auto csr = dyn_cast<SparseCSRAttr>(layout)) {
      rowPtr = csr.getRowPtr();
      colIdx = csr.getColIdx();
    } else {
      rowPtr = cast<BlockMaskedAttr>(layout).getRowPtr();
      colIdx = cast<BlockMaskedAttr>(layout).getColIdx();
    }
    Value rows = indexTable(rewriter, loc, rowsOf(rowPtr)), cols = indexTable(rewriter, loc, colIdx);
    auto loop = scf::ForOp::create(
        rewriter, loc, cIdx(rewriter, loc, 0), cIdx(rewriter, loc, colIdx.size()),
        cIdx(rewriter, loc, 1), ValueRange{zeros},
        [&](OpBuilder &b, Location l, Value p, ValueRange iter) {
          Value r = extractIndex(b, l, rows, p), c = extractIndex(b, l, cols, p);
          Value out;
          if (isa<SparseCSRAttr>(layout)) {
            Value v = tensor::ExtractOp::create(b, l, stored, p);
            out = tensor::InsertOp::create(b, l, v, iter[0], ValueRange{r, c});
          } else {
            auto bm = cast<BlockMaskedAttr>(layout);
            int64_t bmr = bm.getBlock()[0], bmc = bm.getBlock()[1];
            unsigned nb = rank - 2;
            // stored[B.., p, :, :] -> dense[B.., r*bm : , c*bn : ]
            SmallVector<OpFoldResult> srcOffs = zerosThen(b, nb, {p, b.getIndexAttr(0), b.getIndexAttr(0)});
            SmallVector<OpFoldResult> srcSizes = leadingSizes(b, l, stored, nb, {b.getIndexAttr(1), b.getIndexAttr(bmr), b.getIndexAttr(bmc)});
            SmallVector<OpFoldResult> ones(nb + 3, b.getIndexAttr(1));
            SmallVector<int64_t> blockShape(dense.getShape().drop_back(2));
            blockShape.append({bmr, bmc});
            auto blockType = RankedTensorType::get(blockShape, et);
            Value blk = tensor::ExtractSliceOp::create(b, l, blockType, stored, srcOffs, srcSizes, ones);
            Value ro = arith::MulIOp::create(b, l, r, cIdx(b, l, bmr));
            Value co = arith::MulIOp::create(b, l, c, cIdx(b, l, bmc));
            SmallVector<OpFoldResult> dstOffs = zerosThen(b, nb, {ro, co});
            SmallVector<OpFoldResult> dstSizes = leadingSizes(b, l, iter[0], nb, {b.getIndexAttr(bmr), b.getIndexAttr(bmc)});
            SmallVector<OpFoldResult> ones2(nb + 2, b.getIndexAttr(1));
            out = tensor::InsertSliceOp::create(b, l, blk, iter[0], dstOffs, dstSizes, ones2);
          }
          scf::YieldOp::create(b, l, out);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// C[r, :] += A_p * B[c, :] for each stored entry p = (r, c): cost nnz * N.
struct LowerSparseMatmul : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto csr = dyn_cast_or_null<SparseCSRAttr>(getLayout(op.getLhs().getType()));
    if (!csr)
      return failure();
    Location loc = op.getLoc();
    Value vals = adaptor.getLhs(), rhs = adaptor.getRhs();
    RankedTensorType resultType = op.getType();
    Type et = resultType.getElementType();
    auto rt = cast<RankedTensorType>(rhs.getType());
    if (rt.getRank() != 2)
      return rewriter.notifyMatchFailure(op, "sparse lhs needs a rank-2 rhs");
    if (op.getTransposeB()) {
      Value init = emptyTensor(rewriter, loc, {rt.getDimSize(1), rt.getDimSize(0)}, et,
                               [&](unsigned i) { return tensor::DimOp::create(rewriter, loc, rhs, 1 - i); });
      rhs = linalg::TransposeOp::create(rewriter, loc, rhs, init, ArrayRef<int64_t>{1, 0}).getResult()[0];
    }
    OpFoldResult n = tensor::getMixedSize(rewriter, loc, rhs, 1);
    Value zeros = filledTensor(rewriter, loc, resultType.getShape(), et,
                               [&](unsigned) { return tensor::DimOp::create(rewriter, loc, rhs, 1); },
                               scalarConstant(rewriter, loc, et, 0.0));
    Value rows = indexTable(rewriter, loc, rowsOf(csr.getRowPtr()));
    Value cols = indexTable(rewriter, loc, csr.getColIdx());
    auto rowType = RankedTensorType::get({resultType.getDimSize(1)}, et);
    auto loop = scf::ForOp::create(
        rewriter, loc, cIdx(rewriter, loc, 0), cIdx(rewriter, loc, csr.getNumStored()),
        cIdx(rewriter, loc, 1), ValueRange{zeros},
        [&](OpBuilder &b, Location l, Value p, ValueRange iter) {
          Value r = extractIndex(b, l, rows, p), c = extractIndex(b, l, cols, p);
          Value a = tensor::ExtractOp::create(b, l, vals, p);
          SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), n}, strides(2, b.getIndexAttr(1));
          Value bRow = tensor::ExtractSliceOp::create(b, l, rowType, rhs, SmallVector<OpFoldResult>{c, b.getIndexAttr(0)}, sizes, strides);
          Value cRow = tensor::ExtractSliceOp::create(b, l, rowType, iter[0], SmallVector<OpFoldResult>{r, b.getIndexAttr(0)}, sizes, strides);
          AffineMap id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
          Value upd = linalg::GenericOp::create(
                          b, l, rowType, ValueRange{bRow}, ValueRange{cRow}, SmallVector<AffineMap>{id, id},
                          SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
                          [&](OpBuilder &nb, Location nl, ValueRange x) {
                            Value prod = isFloat(et) ? Value(arith::MulFOp::create(nb, nl, a, x[0]))
                                                     : Value(arith::MulIOp::create(nb, nl, a, x[0]));
                            Value sum = isFloat(et) ? Value(arith::AddFOp::create(nb, nl, x[1], prod))
                                                    : Value(arith::AddIOp::create(nb, nl, x[1], prod));
                            linalg::YieldOp::create(nb, nl, sum);
                          })
                          .getResult(0);
          Value out = tensor::InsertSliceOp::create(b, l, upd, iter[0], SmallVector<OpFoldResult>{r, b.getIndexAttr(0)}, sizes, strides);
          scf::YieldOp::create(b, l, out);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// Elementwise generic over `like`'s shape (all operands read with maps).
Value ew(OpBuilder &b, Location loc, Value like, ValueRange ins, ArrayRef<AffineMap> maps,
         function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return elementwise(b, loc, like, cast<RankedTensorType>(like.getType()).getElementType(), ins,
                     maps, body);
}

/// Block-sparse flash attention: for each block row, iterate its present
/// key blocks with an online softmax (running max m, running sum l).
struct LowerBlockMaskedAttention : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    BlockMaskedAttr layout = op.getLayoutAttr();
    if (!layout)
      return failure();
    if (op.getMask())
      return rewriter.notifyMatchFailure(op, "mask with layout is not supported");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    RankedTensorType resultType = op.getType();
    Type et = resultType.getElementType();
    unsigned rank = resultType.getRank(), nb = rank - 2;
    int64_t bm = layout.getBlock()[0], bn = layout.getBlock()[1];
    int64_t d = op.getQuery().getType().getShape().back(), dv = resultType.getShape().back();
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv))
      return rewriter.notifyMatchFailure(op, "block-masked attention needs static head dims");
    for (Value t : {q, k, v})
      if (cast<RankedTensorType>(t.getType()).getShape().drop_back(2) != resultType.getShape().drop_back(2))
        return rewriter.notifyMatchFailure(op, "block-masked attention needs equal batch dims");
    ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
    auto shapeWith = [&](ArrayRef<int64_t> tail) {
      SmallVector<int64_t> s(batch);
      s.append(tail.begin(), tail.end());
      return s;
    };
    auto batchSize = [&](unsigned i) -> Value { return tensor::DimOp::create(rewriter, loc, q, i); };
    Value scale = scalarConstant(rewriter, loc, et, op.getEffectiveScale());
    unsigned qRank = rank;
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    q = ew(rewriter, loc, q, q, {id}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::MulFOp::create(b, l, a[0], scale);
    });
    Value zero = scalarConstant(rewriter, loc, et, 0.0), negInf = lowestConstant(rewriter, loc, et);
    Value out = filledTensor(rewriter, loc, resultType.getShape(), et, batchSize, zero);
    Value rowPtr = indexTable(rewriter, loc, layout.getRowPtr());
    Value colIdx = indexTable(rewriter, loc, layout.getColIdx());
    auto slice = [&](OpBuilder &b, Location l, Value src, Value off, int64_t rows, int64_t cols) {
      SmallVector<OpFoldResult> offs = zerosThen(b, nb, {off, b.getIndexAttr(0)});
      SmallVector<OpFoldResult> sizes = leadingSizes(b, l, src, nb, {b.getIndexAttr(rows), b.getIndexAttr(cols)});
      SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(b, l, RankedTensorType::get(shapeWith({rows, cols}), et),
                                            src, offs, sizes, ones)
          .getResult();
    };
    AffineMap red = dropAxisMap(ctx, rank, rank - 1);
    AffineMap redPrefix = AffineMap::get(rank, 0, id.getResults().drop_back(), ctx);
    bool causal = op.getCausal();
    auto rowLoop = scf::ForOp::create(
        rewriter, loc, cIdx(rewriter, loc, 0), cIdx(rewriter, loc, layout.getNumBlockRows()),
        cIdx(rewriter, loc, 1), ValueRange{out},
        [&](OpBuilder &b, Location l, Value r, ValueRange outIter) {
          Value rowOff = arith::MulIOp::create(b, l, r, cIdx(b, l, bm));
          Value qb = slice(b, l, q, rowOff, bm, d);
          auto dyn = [&](unsigned i) -> Value { return tensor::DimOp::create(b, l, q, i); };
          Value m0 = filledTensor(b, l, shapeWith({bm}), et, dyn, negInf);
          Value l0 = filledTensor(b, l, shapeWith({bm}), et, dyn, zero);
          Value acc0 = filledTensor(b, l, shapeWith({bm, dv}), et, dyn, zero);
          Value lo = extractIndex(b, l, rowPtr, r);
          Value hi = extractIndex(b, l, rowPtr, arith::AddIOp::create(b, l, r, cIdx(b, l, 1)));
          auto blkLoop = scf::ForOp::create(
              b, l, lo, hi, cIdx(b, l, 1), ValueRange{m0, l0, acc0},
              [&](OpBuilder &ib, Location il, Value p, ValueRange it) {
                Value m = it[0], sum = it[1], acc = it[2];
                Value colOff = arith::MulIOp::create(ib, il, extractIndex(ib, il, colIdx, p), cIdx(ib, il, bn));
                Value kb = slice(ib, il, k, colOff, bn, d);
                Value vb = slice(ib, il, v, colOff, bn, dv);
                auto sType = RankedTensorType::get(shapeWith({bm, bn}), et);
                Value s = batchedContraction(ib, il, qb, kb, /*bTransposed=*/true, sType, dyn);
                if (causal) {
                  s = ew(ib, il, s, s, {id}, [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                    Value qi = arith::AddIOp::create(nb2, nl, rowOff, linalg::IndexOp::create(nb2, nl, rank - 2));
                    Value kj = arith::AddIOp::create(nb2, nl, colOff, linalg::IndexOp::create(nb2, nl, rank - 1));
                    Value future = arith::CmpIOp::create(nb2, nl, arith::CmpIPredicate::ugt, kj, qi);
                    return arith::SelectOp::create(nb2, nl, future, negInf, a[0]);
                  });
                }
                Value blkMax = reduceAlong(ib, il, s, rank - 1, negInf,
                                           [](OpBuilder &nb2, Location nl, Value a, Value x) -> Value {
                                             return arith::MaximumFOp::create(nb2, nl, a, x);
                                           });
                AffineMap id1 = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
                Value mNew = ew(ib, il, m, {m, blkMax}, {id1, id1}, [](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                  return arith::MaximumFOp::create(nb2, nl, a[0], a[1]);
                });
                // Shift by the new max, or by 0 while a row has seen only -inf.
                auto shiftOf = [&](OpBuilder &nb2, Location nl, Value mx) -> Value {
                  Value isInf = arith::CmpFOp::create(nb2, nl, arith::CmpFPredicate::OEQ, mx, negInf);
                  return arith::SelectOp::create(nb2, nl, isInf, zero, mx);
                };
                Value pexp = ew(ib, il, s, {s, mNew}, {id, red}, [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                  return math::ExpOp::create(nb2, nl, arith::SubFOp::create(nb2, nl, a[0], shiftOf(nb2, nl, a[1])));
                });
                Value alpha = ew(ib, il, m, {m, mNew}, {id1, id1}, [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                  return math::ExpOp::create(nb2, nl, arith::SubFOp::create(nb2, nl, a[0], shiftOf(nb2, nl, a[1])));
                });
                Value rowSum = reduceAlong(ib, il, pexp, rank - 1, zero,
                                           [](OpBuilder &nb2, Location nl, Value a, Value x) -> Value {
                                             return arith::AddFOp::create(nb2, nl, a, x);
                                           });
                Value sumNew = ew(ib, il, sum, {sum, alpha, rowSum}, {id1, id1, id1},
                                  [](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                    return arith::AddFOp::create(nb2, nl, arith::MulFOp::create(nb2, nl, a[0], a[1]), a[2]);
                                  });
                auto accType = RankedTensorType::get(shapeWith({bm, dv}), et);
                Value pv = batchedContraction(ib, il, pexp, vb, /*bTransposed=*/false, accType, dyn);
                Value accNew = ew(ib, il, acc, {acc, alpha, pv}, {id, redPrefix, id},
                                  [](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                    return arith::AddFOp::create(nb2, nl, arith::MulFOp::create(nb2, nl, a[0], a[1]), a[2]);
                                  });
                scf::YieldOp::create(ib, il, ValueRange{mNew, sumNew, accNew});
              });
          Value sumF = blkLoop.getResult(1), accF = blkLoop.getResult(2);
          // Rows that saw no key (no present block, or all masked) give 0.
          Value blkOut = ew(b, l, accF, {accF, sumF}, {id, redPrefix}, [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
            Value empty = arith::CmpFOp::create(nb2, nl, arith::CmpFPredicate::OEQ, a[1], zero);
            return arith::SelectOp::create(nb2, nl, empty, zero, arith::DivFOp::create(nb2, nl, a[0], a[1]));
          });
          SmallVector<OpFoldResult> offs = zerosThen(b, nb, {rowOff, b.getIndexAttr(0)});
          SmallVector<OpFoldResult> sizes = leadingSizes(b, l, outIter[0], nb, {b.getIndexAttr(bm), b.getIndexAttr(dv)});
          SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
          scf::YieldOp::create(b, l, tensor::InsertSliceOp::create(b, l, blkOut, outIter[0], offs, sizes, ones).getResult());
        });
    (void)qRank;
    rewriter.replaceOp(op, rowLoop.getResult(0));
    return success();
  }
};

} // namespace

LogicalResult mlir::cuvil::lowerLayouts(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  LayoutTypeConverter converter;
  RewritePatternSet patterns(ctx);
  patterns.add<LowerToLayout, LowerToDense, LowerSparseMatmul, LowerBlockMaskedAttention>(
      converter, ctx);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal([&](Operation *op) {
    if (isa<ToLayoutOp, ToDenseOp>(op))
      return false;
    if (auto mm = dyn_cast<MatmulOp>(op))
      return !getLayout(mm.getLhs().getType());
    if (auto att = dyn_cast<AttentionOp>(op))
      return !att.getLayoutAttr();
    if (auto fn = dyn_cast<func::FuncOp>(op))
      return converter.isSignatureLegal(fn.getFunctionType()) &&
             converter.isLegal(&fn.getBody());
    return converter.isLegal(op);
  });
  return applyPartialConversion(module, target, std::move(patterns));
}
