//===- ConvRewrite.h - building blocks of the conv rewrites ----*- C++ -*-===//
// Shared by cuvil-winograd-conv and cuvil-im2col-conv, which turn a static
// f32 batch-1 linalg.conv_2d_nchw_fchw into transposes, slices, generics
// and one (batch) matmul on tensors.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_TRANSFORMS_CONVREWRITE_H
#define CUVIL_LIB_TRANSFORMS_CONVREWRITE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {

/// Static tensor IR of one element type (`f32`: the float rewrites' type;
/// the int8 im2col builds i8 and i32 tensors with one each) at one location.
struct TensorBuilder {
  OpBuilder &b;
  Location loc;
  Type f32;

  Value empty(ArrayRef<int64_t> shape) { return tensor::EmptyOp::create(b, loc, shape, f32); }

  Value zeros(ArrayRef<int64_t> shape) {
    Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(f32)));
    return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty(shape)}).getResult(0);
  }

  Value constant(ArrayRef<int64_t> shape, ArrayRef<float> values) {
    auto type = RankedTensorType::get(shape, f32);
    return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, values));
  }

  /// Column `col` of the row-major `rows` x `cols` matrix as a 1-D constant.
  Value column(ArrayRef<float> matrix, int64_t rows, int64_t cols, int64_t col) {
    SmallVector<float> v;
    for (int64_t r = 0; r < rows; ++r)
      v.push_back(matrix[r * cols + col]);
    return constant({rows}, v);
  }

  SmallVector<OpFoldResult> attrs(ArrayRef<int64_t> v) {
    return llvm::map_to_vector(v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
  }

  Value slice(Value src, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> resultShape) {
    auto type = RankedTensorType::get(resultShape, f32);
    return tensor::ExtractSliceOp::create(b, loc, type, src, attrs(offsets), attrs(sizes), attrs(strides));
  }

  Value transpose(Value src, ArrayRef<int64_t> resultShape, ArrayRef<int64_t> permutation) {
    return linalg::TransposeOp::create(b, loc, src, empty(resultShape), permutation).getResult()[0];
  }

  Value collapse(Value src, ArrayRef<ReassociationIndices> groups) {
    return tensor::CollapseShapeOp::create(b, loc, src, groups);
  }

  Value expand(Value src, ArrayRef<int64_t> shape, ArrayRef<ReassociationIndices> groups) {
    return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, f32), src, groups);
  }

  /// out[...] = sum_k coef_k[...] * tap_k[...]: one 1-D transform step. All
  /// taps share `tapMap`, all coefficient vectors `coefMap` (a single loop:
  /// the row of the transform matrix being computed).
  /// `loopOrder`, if given, runs the loops in another order than the output
  /// dims: loop i iterates output dim loopOrder[i] (tapMap and coefMap are
  /// then in loop dims). A Winograd transform iterates its coefficient dim
  /// second-innermost, so that one tile computes all of a tap's outputs
  /// while the taps are in L1 (outermost, each output re-read every tap).
  Value combine(ArrayRef<Value> taps, ArrayRef<Value> coefs, AffineMap tapMap, AffineMap coefMap,
                ArrayRef<int64_t> outShape, ArrayRef<unsigned> loopOrder = {}) {
    unsigned rank = outShape.size();
    SmallVector<Value> ins(taps);
    ins.append(coefs.begin(), coefs.end());
    SmallVector<AffineMap> maps(taps.size(), tapMap);
    maps.append(coefs.size(), coefMap);
    if (loopOrder.empty()) {
      maps.push_back(b.getMultiDimIdentityMap(rank));
    } else {
      SmallVector<unsigned> outDims(rank);
      for (auto [loop, dim] : llvm::enumerate(loopOrder))
        outDims[dim] = loop;
      maps.push_back(map(rank, outDims));
    }
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    size_t n = taps.size();
    auto op = linalg::GenericOp::create(
        b, loc, TypeRange{RankedTensorType::get(outShape, f32)}, ins, ValueRange{empty(outShape)}, maps,
        iters, [&](OpBuilder &nb, Location l, ValueRange a) {
          Value acc = arith::MulFOp::create(nb, l, a[0], a[n]);
          for (size_t k = 1; k < n; ++k)
            acc = math::FmaOp::create(nb, l, a[k], a[n + k], acc);
          linalg::YieldOp::create(nb, l, acc);
        });
    return op.getResult(0);
  }

  AffineMap map(unsigned rank, ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs = llvm::map_to_vector(dims, [&](unsigned d) { return b.getAffineDimExpr(d); });
    return AffineMap::get(rank, 0, exprs, b.getContext());
  }
};

/// [1, C, H, W] -> [H, W, C] and [1, H, W, C] -> [1, C, H, W] as 4-D
/// transposes (then a collapse): the form in which a conv's output transpose
/// and the next conv's input transpose cancel (cuvil-propagate-channels-last).
Value nchwToHwc(TensorBuilder &b, Value x, int64_t h, int64_t w, int64_t c);
Value nhwcToNchw(TensorBuilder &b, Value y, int64_t h, int64_t w, int64_t c);
/// Sizes of a batch-1 NCHW convolution (input already padded).
struct ConvShape {
  int64_t c, f, hp, wp, oh, ow, kh, kw;
};

/// The shape of `conv` when it is a static f32 batch-1 convolution on
/// tensors with at least `minIn` input and `minOut` output channels (or,
/// with `int8`, also an int8 one with an i32 accumulator, whatever its
/// channels); else a match failure saying which condition failed.
FailureOr<ConvShape> matchBatchOneConv(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv, int64_t minIn,
                                       int64_t minOut, bool int8 = false);

/// Whether `conv` takes int8 operands into an i32 accumulator.
bool isInt8Conv(linalg::Conv2DNchwFchwOp conv);

/// Whether every value of `attr` (a conv's strides or dilations) is 1.
bool allOnes(DenseIntElementsAttr attr);

/// Whether `v` is computed from weights (`cuvil.weight` function arguments)
/// and constants only, through side-effect-free ops: cuvil-split-prepack
/// then moves what is derived from it into the run-once prepack.
bool isWeightOnly(Value v);

/// `result` (the convolution of `conv`'s operands, channels-last:
/// [1,OH,OW,F]) plus the conv's NCHW init read as NHWC (a transpose of a
/// weight-only init runs once, in main_prepack), unless that init is a zero
/// fill.
Value addConvInitNhwc(TensorBuilder &b, linalg::Conv2DNchwFchwOp conv, Value result);

} // namespace mlir::cuvil

#endif
