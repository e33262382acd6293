//===- EarlyDealloc.cpp - free buffers after their last use ---------------===//
// Runs after buffer-deallocation-pipeline + convert-bufferization-to-memref,
// which leave `memref.dealloc`s at the end of the allocating block.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILEARLYDEALLOC
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The last op of `block` that uses `buffer` or a view of it, or null when
/// the buffer may outlive what the block's ops show (it is returned, or an
/// op other than a view makes a memref of it).
Operation *lastUseInBlock(Value buffer, memref::DeallocOp dealloc) {
  Block *block = dealloc->getBlock();
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> aliases{buffer};
  llvm::DenseSet<Value> seen;
  while (!aliases.empty()) {
    Value v = aliases.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (user == dealloc.getOperation())
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock || isa<memref::DeallocOp>(user) || user->hasTrait<OpTrait::ReturnLike>())
        return nullptr;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == v)
          llvm::append_range(aliases, user->getResults());
      } else if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>)) {
        return nullptr;
      }
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
  }
  return last;
}

struct CuvilEarlyDeallocPass : cuvil::impl::CuvilEarlyDeallocBase<CuvilEarlyDeallocPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    for (memref::DeallocOp dealloc : deallocs) {
      auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != dealloc->getBlock())
        continue;
      Operation *last = lastUseInBlock(alloc.getResult(), dealloc);
      if (last && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
