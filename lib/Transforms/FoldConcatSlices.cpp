//===- FoldConcatSlices.cpp - a slice of a concat within one operand ------===//
// A complex value held as a (real, imaginary) pair is built by a concat along
// a trailing dim of 2 and read back through slices of it (importer_complex:
// `abs` of an rfft). Left as they are, the concat copies both parts into an
// interleaved tensor that each slice then reads with a stride of 2: on a
// 201 x 101 spectrogram the two were a third of the call. A slice that lies
// within one of the concat's operands reads that operand instead.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDCONCATSLICES
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// extract_slice(concat(a0, a1, ...), offset o, size s along the concat dim)
/// -> extract_slice(ai, o - start(ai), s) where [o, o + s) lies within ai.
/// Static offsets and sizes along the concat dim only; the other dims keep
/// theirs (a concat's operands agree with its result there).
struct SliceOfConcat : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice, PatternRewriter &rewriter) const override {
    auto concat = slice.getSource().getDefiningOp<tensor::ConcatOp>();
    if (!concat)
      return rewriter.notifyMatchFailure(slice, "source is not a tensor.concat");
    int64_t dim = concat.getDim();
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    std::optional<int64_t> offset = getConstantIntValue(offsets[dim]);
    std::optional<int64_t> size = getConstantIntValue(sizes[dim]);
    std::optional<int64_t> stride = getConstantIntValue(slice.getMixedStrides()[dim]);
    if (!offset || !size || stride != 1)
      return rewriter.notifyMatchFailure(slice, "dynamic or strided along the concat dim");
    int64_t start = 0;
    for (Value input : concat.getInputs()) {
      int64_t extent = cast<RankedTensorType>(input.getType()).getDimSize(dim);
      if (ShapedType::isDynamic(extent))
        return rewriter.notifyMatchFailure(slice, "dynamic concat operand size");
      if (*offset >= start && *offset + *size <= start + extent) {
        offsets[dim] = rewriter.getIndexAttr(*offset - start);
        rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(slice, slice.getType(), input, offsets, sizes,
                                                            slice.getMixedStrides());
        return success();
      }
      start += extent;
    }
    return rewriter.notifyMatchFailure(slice, "the slice spans several concat operands");
  }
};

struct CuvilFoldConcatSlicesPass
    : mlir::cuvil::impl::CuvilFoldConcatSlicesBase<CuvilFoldConcatSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SliceOfConcat>(&getContext());
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
