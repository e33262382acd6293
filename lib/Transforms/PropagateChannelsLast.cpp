//===- PropagateChannelsLast.cpp - keep conv results NHWC between convs ---===//
// The conv rewrites compute in channels-last order (HWC windows, [OH*OW, F]
// products) and transpose back to the model's NCHW at each conv's output,
// then to HWC again at the next conv's input. On ResNet-18 int8 those
// transposes of i32 products cost 3.4 of 16.4 ms (one thread, AMX host).
// Here the NHWC -> NCHW transposes move down, past the elementwise ops
// (requantize, ReLU, residual adds), pads and pools after each conv, until they meet
// the next conv's NCHW -> NHWC transpose and cancel (canonicalization folds
// the pair); a transpose that meets anything else stays there.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILPROPAGATECHANNELSLAST
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// [N, H, W, C] -> [N, C, H, W]: result dim k is the input's dim kToNchw[k].
constexpr int64_t kToNchw[] = {0, 3, 1, 2};

/// `v` as the NCHW transpose of an NHWC tensor, or null.
linalg::TransposeOp nchwTranspose(Value v) {
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || !t.hasPureTensorSemantics() || t.getPermutation() != ArrayRef<int64_t>(kToNchw))
    return {};
  return t;
}

/// An all-parallel generic whose results are written whole (identity output
/// maps, inits not read): it can iterate in any order of its loops.
bool isReorderableElementwise(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumLoops() != 4 || op.getNumParallelLoops() != 4)
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity() || op.payloadUsesValueFromOperand(&init))
      return false;
  return true;
}

/// A pad by a constant, which commutes with a transpose.
bool isConstantPad(tensor::PadOp pad) { return pad.getConstantPaddingValue() && !pad.getNofold(); }

/// Ops that take an NCHW transpose of their operand in without a transpose
/// kernel: another transpose (the pair folds), and the ops the patterns below
/// move it past.
bool absorbsTranspose(Operation *user) {
  if (isa<linalg::TransposeOp>(user))
    return true;
  if (auto pad = dyn_cast<tensor::PadOp>(user))
    return isConstantPad(pad);
  if (auto generic = dyn_cast<linalg::GenericOp>(user))
    return isReorderableElementwise(generic);
  return isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(user);
}

/// Moving the transpose from `input` to `op`'s results pays when no transpose
/// is left on the results (every user takes it in), or when the results are
/// no wider than the input it leaves (an i32 product requantized to i8) and
/// that input has no other use (else both would be transposed).
bool worthSinking(Operation *op, Value input) {
  bool absorbed = llvm::all_of(op->getUsers(), absorbsTranspose);
  Type inType = getElementTypeOrSelf(input.getType());
  if (!inType.isIntOrFloat())   // index or complex elements: no width to compare
    return absorbed;
  unsigned inBits = inType.getIntOrFloatBitWidth();
  bool narrower = llvm::all_of(op->getResultTypes(), [&](Type t) {
    Type e = getElementTypeOrSelf(t);
    return e.isIntOrFloat() && e.getIntOrFloatBitWidth() <= inBits;
  });
  return absorbed || (narrower && input.hasOneUse());
}

SmallVector<OpFoldResult> permuted(ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> perm) {
  // out[perm[k]] = sizes[k]: from the NCHW order back to the NHWC one.
  SmallVector<OpFoldResult> out(sizes.size());
  for (auto [k, p] : llvm::enumerate(perm))
    out[p] = sizes[k];
  return out;
}

Value toNchw(PatternRewriter &rewriter, Location loc, Value nhwc, ArrayRef<OpFoldResult> nchwSizes) {
  Value init = tensor::EmptyOp::create(rewriter, loc, nchwSizes, getElementTypeOrSelf(nhwc.getType()));
  return linalg::TransposeOp::create(rewriter, loc, nhwc, init, kToNchw).getResult()[0];
}

/// elementwise(transpose(x), ...) -> transpose(elementwise'(x, ...)): the op
/// iterates in x's NHWC order, every NCHW-transposed operand is read from
/// its NHWC source, the others through permuted maps (per-channel operands
/// stay broadcasts), and the results are transposed back.
struct SinkThroughElementwise : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!isReorderableElementwise(op))
      return rewriter.notifyMatchFailure(op, "not an all-parallel 4-D op writing whole results");
    OpOperand *seed = nullptr;
    for (OpOperand *in : op.getDpsInputOperands())
      if (nchwTranspose(in->get()) && op.getMatchingIndexingMap(in).isIdentity()) {
        seed = in;
        break;
      }
    if (!seed)
      return rewriter.notifyMatchFailure(op, "no operand is an NCHW transpose read whole");
    if (!worthSinking(op, seed->get()))
      return rewriter.notifyMatchFailure(op, "the transpose would widen or be duplicated");

    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    // NCHW loop k is NHWC loop kToNchw[k]: a map over NCHW loops, composed
    // with this one, reads over NHWC loops.
    AffineMap fromNhwc = AffineMap::getPermutationMap(ArrayRef<int64_t>(kToNchw), ctx);
    SmallVector<int64_t> toNhwc = invertPermutationVector(kToNchw);

    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in).compose(fromNhwc);
      if (linalg::TransposeOp t = nchwTranspose(in->get())) {
        // t[i] = x[j] with j[kToNchw[k]] = i[k].
        inputs.push_back(t.getInput());
        maps.push_back(map.getSubMap(llvm::map_to_vector(toNhwc, [](int64_t k) { return unsigned(k); })));
      } else {
        inputs.push_back(in->get());
        maps.push_back(map);
      }
    }
    SmallVector<Value> inits;
    SmallVector<Type> resultTypes;
    SmallVector<SmallVector<OpFoldResult>> nchwSizes;
    for (Value init : op.getDpsInits()) {
      nchwSizes.push_back(tensor::getMixedSizes(rewriter, loc, init));
      Value empty = tensor::EmptyOp::create(rewriter, loc, permuted(nchwSizes.back(), kToNchw),
                                            getElementTypeOrSelf(init.getType()));
      inits.push_back(empty);
      resultTypes.push_back(empty.getType());
      maps.push_back(rewriter.getMultiDimIdentityMap(4));
    }
    auto reordered = linalg::GenericOp::create(rewriter, loc, resultTypes, inputs, inits, maps,
                                               op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), reordered.getRegion(), reordered.getRegion().end());
    // linalg.index k (an NCHW loop) is NHWC loop kToNchw[k].
    reordered.getBody()->walk([&](linalg::IndexOp index) {
      rewriter.modifyOpInPlace(index, [&] { index.setDim(kToNchw[index.getDim()]); });
    });
    SmallVector<Value> results;
    for (auto [result, sizes] : llvm::zip(reordered.getResults(), nchwSizes))
      results.push_back(toNchw(rewriter, loc, result, sizes));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A generic already iterating in NHWC order that reads an NCHW transpose
/// back through the inverse permutation (a residual add rewritten by the
/// pattern above before its other operand's pool became NHWC): it reads the
/// transpose's source whole instead.
struct ReadTransposeSource : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<unsigned> toNhwc =
        llvm::map_to_vector(invertPermutationVector(kToNchw), [](int64_t k) { return unsigned(k); });
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand *in : op.getDpsInputOperands()) {
      linalg::TransposeOp t = nchwTranspose(in->get());
      if (!t)
        continue;
      // t[i] = x[j] with j[kToNchw[k]] = i[k] (as in SinkThroughElementwise).
      AffineMap direct = maps[in->getOperandNumber()].getSubMap(toNhwc);
      if (!direct.isIdentity())
        continue;
      rewriter.modifyOpInPlace(op, [&] { in->set(t.getInput()); });
      maps[in->getOperandNumber()] = direct;
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no NCHW transpose read back in NHWC order");
    rewriter.modifyOpInPlace(op, [&] { op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps)); });
    return success();
  }
};

/// pad(transpose(x)) -> transpose(pad'(x)), the pad's widths permuted.
struct SinkThroughPad : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    linalg::TransposeOp t = nchwTranspose(pad.getSource());
    if (!t || !isConstantPad(pad))
      return rewriter.notifyMatchFailure(pad, "not a constant pad of an NCHW transpose");
    if (!worthSinking(pad, pad.getSource()))
      return rewriter.notifyMatchFailure(pad, "the transpose would be duplicated");
    Location loc = pad.getLoc();
    auto padded = tensor::PadOp::create(rewriter, loc, Type(), t.getInput(), permuted(pad.getMixedLowPad(), kToNchw),
                                        permuted(pad.getMixedHighPad(), kToNchw), pad.getConstantPaddingValue());
    rewriter.replaceOp(pad, toNchw(rewriter, loc, padded, tensor::getMixedSizes(rewriter, loc, pad.getResult())));
    return success();
  }
};

/// pool_nchw(transpose(x)) -> transpose(pool_nhwc(x)), for max and sum
/// pooling with a filled init (the pooling schedule vectorizes NHWC pools
/// along the channels).
template <typename NchwPool, typename NhwcPool>
struct PoolChannelsLast : OpRewritePattern<NchwPool> {
  using OpRewritePattern<NchwPool>::OpRewritePattern;

  LogicalResult matchAndRewrite(NchwPool pool, PatternRewriter &rewriter) const override {
    linalg::TransposeOp t = nchwTranspose(pool.getInputs()[0]);
    auto fill = pool.getOutputs()[0].template getDefiningOp<linalg::FillOp>();
    if (!t || !fill || !pool.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(pool, "not a pool of an NCHW transpose into a filled init");
    Location loc = pool.getLoc();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, pool.getOutputs()[0]);
    Value empty = tensor::EmptyOp::create(rewriter, loc, permuted(sizes, kToNchw),
                                          getElementTypeOrSelf(pool.getOutputs()[0].getType()));
    Value init = linalg::FillOp::create(rewriter, loc, fill.value(), empty).getResult(0);
    auto nhwc = NhwcPool::create(rewriter, loc, TypeRange{init.getType()},
                                 ValueRange{t.getInput(), pool.getInputs()[1]}, ValueRange{init},
                                 pool.getStrides(), pool.getDilations(), linalg::getPrunedAttributeList(pool));
    rewriter.replaceOp(pool, toNchw(rewriter, loc, nhwc.getResult(0), sizes));
    return success();
  }
};

struct CuvilPropagateChannelsLastPass
    : cuvil::impl::CuvilPropagateChannelsLastBase<CuvilPropagateChannelsLastPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<SinkThroughElementwise, ReadTransposeSource, SinkThroughPad,
                 PoolChannelsLast<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>,
                 PoolChannelsLast<linalg::PoolingNchwSumOp, linalg::PoolingNhwcSumOp>>(ctx);
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    // Not reaching a fixed point leaves correct IR (each rewrite is exact).
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
