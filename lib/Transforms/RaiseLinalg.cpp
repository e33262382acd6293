//===- RaiseLinalg.cpp - recognise torch-mlir linalg as Cuvil ops ---------===//
// torch-mlir writes `x @ W^T` (nn.Linear) as linalg.transpose + linalg.matmul
// and batched products as linalg.batch_matmul, each accumulating into a
// zero-filled tensor. Raising them to cuvil.matmul gives one op per product:
// its lowering puts the transpose on the weight alone, where the compile
// path can hoist it into the one-time weight prepacking.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILRAISELINALG
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// The accumulator starts at zero: linalg.fill of a zero constant.
bool isZeroFilled(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Value v = fill.getInputs()[0];
  return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
}

/// Named contraction ops with their default (untransposed) indexing maps.
template <typename OpTy>
bool hasDefaultMaps(OpTy op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return maps == OpTy::getDefaultIndexingMaps(op.getContext());
}

/// The rank-2 tensor that `v` broadcasts along its leading (batch) dims,
/// or null. torch-mlir lowers a batched activation times a 2-D weight (ONNX's
/// MatMul of [B, M, K] and [K, N]) as a batch_matmul of the weight broadcast
/// to [B, K, N]; cuvil.matmul takes the 2-D weight as it is, so the weight
/// stays a weight (packed once) instead of a per-call batch operand.
Value broadcastSource(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 3)
    return {};
  int64_t lead = type.getRank() - 2;
  if (auto bcast = v.getDefiningOp<linalg::BroadcastOp>()) {
    ArrayRef<int64_t> dims = bcast.getDimensions();
    bool leading = static_cast<int64_t>(dims.size()) == lead;
    for (int64_t i = 0; leading && i < lead; ++i)
      leading = dims[i] == i;
    return leading ? bcast.getInput() : Value();
  }
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return {};
  Block &body = generic.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1 || yield.getOperand(0) != body.getArgument(0))
    return {};
  Value input = generic.getDpsInputs()[0];
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  MLIRContext *ctx = v.getContext();
  int64_t rank = type.getRank();
  AffineMap trailing = AffineMap::get(rank, 0, {getAffineDimExpr(rank - 2, ctx), getAffineDimExpr(rank - 1, ctx)}, ctx);
  if (!inputType || inputType.getRank() != 2 || maps[0] != trailing || !maps[1].isIdentity())
    return {};
  return input;
}

template <typename OpTy>
struct RaiseContraction : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !hasDefaultMaps(op) ||
        !isZeroFilled(op.getDpsInits()[0]))
      return failure();
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    // cuvil.matmul accumulates in its operands' type, int8 in i32: another
    // widening product (i32 x i32 -> i64, ONNX's MatMulInteger) stays a
    // linalg op.
    Type elementType = getElementTypeOrSelf(op.getResult(0).getType());
    Type operandType = getElementTypeOrSelf(lhs.getType());
    // (Signed: a matmul reading its int8 operands unsigned stays linalg.)
    auto cast = op->template getAttrOfType<linalg::TypeFnAttr>("cast");
    bool signedCast = !cast || cast.getValue() == linalg::TypeFn::cast_signed;
    bool int8 = operandType.isSignlessInteger(8) && elementType.isSignlessInteger(32) && signedCast;
    if ((operandType != elementType && !int8) || getElementTypeOrSelf(rhs.getType()) != operandType)
      return rewriter.notifyMatchFailure(op, "operands and result differ in element type");
    bool transposeB = false;
    if (Value weight = broadcastSource(rhs))
      rhs = weight;
    // rhs = transpose(W) with the last two dims swapped -> read W directly.
    if (auto t = rhs.getDefiningOp<linalg::TransposeOp>()) {
      ArrayRef<int64_t> perm = t.getPermutation();
      int64_t r = perm.size();
      bool swapsLastTwo = r >= 2 && perm[r - 1] == r - 2 && perm[r - 2] == r - 1;
      for (int64_t i = 0; i + 2 < r; ++i)
        swapsLastTwo &= perm[i] == i;
      if (swapsLastTwo) {
        rhs = t.getInput();
        transposeB = true;
      }
    }
    // Built outside the rewriter first: a pattern that fails must leave the
    // IR as it was (a created-then-dropped op is a change to the greedy
    // driver, which would then never converge).
    OpBuilder builder(op);
    auto mm = MatmulOp::create(builder, op.getLoc(), lhs, rhs,
                               transposeB ? builder.getUnitAttr() : UnitAttr());
    if (mm.getType() != op.getResult(0).getType()) {
      mm.erase();
      return rewriter.notifyMatchFailure(op, "inferred type differs");
    }
    rewriter.replaceOp(op, mm.getResult());
    return success();
  }
};

/// The i8 tensor that an elementwise linalg.generic sign-extends (its only
/// op: `arith.extsi` of its one input), or null.
Value signExtendedInt8(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  auto ext = dyn_cast<arith::ExtSIOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0) || !ext.getIn().getType().isSignlessInteger(8) ||
      body.getTerminator()->getOperand(0) != ext.getResult())
    return {};
  return g.getDpsInputs()[0];
}

/// The elementwise linalg.generic that only truncates `v` (i64) to i32, when
/// it is `v`'s only user; else null.
linalg::GenericOp truncationToI32(Value v) {
  if (!v.hasOneUse())
    return {};
  auto g = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
  if (!g || g.getNumDpsInputs() != 1 || g.getDpsInputs()[0] != v ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  auto trunc = dyn_cast<arith::TruncIOp>(body.front());
  if (!trunc || trunc.getIn() != body.getArgument(0) || !trunc.getType().isSignlessInteger(32) ||
      body.getTerminator()->getOperand(0) != trunc.getResult())
    return {};
  return g;
}

/// torch-mlir writes an int8 convolution computed in int32 (what
/// cuvil/importer_quantized.py emits for PT2E's quantized convs: PyTorch has
/// no int8 conv op) as a conv of sign-extended operands into an i64
/// accumulator, truncated to i32. The same bits come from the int8 conv with
/// an i32 accumulator (i32 arithmetic wraps consistently): the form the conv
/// rewrites (cuvil-im2col-conv) turn into an int8 matmul.
struct NarrowInt8Convolution : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv, PatternRewriter &rewriter) const override {
    if (!conv.hasPureTensorSemantics() || !isZeroFilled(conv.getOutputs()[0]) ||
        !getElementTypeOrSelf(conv.getResult(0).getType()).isSignlessInteger(64))
      return failure();
    Value x = signExtendedInt8(conv.getInputs()[0]), w = signExtendedInt8(conv.getInputs()[1]);
    linalg::GenericOp trunc = truncationToI32(conv.getResult(0));
    if (!x || !w || !trunc)
      return rewriter.notifyMatchFailure(conv, "not an int8 convolution truncated to i32");
    Location loc = conv.getLoc();
    auto type = cast<RankedTensorType>(trunc.getResult(0).getType());
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getI32IntegerAttr(0));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    Value init = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    auto narrow = linalg::Conv2DNchwFchwOp::create(rewriter, loc, TypeRange{type}, ValueRange{x, w},
                                                   ValueRange{init}, conv.getStrides(), conv.getDilations());
    rewriter.replaceOp(trunc, narrow.getResults());
    return success();
  }
};

struct CuvilRaiseLinalgPass
    : mlir::cuvil::impl::CuvilRaiseLinalgBase<CuvilRaiseLinalgPass> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    populateRaiseLinalgPatterns(set);
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

void mlir::cuvil::populateRaiseLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseContraction<linalg::MatmulOp>, RaiseContraction<linalg::BatchMatmulOp>,
               NarrowInt8Convolution>(patterns.getContext());
}
