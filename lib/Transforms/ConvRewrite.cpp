//===- ConvRewrite.cpp - building blocks of the conv rewrites -------------===//
#include "ConvRewrite.h"
#include "cuvil/Dialect/CuvilDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::cuvil;

bool mlir::cuvil::isInt8Conv(linalg::Conv2DNchwFchwOp conv) {
  return getElementTypeOrSelf(conv.getInputs()[0].getType()).isSignlessInteger(8) &&
         getElementTypeOrSelf(conv.getInputs()[1].getType()).isSignlessInteger(8) &&
         getElementTypeOrSelf(conv.getOutputs()[0].getType()).isSignlessInteger(32);
}

FailureOr<ConvShape> mlir::cuvil::matchBatchOneConv(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                                                    int64_t minIn, int64_t minOut, bool int8) {
  if (!conv.hasPureTensorSemantics())
    return rewriter.notifyMatchFailure(conv, "not on tensors");
  auto in = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filter = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto out = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (!in || !filter || !out || !in.hasStaticShape() || !filter.hasStaticShape() || !out.hasStaticShape())
    return rewriter.notifyMatchFailure(conv, "dynamic shapes");
  bool f32 = in.getElementType().isF32() && filter.getElementType().isF32() && out.getElementType().isF32();
  bool integer = int8 && isInt8Conv(conv);
  if (!f32 && !integer)
    return rewriter.notifyMatchFailure(conv, int8 ? "not f32 or int8 -> i32" : "not f32");
  // The channel thresholds are where the f32 rewrites beat the direct conv
  // kernel; an int8 conv has no direct kernel of its own (vpdpbusd is the matmul's).
  if (integer)
    minIn = minOut = 1;
  // One output pixel (a squeeze-and-excitation block's 1x1 convs on pooled
  // [C, 1, 1] tensors) is a matrix-vector product whatever the channels: the
  // direct conv schedule's output-channel packing of such a conv with fewer
  // than 16 channels crashed upstream's pad canonicalization (tensor.pad
  // FoldSourceTensorCast: "mismatch between inferred shape and result shape").
  if (out.getDimSize(2) * out.getDimSize(3) == 1)
    minIn = minOut = 1;
  ConvShape s{in.getDimSize(1),  filter.getDimSize(0), in.getDimSize(2),     in.getDimSize(3),
              out.getDimSize(2), out.getDimSize(3),    filter.getDimSize(2), filter.getDimSize(3)};
  if (in.getDimSize(0) != 1)
    return rewriter.notifyMatchFailure(conv, "batch is not 1");
  if (s.c < minIn || s.f < minOut)
    return rewriter.notifyMatchFailure(conv, [&](Diagnostic &diag) {
      diag << s.c << " input / " << s.f << " output channels, fewer than " << minIn << " / " << minOut;
    });
  return s;
}

Value mlir::cuvil::nchwToHwc(TensorBuilder &b, Value x, int64_t h, int64_t w, int64_t c) {
  return b.collapse(b.transpose(x, {1, h, w, c}, {0, 2, 3, 1}), {{0, 1}, {2}, {3}});
}

Value mlir::cuvil::nhwcToNchw(TensorBuilder &b, Value y, int64_t h, int64_t w, int64_t c) {
  return b.transpose(y, {1, c, h, w}, {0, 3, 1, 2});
}

bool mlir::cuvil::allOnes(DenseIntElementsAttr attr) {
  return llvm::all_of(attr.getValues<int64_t>(), [](int64_t v) { return v == 1; });
}

static bool isWeightOnly(Value v, unsigned depth) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && arg.getOwner()->isEntryBlock() && CuvilDialect::isWeight(fn, arg.getArgNumber());
  }
  Operation *def = v.getDefiningOp();
  if (matchPattern(v, m_Constant()))
    return true;
  if (!def || depth == 0 || !isPure(def) || def->getNumRegions() != 0 || def->getNumOperands() == 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) { return isWeightOnly(o, depth - 1); });
}

bool mlir::cuvil::isWeightOnly(Value v) { return ::isWeightOnly(v, /*depth=*/8); }

Value mlir::cuvil::addConvInitNhwc(TensorBuilder &b, linalg::Conv2DNchwFchwOp conv, Value result) {
  Value init = conv.getOutputs()[0];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (fill && (matchPattern(fill.value(), m_AnyZeroFloat()) || matchPattern(fill.value(), m_Zero())))
    return result;
  auto type = cast<RankedTensorType>(result.getType());
  init = b.transpose(init, type.getShape(), {0, 2, 3, 1});
  AffineMap id = b.b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b.b, b.loc, TypeRange{type}, ValueRange{result, init}, ValueRange{b.empty(type.getShape())},
             ArrayRef<AffineMap>{id, id, id},
             SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange a) {
               Value sum = isa<FloatType>(a[0].getType()) ? Value(arith::AddFOp::create(nb, l, a[0], a[1]))
                                                          : Value(arith::AddIOp::create(nb, l, a[0], a[1]));
               linalg::YieldOp::create(nb, l, sum);
             })
      .getResult(0);
}
