//===- ResultsInPlace.cpp - reshaped results written into the out-params --===//
// Runs right after buffer-results-to-out-params, before the deallocations are
// placed. That pass writes a returned buffer straight into its out-param only
// when the buffer is a memref.alloc itself (hoist-static-allocs); a result
// that is a reshape of a buffer (a packed matmul's [M, N/64, 64] product
// collapsed to [M, N], a logits matrix expanded to [1, S, V]) is computed into
// a temporary and copied out. This pass makes such a buffer a view of the
// out-param instead, so the kernels write the result where the caller wants
// it: no allocation, copy and free per call (4 MB for a 1024x1024 product).
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILRESULTSINPLACE
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// A static, identity-layout memref type: reshapes of it are plain views.
bool isStaticContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

/// The reshapes from an allocation to `value` (innermost first) and the
/// allocation, or a null allocation when `value` is not such a chain.
memref::AllocOp reshapeChain(Value value, SmallVectorImpl<Operation *> &chain) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
      std::reverse(chain.begin(), chain.end());
      return alloc;
    }
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) || !isStaticContiguous(value.getType()))
      return nullptr;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  return nullptr;
}

/// Whether every use of `alloc` and of its views is in `copy`'s block,
/// before `copy` (or is `copy`): the out-param may then hold the buffer, as
/// nothing reads or writes it after the copy.
bool allUsesBefore(memref::AllocOp alloc, memref::CopyOp copy) {
  Block *block = copy->getBlock();
  SmallVector<Value> aliases{alloc.getResult()};
  while (!aliases.empty()) {
    Value v = aliases.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == copy.getOperation())
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || !inBlock->isBeforeInBlock(copy) || user->hasTrait<OpTrait::ReturnLike>())
        return false;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == v)
        llvm::append_range(aliases, user->getResults());
      else if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return false;   // another op makes a memref of it: it may outlive the copy
    }
  }
  return true;
}

/// Makes `copy`'s source buffer a view of its target (an out-param); false
/// when the pattern does not hold.
bool writeInPlace(memref::CopyOp copy, func::FuncOp func) {
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || out.getOwner() != &func.getBody().front() || !out.hasOneUse() ||
      !isStaticContiguous(out.getType()))
    return false;
  SmallVector<Operation *> chain;
  memref::AllocOp alloc = reshapeChain(copy.getSource(), chain);
  // A bare alloc is hoist-static-allocs' case (or one it declined).
  if (!alloc || chain.empty() || !isStaticContiguous(alloc.getType()) ||
      copy.getSource().getType() != out.getType() || !allUsesBefore(alloc, copy))
    return false;
  // Undo the reshapes on the out-param, outermost first: expand what was
  // collapsed, collapse what was expanded.
  OpBuilder b(alloc);
  Value view = out;
  for (Operation *reshape : llvm::reverse(chain)) {
    Type srcType = reshape->getOperand(0).getType();
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape))
      view = memref::ExpandShapeOp::create(b, collapse.getLoc(), srcType, view,
                                           collapse.getReassociationIndices());
    else
      view = memref::CollapseShapeOp::create(b, reshape->getLoc(), view,
                                             cast<memref::ExpandShapeOp>(reshape).getReassociationIndices());
    if (view.getType() != srcType)
      return false;   // (not expected: identity layouts reshape to identity layouts)
  }
  alloc.replaceAllUsesWith(view);
  alloc.erase();
  copy.erase();
  return true;
}

struct CuvilResultsInPlacePass : cuvil::impl::CuvilResultsInPlaceBase<CuvilResultsInPlacePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isPrivate() || func.isExternal())
      return;   // kernels write their destination argument already
    SmallVector<memref::CopyOp> copies;
    for (Operation &op : func.getBody().front())
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
    for (memref::CopyOp copy : copies)
      (void)writeInPlace(copy, func);
  }
};

} // namespace
