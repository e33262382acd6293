//===- FoldZeroTripLinalg.cpp - ops over and into empty tensors ------------===//
// A linalg op whose loops run zero times leaves its inits as they are, and a
// tensor with no elements needs no op to compute it; see the pass
// description in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDZEROTRIPLINALG
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

bool hasZeroDim(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && llvm::is_contained(tensor.getShape(), 0);
}

/// The `tensor.empty` that stands for `result`, a tensor with a static 0
/// among its dims, or null where its dynamic sizes are not known without
/// the op that computes it. A slice's sizes are its operands; any other
/// result must be fully static.
Value emptyFor(OpBuilder &b, OpResult result) {
  auto type = cast<RankedTensorType>(result.getType());
  SmallVector<Value> dynamicSizes;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(result.getOwner()))
    dynamicSizes.append(slice.getSizes().begin(), slice.getSizes().end());
  else if (!type.hasStaticShape())
    return {};
  if (static_cast<int64_t>(dynamicSizes.size()) != type.getNumDynamicDims())
    return {};
  return tensor::EmptyOp::create(b, result.getLoc(), type.getShape(), type.getElementType(), dynamicSizes);
}

/// Whether `v` has no extent along `dim`, seen through tensor.cast.
bool emptyAlong(Value v, int64_t dim) {
  while (auto cast = v.getDefiningOp<tensor::CastOp>())
    v = cast.getSource();
  return cast<RankedTensorType>(v.getType()).getDimSize(dim) == 0;
}

/// A concat without its inputs of no extent along the concat dim:
/// canonicalization decomposes a concat into insert_slices, and one at the
/// end of the dim (offset = size) fails insert_slice's verifier.
void dropEmptyConcatInputs(IRRewriter &rewriter, tensor::ConcatOp concat) {
  int64_t dim = concat.getDim();
  SmallVector<Value> kept;
  for (Value input : concat.getInputs())
    if (!emptyAlong(input, dim))
      kept.push_back(input);
  if (kept.size() == concat.getInputs().size() || kept.empty())
    return;
  rewriter.setInsertionPoint(concat);
  Type type = concat.getType();
  Value result = kept.size() == 1 ? kept.front()
                                  : tensor::ConcatOp::create(rewriter, concat.getLoc(), dim, kept).getResult();
  if (result.getType() != type)
    result = tensor::CastOp::create(rewriter, concat.getLoc(), type, result);
  rewriter.replaceOp(concat, result);
}

struct CuvilFoldZeroTripLinalgPass
    : cuvil::impl::CuvilFoldZeroTripLinalgBase<CuvilFoldZeroTripLinalgPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> zeroTrip;
    SmallVector<Operation *> producesEmpty;
    getOperation().walk([&](Operation *op) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        // Tensor semantics only: a memref op writes in place, and its
        // results (none) have nothing to forward.
        if (linalgOp.hasPureTensorSemantics() && op->getNumResults() == linalgOp.getNumDpsInits() &&
            llvm::is_contained(linalgOp.getStaticLoopRanges(), 0)) {
          zeroTrip.push_back(linalgOp);
          return;
        }
      }
      if (op->getNumResults() > 0 && !isa<tensor::EmptyOp>(op) && !op->hasTrait<OpTrait::ConstantLike>() &&
          llvm::all_of(op->getResultTypes(), hasZeroDim) && isMemoryEffectFree(op))
        producesEmpty.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : zeroTrip) {
      SmallVector<Value> inits(op.getDpsInits());
      rewriter.replaceOp(op, inits);
    }
    for (Operation *op : producesEmpty) {
      rewriter.setInsertionPoint(op);
      SmallVector<Value> empties;
      for (OpResult result : op->getResults())
        if (Value empty = emptyFor(rewriter, result))
          empties.push_back(empty);
      if (empties.size() == op->getNumResults())
        rewriter.replaceOp(op, empties);
      else
        for (Value empty : empties)
          rewriter.eraseOp(empty.getDefiningOp());
    }
    // After the empties: their inputs are tensor.empty now.
    SmallVector<tensor::ConcatOp> concats;
    getOperation().walk([&](tensor::ConcatOp op) { concats.push_back(op); });
    for (tensor::ConcatOp concat : concats)
      dropEmptyConcatInputs(rewriter, concat);
  }
};

} // namespace
