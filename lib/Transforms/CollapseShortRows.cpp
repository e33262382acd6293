//===- CollapseShortRows.cpp - elementwise ops on rows of vector length ---===//
// The elementwise schedule vectorizes the innermost loop, one row at a time
// in 64-element chunks (the last one masked). A CNN's per-channel ops on
// [C, H, W] tensors have rows of W elements: ResNet-18's 512x7x7 int8
// requantize ran as 3,584 masked rows of 7 (8.7 ns per element, 0.22 ms for
// 25K elements). Where every operand reads the trailing loops contiguously
// (or not at all: a per-channel scale), those loops are one loop of H*W;
// so are a reduction's trailing reduction loops (a pool over H and W).
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILCOLLAPSESHORTROWS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// One chunk of the elementwise schedule: rows at least this long keep their shape.
constexpr int64_t kVectorRow = 64;

/// The trailing loops [first, rank) that every indexing map reads as one
/// contiguous run, with `first` as small as the row stays short; empty if
/// the innermost loop is already long or cannot be merged.
ReassociationIndices trailingRun(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rank = ranges.size();
  if (rank < 2 || ranges.back() >= kVectorRow)
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ReassociationIndices best;
  int64_t elements = ranges.back();
  for (int64_t first = rank - 2; first >= 0 && elements < kVectorRow; --first) {
    ReassociationIndices run = llvm::to_vector(llvm::seq<int64_t>(first, rank));
    // One loop of one kind: a reduction's trailing reduction loops merge,
    // not a reduction loop with a parallel one.
    if (iterators[first] != iterators.back() || !linalg::areDimSequencesPreserved(maps, {run}))
      break;
    best = run;
    elements *= ranges[first];
  }
  return best;
}

/// All loops parallel, or parallel loops then reduction loops (a reduction
/// over the trailing dims: ResNet's global average pool over 512x7x7 with
/// its residual add and ReLU fused in, which as [512, 7, 7] no schedule took
/// and ran as scalar loops, 45 us; as 512x49 it is a row reduction).
bool parallelThenReductions(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto firstReduction = llvm::find(iterators, utils::IteratorType::reduction);
  return std::all_of(firstReduction, iterators.end(),
                     [](utils::IteratorType t) { return t == utils::IteratorType::reduction; });
}

bool isCandidate(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || !parallelThenReductions(op) || op.getNumLoops() < 2 ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()))
    return false;
  // Gathers and index arithmetic keep their loops (the vectorizer handles
  // them on the original shape); so do ops on i1 (scalar loops, see
  // cuvil-widen-bool-memrefs).
  bool plain = !cuvil::readsByIndex(op);
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()).isInteger(1))
      plain = false;
  // Windows (unfold's d0 + d4) are not permutations: upstream's
  // areDimSequencesPreserved asserts on them.
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      plain = false;
  return plain;
}

/// A pad that leaves its trailing dims alone pads whole rows: [H, W, C]
/// padded in H and W is [H, W*C] padded by C elements per W step (a
/// channels-last conv input). The pad schedule copies and fills one row at
/// a time; ResNet's NHWC pads ran as 58 x 58 rows of 64 bytes.
void padWholeRows(tensor::PadOp pad, IRRewriter &rewriter) {
  auto source = dyn_cast<RankedTensorType>(pad.getSourceType());
  Value value = pad.getConstantPaddingValue();
  if (!source || !source.hasStaticShape() || !value || pad.getNofold() || source.getRank() < 2)
    return;
  SmallVector<int64_t> shape(source.getShape()), low(pad.getStaticLow()), high(pad.getStaticHigh());
  if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high))
    return;
  // Merge the last dim into the one before it while the last is not padded.
  int64_t rank = shape.size(), merged = rank;
  while (merged >= 2 && low[merged - 1] == 0 && high[merged - 1] == 0) {
    low[merged - 2] *= shape[merged - 1];
    high[merged - 2] *= shape[merged - 1];
    shape[merged - 2] *= shape[merged - 1];
    --merged;
  }
  if (merged == rank)
    return;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < merged - 1; ++d)
    groups.push_back({d});
  groups.push_back(llvm::to_vector(llvm::seq<int64_t>(merged - 1, rank)));
  rewriter.setInsertionPoint(pad);
  Location loc = pad.getLoc();
  Value rows = tensor::CollapseShapeOp::create(rewriter, loc, pad.getSource(), groups);
  low.resize(merged);
  high.resize(merged);
  MLIRContext *ctx = rewriter.getContext();
  auto padded = tensor::PadOp::create(rewriter, loc, Type(), rows, getAsIndexOpFoldResult(ctx, low),
                                      getAsIndexOpFoldResult(ctx, high), value);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(pad, pad.getResultType(), padded.getResult(), groups);
}

struct CuvilCollapseShortRowsPass
    : cuvil::impl::CuvilCollapseShortRowsBase<CuvilCollapseShortRowsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isCandidate(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      ReassociationIndices run = trailingRun(op);
      if (run.size() < 2)
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, {run}, rewriter);
      if (failed(collapsed))
        continue;
      rewriter.replaceOp(op, collapsed->results);
    }
    SmallVector<tensor::PadOp> pads;
    getOperation()->walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      padWholeRows(pad, rewriter);
  }
};

} // namespace
