//===- RowChains.cpp - ops that can run one row tile at a time together ---===//
#include "RowChains.h"
#include "LoweringUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// The row ranges of an op a chain can hold: rank >= 2, static, one result,
/// no gathers; all loops parallel, or all but the last (a row reduction).
std::optional<SmallVector<int64_t>> rowRanges(linalg::GenericOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumResults() != 1 || op.getNumLoops() < 2)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (size_t i = 0; i + 1 < iterators.size(); ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return std::nullopt;
  if (cuvil::readsByIndex(op))
    return std::nullopt;
  // Written a whole row per row (or one value per row, reduced).
  MLIRContext *ctx = op.getContext();
  AffineMap whole = AffineMap::getMultiDimIdentityMap(ranges.size(), ctx);
  AffineMap written = op.getIndexingMapMatchingResult(op->getResult(0));
  if (written != (op.getNumReductionLoops() ? AffineMap::get(ranges.size(), 0, whole.getResults().drop_back(), ctx)
                                            : whole))
    return std::nullopt;
  ranges.pop_back();
  return ranges;
}

bool isReduction(linalg::GenericOp op) { return op.getNumReductionLoops() > 0; }

/// `use` reads `producer`'s result a whole row (identity) or a value per row
/// (the projection onto the leading loops), and `producer` writes it that way.
bool readsByRows(OpOperand &use, linalg::GenericOp producer) {
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || !consumer.isDpsInput(&use))
    return false;
  unsigned rank = consumer.getNumLoops();
  AffineMap map = consumer.getMatchingIndexingMap(&use);
  AffineMap whole = AffineMap::getMultiDimIdentityMap(rank, consumer.getContext());
  if (isReduction(producer))
    return map == AffineMap::get(rank, 0, whole.getResults().drop_back(), consumer.getContext());
  return map == whole;
}

} // namespace

SmallVector<Operation *> mlir::cuvil::rowChainProducers(linalg::GenericOp root) {
  std::optional<SmallVector<int64_t>> rows = rowRanges(root);
  if (!rows)
    return {};
  // Every producer reachable through row reads of the same rows...
  llvm::SetVector<Operation *> chain;
  SmallVector<linalg::GenericOp> worklist = {root};
  while (!worklist.empty()) {
    linalg::GenericOp member = worklist.pop_back_val();
    for (OpOperand *use : member.getDpsInputOperands()) {
      auto producer = use->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || chain.contains(producer) || rowRanges(producer) != rows ||
          producer->getBlock() != root->getBlock() || !readsByRows(*use, producer))
        continue;
      chain.insert(producer);
      worklist.push_back(producer);
    }
  }
  // ... whose result nothing outside the chain reads.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *producer : SmallVector<Operation *>(chain.begin(), chain.end())) {
      bool inside = llvm::all_of(producer->getResult(0).getUses(), [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return (user == root.getOperation() || chain.contains(user)) &&
               readsByRows(use, cast<linalg::GenericOp>(producer));
      });
      if (!inside) {
        chain.remove(producer);
        changed = true;
      }
    }
  }
  SmallVector<Operation *> ordered(chain.begin(), chain.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}
