//===- WidenBoolMemrefs.cpp - i1 buffers stored as i8 ---------------------===//
// Runs on memrefs (after bufferization and convert-linalg-to-loops), where
// the only ops that touch element values are loads and stores (scalar, and
// the vector transfers of ops a schedule vectorized, e.g. a bool transpose);
// every other op just carries the memref type along and is cloned with the
// new type.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILWIDENBOOLMEMREFS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

bool isBoolMemref(Type t) {
  auto m = dyn_cast<BaseMemRefType>(t);
  return m && m.getElementType().isInteger(1);
}

struct WidenLoad : OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::LoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto byte = memref::LoadOp::create(rewriter, op.getLoc(), adaptor.getMemref(),
                                       adaptor.getIndices());
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, rewriter.getI1Type(), byte);
    return success();
  }
};

struct WidenStore : OpConversionPattern<memref::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value byte = arith::ExtUIOp::create(rewriter, op.getLoc(), rewriter.getI8Type(),
                                        adaptor.getValue());
    rewriter.replaceOpWithNewOp<memref::StoreOp>(op, byte, adaptor.getMemref(),
                                                 adaptor.getIndices());
    return success();
  }
};

/// The i8 vector of an i1 vector's shape.
VectorType bytesOf(VectorType bits) { return bits.clone(IntegerType::get(bits.getContext(), 8)); }

/// A vector read of i1 from a bool memref: the bytes read, truncated.
struct WidenTransferRead : OpConversionPattern<vector::TransferReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isBoolMemref(op.getBase().getType()))
      return failure();
    Location loc = op.getLoc();
    Value padding = arith::ExtUIOp::create(rewriter, loc, rewriter.getI8Type(), adaptor.getPadding());
    auto bytes = vector::TransferReadOp::create(rewriter, loc, bytesOf(op.getVectorType()), adaptor.getBase(),
                                                adaptor.getIndices(), op.getPermutationMapAttr(), padding,
                                                adaptor.getMask(), op.getInBoundsAttr());
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, op.getVectorType(), bytes);
    return success();
  }
};

/// A vector write of i1 to a bool memref: the bits extended to bytes.
struct WidenTransferWrite : OpConversionPattern<vector::TransferWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(vector::TransferWriteOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isBoolMemref(op.getBase().getType()))
      return failure();
    Value bytes = arith::ExtUIOp::create(rewriter, op.getLoc(), bytesOf(op.getVectorType()), adaptor.getValueToStore());
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(op, bytes, adaptor.getBase(), adaptor.getIndices(),
                                                         op.getPermutationMapAttr(), adaptor.getMask(),
                                                         op.getInBoundsAttr());
    return success();
  }
};

/// memref.global of i1: same global, i8 type, initial value widened.
struct WidenGlobal : OpConversionPattern<memref::GlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::GlobalOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    Attribute init = op.getInitialValueAttr();
    if (auto dense = dyn_cast_or_null<DenseElementsAttr>(init)) {
      auto tensorType = RankedTensorType::get(type.getShape(), type.getElementType());
      SmallVector<APInt> bytes;
      for (APInt bit : dense.getValues<APInt>())
        bytes.push_back(bit.zext(8));
      init = DenseElementsAttr::get(tensorType, bytes);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(type);
      if (init)
        op.setInitialValueAttr(init);
    });
    return success();
  }
};

/// Any other op without regions: same op, operands and result types converted.
struct RetypeOp : ConversionPattern {
  RetypeOp(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/0, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (op->getNumRegions() != 0 ||
        isa<memref::LoadOp, memref::StoreOp, vector::TransferReadOp, vector::TransferWriteOp>(op))
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    Operation *clone = rewriter.clone(*op);
    clone->setOperands(operands);
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
    rewriter.replaceOp(op, clone->getResults());
    return success();
  }
};

struct CuvilWidenBoolMemrefsPass
    : mlir::cuvil::impl::CuvilWidenBoolMemrefsBase<CuvilWidenBoolMemrefsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    BoolMemrefTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateWidenBoolMemrefsPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    auto touchesBool = [](Operation *op) {
      return llvm::any_of(op->getOperandTypes(), isBoolMemref) ||
             llvm::any_of(op->getResultTypes(), isBoolMemref);
    };
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      if (auto global = dyn_cast<memref::GlobalOp>(op))
        return !isBoolMemref(global.getType());
      if (auto fn = dyn_cast<func::FuncOp>(op))
        return !llvm::any_of(fn.getArgumentTypes(), isBoolMemref) &&
               !llvm::any_of(fn.getResultTypes(), isBoolMemref) &&
               converter.isLegal(&fn.getBody());
      return !touchesBool(op) &&
             llvm::all_of(op->getRegions(), [&](Region &r) {
               return llvm::all_of(r.getArgumentTypes(), [](Type t) { return !isBoolMemref(t); });
             });
    });
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

BoolMemrefTypeConverter::BoolMemrefTypeConverter() {
  addConversion([](Type t) { return t; });
  addConversion([](MemRefType t) -> Type {
    if (!t.getElementType().isInteger(1))
      return t;
    return MemRefType::get(t.getShape(), IntegerType::get(t.getContext(), 8), t.getLayout(), t.getMemorySpace());
  });
  addConversion([](UnrankedMemRefType t) -> Type {
    if (!t.getElementType().isInteger(1))
      return t;
    return UnrankedMemRefType::get(IntegerType::get(t.getContext(), 8), t.getMemorySpace());
  });
}

void mlir::cuvil::populateWidenBoolMemrefsPatterns(const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<WidenLoad, WidenStore, WidenGlobal, WidenTransferRead, WidenTransferWrite>(converter, ctx);
  patterns.add<RetypeOp>(converter, ctx);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
}
