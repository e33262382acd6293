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
    // Dense sizes: batch dims of a block_masked value come from its storage
    // (same leading dims); a sparse_csr value's row count is the pattern's
    // (its storage is 1-D). Dynamic sparse_csr columns are refused up front.
    Value zeros = filledTensor(rewriter, loc, dense.getShape(), et,
                               [&](unsigned i) -> Value {
                                 if (auto csr = dyn_cast<SparseCSRAttr>(layout))
                                   return cIdx(rewriter, loc, csr.getNumRows());
                                 return tensor::DimOp::create(rewriter, loc, stored, i);
                               },
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
                               [&](unsigned i) -> Value {
                                 if (i == 0) // M: the pattern's row count
                                   return cIdx(rewriter, loc, csr.getNumRows());
                                 return tensor::DimOp::create(rewriter, loc, rhs, 1);
                               },
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

/// dtype_cast of an encoded tensor: casts the stored values (the pattern,
/// hence the storage shape, is unchanged and zero stays zero).
struct LowerEncodedDtypeCast : OpConversionPattern<DtypeCastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DtypeCastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!getLayout(op.getType()))
      return failure();
    Value stored = adaptor.getInput();
    Type to = op.getType().getElementType();
    unsigned rank = cast<RankedTensorType>(stored.getType()).getRank();
    Value result = elementwise(rewriter, op.getLoc(), stored, to, stored,
                               {AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
                               [&](OpBuilder &b, Location l, ValueRange a) {
                                 return castScalar(b, l, a[0], to, op.getRounding());
                               });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `src[.., off : off + rows, :]` (all leading dims, all columns).
Value sliceRows(OpBuilder &b, Location l, Value src, OpFoldResult off, int64_t rows) {
  auto t = cast<RankedTensorType>(src.getType());
  unsigned r = t.getRank();
  SmallVector<OpFoldResult> offs(r, b.getIndexAttr(0)), sizes, ones(r, b.getIndexAttr(1));
  offs[r - 2] = off;
  for (unsigned i = 0; i < r; ++i)
    sizes.push_back(i == r - 2 ? OpFoldResult(b.getIndexAttr(rows))
                               : tensor::getMixedSize(b, l, src, i));
  SmallVector<int64_t> shape(t.getShape());
  shape[r - 2] = rows;
  return tensor::ExtractSliceOp::create(b, l, RankedTensorType::get(shape, t.getElementType()),
                                        src, offs, sizes, ones);
}

/// In-place elementwise generic: `out = body(ins..., out)` over `out`'s shape.
Value updateInPlace(OpBuilder &b, Location loc, Value out, ValueRange ins,
                    ArrayRef<AffineMap> maps,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = cast<RankedTensorType>(out.getType()).getRank();
  SmallVector<AffineMap> all(maps);
  all.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, out.getType(), ins, out, all, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, a));
             })
      .getResult(0);
}

/// Reduces `in` (rank r) along its last dim into `acc` (rank r - 1), in place.
Value reduceLastInto(OpBuilder &b, Location loc, Value in, Value acc,
                     function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  unsigned rank = cast<RankedTensorType>(in.getType()).getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 dropAxisMap(ctx, rank, rank - 1)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.back() = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, acc.getType(), in, acc, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, combine(nb, nl, a[1], a[0]));
             })
      .getResult(0);
}

/// Block-sparse flash attention. For each block row, its present key blocks
/// are visited with an online softmax (running max m, running sum l,
/// unnormalised output acc). The present blocks (minus those entirely in the
/// future under `causal`) are compile-time tables, so the work is
/// proportional to their number.
///
/// Every per-block step updates a loop-carried tensor in place (scores,
/// m, l, alpha and acc are allocated once per block row, outside the block
/// loop), so bufferization keeps them in place: no allocation per block, and
/// the loops bufferize without `allow-return-allocs-from-loops`. Both
/// contractions run i, r, j: the innermost loop walks a row of the output
/// (no store-to-load chain in scalar code). The key block is read in place
/// (bn rows of D contiguous values, L1-resident); a column slice of a
/// pre-transposed k was measured slower (its rows are T apart, so few L1
/// sets hold them).
struct LowerBlockMaskedAttention : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    BlockMaskedAttr layout = op.getLayoutAttr();
    if (!layout)
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Value mask = adaptor.getMask();
    RankedTensorType resultType = op.getType();
    Type et = resultType.getElementType();
    unsigned rank = resultType.getRank(), nb = rank - 2;
    int64_t bm = layout.getBlock()[0], bn = layout.getBlock()[1];
    int64_t d = op.getQuery().getType().getShape().back(), dv = resultType.getShape().back();
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv))
      return rewriter.notifyMatchFailure(op, "block-masked attention needs static head dims");
    ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
    // Result batch sizes (q, k, v broadcast against each other).
    SmallVector<Value> batchSizes(nb);
    for (unsigned i = 0; i < nb; ++i) {
      if (!ShapedType::isDynamic(batch[i]))
        continue;
      for (Value t : {q, k, v})
        if (cast<RankedTensorType>(t.getType()).getDimSize(i) != 1) {
          batchSizes[i] = tensor::DimOp::create(rewriter, loc, t, i);
          break;
        }
    }
    auto dyn = [&](unsigned i) { return batchSizes[i]; };
    auto shapeWith = [&](ArrayRef<int64_t> tail) {
      SmallVector<int64_t> s(batch);
      s.append(tail.begin(), tail.end());
      return s;
    };

    // Present blocks; under `causal`, blocks entirely above the diagonal
    // (first key after the last query of the block row) contribute nothing.
    bool causal = op.getCausal();
    SmallVector<int64_t> rowPtr = {0}, colIdx;
    ArrayRef<int64_t> rp = layout.getRowPtr(), ci = layout.getColIdx();
    for (int64_t r = 0; r + 1 < static_cast<int64_t>(rp.size()); ++r) {
      for (int64_t p = rp[r]; p < rp[r + 1]; ++p)
        if (!causal || ci[p] * bn <= r * bm + bm - 1)
          colIdx.push_back(ci[p]);
      rowPtr.push_back(colIdx.size());
    }

    unsigned qRank = op.getQuery().getType().getRank();
    AffineMap idQ = AffineMap::getMultiDimIdentityMap(qRank, ctx);
    Value scale = attentionScale(rewriter, loc, op, q);
    Value qs = elementwise(rewriter, loc, q, et, q, {idQ},
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             return arith::MulFOp::create(b, l, a[0], scale);
                           });
    Value zero = scalarConstant(rewriter, loc, et, 0.0), negInf = lowestConstant(rewriter, loc, et);
    Value rowPtrT = indexTable(rewriter, loc, rowPtr), colIdxT = indexTable(rewriter, loc, colIdx);

    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);    // [B.., i, j]
    AffineMap id1 = AffineMap::getMultiDimIdentityMap(rank - 1, ctx); // [B.., i]
    AffineMap rowOf = dropAxisMap(ctx, rank, rank - 1);             // [B.., i, j] -> [B.., i]
    // Shift by the running max, or by 0 while a row has seen only -inf.
    auto shiftOf = [&](OpBuilder &b, Location l, Value mx) -> Value {
      Value isInf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, mx, negInf);
      return arith::SelectOp::create(b, l, isInf, zero, mx);
    };

    Value out0 = emptyTensor(rewriter, loc, resultType.getShape(), et, dyn);
    Value one = scalarConstant(rewriter, loc, et, 1.0);
    auto rowLoop = scf::ForOp::create(
        rewriter, loc, cIdx(rewriter, loc, 0), cIdx(rewriter, loc, layout.getNumBlockRows()),
        cIdx(rewriter, loc, 1), ValueRange{out0},
        [&](OpBuilder &b, Location l, Value r, ValueRange it) {
          Value rowOff = arith::MulIOp::create(b, l, r, cIdx(b, l, bm));
          Value qb = sliceRows(b, l, qs, rowOff, bm);
          // Per block row state, written in place by the block loop. CSE
          // merges equal tensor.empty/linalg.fill ops, and two iter_args
          // sharing a buffer would force copies (and non-equivalent yields),
          // so same-shaped buffers get distinct fill values: m = -inf,
          // l = 0, alpha = 1 (its initial value is unused), acc = 0, and
          // the scores scratch -inf (unused, refilled per block).
          auto filled = [&](ArrayRef<int64_t> tail, Value v) {
            return filledTensor(b, l, shapeWith(tail), et, dyn, v);
          };
          Value m0 = filled({bm}, negInf), l0 = filled({bm}, zero), alpha0 = filled({bm}, one);
          Value acc0 = filled({bm, dv}, zero), s0 = filled({bm, bn}, negInf);
          Value lo = extractIndex(b, l, rowPtrT, r);
          Value hi = extractIndex(b, l, rowPtrT, arith::AddIOp::create(b, l, r, cIdx(b, l, 1)));
          auto blkLoop = scf::ForOp::create(
              b, l, lo, hi, cIdx(b, l, 1), ValueRange{m0, l0, alpha0, acc0, s0},
              [&](OpBuilder &ib, Location il, Value p, ValueRange bit) {
                Value m = bit[0], sum = bit[1], alpha = bit[2], acc = bit[3], s = bit[4];
                Value colOff = arith::MulIOp::create(ib, il, extractIndex(ib, il, colIdxT, p),
                                                     cIdx(ib, il, bn));
                Value kb = sliceRows(ib, il, k, colOff, bn);
                Value vb = sliceRows(ib, il, v, colOff, bn);
                // s = (q * scale) k^T over this block.
                s = linalg::FillOp::create(ib, il, zero, s).getResult(0);
                s = batchedContractionInto(ib, il, qb, kb, /*bTransposed=*/true, s,
                                           /*reductionInner=*/false);
                if (mask || causal) {
                  SmallVector<Value> ins;
                  SmallVector<AffineMap> maps;
                  if (mask) {
                    Value mb = maskBlock(ib, il, mask, rowOff, colOff, bm, bn, rank);
                    ins.push_back(mb);
                    maps.push_back(broadcastMap(
                        ctx, cast<RankedTensorType>(mb.getType()).getShape(), shapeWith({bm, bn})));
                  }
                  s = updateInPlace(ib, il, s, ins, maps,
                                    [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                      Value x = a.back();
                                      if (mask)
                                        x = arith::AddFOp::create(nb2, nl, x, a[0]);
                                      if (!causal)
                                        return x;
                                      Value qi = arith::AddIOp::create(
                                          nb2, nl, rowOff, linalg::IndexOp::create(nb2, nl, rank - 2));
                                      Value kj = arith::AddIOp::create(
                                          nb2, nl, colOff, linalg::IndexOp::create(nb2, nl, rank - 1));
                                      Value future = arith::CmpIOp::create(
                                          nb2, nl, arith::CmpIPredicate::ugt, kj, qi);
                                      return arith::SelectOp::create(nb2, nl, future, negInf, x);
                                    });
                }
                // alpha <- rowmax(s) (block max); then, elementwise over the
                // rows: m' = max(m, alpha), alpha = exp(m - m'), l = l * alpha.
                alpha = linalg::FillOp::create(ib, il, negInf, alpha).getResult(0);
                alpha = reduceLastInto(ib, il, s, alpha, [](OpBuilder &nb2, Location nl, Value x, Value y) -> Value {
                  return arith::MaximumFOp::create(nb2, nl, x, y);
                });
                auto rescale = linalg::GenericOp::create(
                    ib, il, TypeRange{m.getType(), alpha.getType(), sum.getType()}, ValueRange{},
                    ValueRange{m, alpha, sum}, SmallVector<AffineMap>(3, id1),
                    SmallVector<utils::IteratorType>(rank - 1, utils::IteratorType::parallel),
                    [&](OpBuilder &nb2, Location nl, ValueRange a) {
                      Value mOld = a[0];
                      Value mNew = arith::MaximumFOp::create(nb2, nl, mOld, a[1]);
                      Value scaleOld = math::ExpOp::create(
                          nb2, nl, arith::SubFOp::create(nb2, nl, mOld, shiftOf(nb2, nl, mNew)));
                      Value lNew = arith::MulFOp::create(nb2, nl, a[2], scaleOld);
                      linalg::YieldOp::create(nb2, nl, ValueRange{mNew, scaleOld, lNew});
                    });
                m = rescale.getResult(0);
                alpha = rescale.getResult(1);
                sum = rescale.getResult(2);
                // s <- exp(s - m); l <- l + rowsum(s); acc <- acc * alpha + s v.
                s = updateInPlace(ib, il, s, m, {rowOf},
                                  [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                    return math::ExpOp::create(
                                        nb2, nl, arith::SubFOp::create(nb2, nl, a[1], shiftOf(nb2, nl, a[0])));
                                  });
                sum = reduceLastInto(ib, il, s, sum, [](OpBuilder &nb2, Location nl, Value x, Value y) -> Value {
                  return arith::AddFOp::create(nb2, nl, x, y);
                });
                acc = updateInPlace(ib, il, acc, alpha, {rowOf},
                                    [](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                      return arith::MulFOp::create(nb2, nl, a[1], a[0]);
                                    });
                acc = batchedContractionInto(ib, il, s, vb, /*bTransposed=*/false, acc,
                                             /*reductionInner=*/false);
                scf::YieldOp::create(ib, il, ValueRange{m, sum, alpha, acc, s});
              });
          Value sumF = blkLoop.getResult(1), accF = blkLoop.getResult(3);
          // out rows = acc / l; rows that saw no key (no present block, or
          // all masked) give 0.
          Value outRows = sliceRows(b, l, it[0], rowOff, bm);
          outRows = updateInPlace(b, l, outRows, ValueRange{accF, sumF}, {id, rowOf},
                                  [&](OpBuilder &nb2, Location nl, ValueRange a) -> Value {
                                    Value none = arith::CmpFOp::create(nb2, nl, arith::CmpFPredicate::OEQ, a[1], zero);
                                    return arith::SelectOp::create(nb2, nl, none, zero,
                                                                   arith::DivFOp::create(nb2, nl, a[0], a[1]));
                                  });
          SmallVector<OpFoldResult> offs(rank, b.getIndexAttr(0)), sizes, ones(rank, b.getIndexAttr(1));
          offs[rank - 2] = rowOff;
          for (unsigned i = 0; i < rank; ++i)
            sizes.push_back(i == rank - 2 ? OpFoldResult(b.getIndexAttr(bm))
                                          : tensor::getMixedSize(b, l, it[0], i));
          Value outNew = tensor::InsertSliceOp::create(b, l, outRows, it[0], offs, sizes, ones);
          scf::YieldOp::create(b, l, outNew);
        });
    rewriter.replaceOp(op, rowLoop.getResult(0));
    return success();
  }

  /// The part of the additive mask (broadcastable to [B.., S, T]) that covers
  /// score block rows [rowOff, +bm) x cols [colOff, +bn); size-1 (broadcast)
  /// dims stay size 1.
  static Value maskBlock(OpBuilder &b, Location l, Value mask, Value rowOff, Value colOff,
                         int64_t bm, int64_t bn, unsigned scoreRank) {
    auto mt = cast<RankedTensorType>(mask.getType());
    unsigned mr = mt.getRank(), lead = scoreRank - mr;
    SmallVector<OpFoldResult> offs, sizes, ones(mr, b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (unsigned i = 0; i < mr; ++i) {
      int64_t size = mt.getDimSize(i);
      unsigned sd = i + lead;
      bool isRow = sd == scoreRank - 2, isCol = sd == scoreRank - 1;
      if ((isRow || isCol) && size != 1) {
        offs.push_back(isRow ? rowOff : colOff);
        sizes.push_back(b.getIndexAttr(isRow ? bm : bn));
        shape.push_back(isRow ? bm : bn);
      } else {
        offs.push_back(b.getIndexAttr(0));
        sizes.push_back(tensor::getMixedSize(b, l, mask, i));
        shape.push_back(size);
      }
    }
    return tensor::ExtractSliceOp::create(b, l, RankedTensorType::get(shape, mt.getElementType()),
                                          mask, offs, sizes, ones);
  }
};

/// Refuses, with a message, what the layout lowering cannot express.
LogicalResult checkSupported(ModuleOp module) {
  WalkResult result = module.walk([&](Operation *op) -> WalkResult {
    if (auto td = dyn_cast<ToDenseOp>(op)) {
      if (isa<SparseCSRAttr>(getLayout(td.getInput().getType())) &&
          td.getType().isDynamicDim(1))
        return op->emitOpError()
               << "of a #cuvil.sparse_csr tensor needs a static column count: "
                  "the stored values do not determine it";
      return WalkResult::advance();
    }
    if (auto att = dyn_cast<AttentionOp>(op)) {
      if (att.getLayoutAttr() &&
          (att.getQuery().getType().isDynamicDim(att.getQuery().getType().getRank() - 1) ||
           att.getType().isDynamicDim(att.getType().getRank() - 1)))
        return op->emitOpError() << "with a layout needs static head dims";
    }
    if (isa<ToLayoutOp, MatmulOp, DtypeCastOp, func::FuncOp, func::ReturnOp, func::CallOp>(op))
      return WalkResult::advance();
    auto encoded = [](Type t) { return getLayout(t) != nullptr; };
    if (llvm::any_of(op->getOperandTypes(), encoded) || llvm::any_of(op->getResultTypes(), encoded))
      return op->emitOpError() << "on a tensor with a layout encoding cannot be lowered; "
                                  "convert it with cuvil.to_dense first";
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

} // namespace

LogicalResult mlir::cuvil::lowerLayouts(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  LayoutTypeConverter converter;
  RewritePatternSet patterns(ctx);
  if (failed(checkSupported(module)))
    return failure();
  patterns.add<LowerToLayout, LowerToDense, LowerSparseMatmul, LowerBlockMaskedAttention,
               LowerEncodedDtypeCast>(converter, ctx);
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
    if (auto cast = dyn_cast<DtypeCastOp>(op))
      return !getLayout(cast.getType());
    if (auto fn = dyn_cast<func::FuncOp>(op))
      return converter.isSignatureLegal(fn.getFunctionType()) &&
             converter.isLegal(&fn.getBody());
    return converter.isLegal(op);
  });
  return applyPartialConversion(module, target, std::move(patterns));
}
