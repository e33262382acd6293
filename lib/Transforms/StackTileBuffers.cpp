//===- StackTileBuffers.cpp - small per-tile buffers on the stack ---------===//
// A row chain's tile (cuvil-outline-kernels, elementwise_cpu.mlir) keeps its
// intermediates in tile-sized buffers: a softmax tile of 8 rows allocates its
// row maxima, row sums and exps (4 KB) on every iteration, 192 tiles per
// BERT-base head set. On the heap that is three malloc / free pairs per
// tile, and the threads of a parallel loop contend in the allocator. These
// buffers are small, fixed-size and freed in the iteration that allocated
// them: they go on the stack, the stack pointer saved at the start of each
// iteration and restored at its end (so a loop does not grow the stack).
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSTACKTILEBUFFERS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Larger buffers stay on the heap (worker threads' stacks are not large).
constexpr int64_t kMaxStackBytes = 64 << 10;

bool isLoopBody(Block *block) {
  return isa_and_nonnull<scf::ForOp, scf::ForallOp, scf::ParallelOp>(block->getParentOp());
}

/// `alloc` is static, small, in a loop body, and only freed (in that body)
/// besides uses by ops of the body that do not return it.
bool isTileBuffer(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  Block *block = alloc->getBlock();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() || !isLoopBody(block) ||
      !type.getElementType().isIntOrFloat())
    return false;
  int64_t bytes = type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  if (bytes > kMaxStackBytes)
    return false;
  // Freed in this iteration (a buffer the deallocation passes do not free
  // here outlives it, e.g. through a yielded view).
  bool freedHere = false;
  for (Operation *user : alloc->getUsers()) {
    if (user->hasTrait<OpTrait::IsTerminator>())
      return false;
    if (isa<memref::DeallocOp>(user)) {
      if (user->getBlock() != block)
        return false;
      freedHere = true;
    }
  }
  return freedHere;
}

/// The stack pointer saved at the start of the iteration and restored
/// before its terminator (what a memref.alloca_scope lowers to; the scope
/// itself cannot stay around loops: convert-scf-to-cf makes their blocks the
/// scope's, which must have one).
void restoreStackPerIteration(Block *block, RewriterBase &rewriter) {
  Location loc = block->getParentOp()->getLoc();
  rewriter.setInsertionPointToStart(block);
  Value saved = LLVM::StackSaveOp::create(rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext()));
  rewriter.setInsertionPoint(block->getTerminator());
  LLVM::StackRestoreOp::create(rewriter, loc, saved);
}

struct CuvilStackTileBuffersPass : cuvil::impl::CuvilStackTileBuffersBase<CuvilStackTileBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp alloc) {
      if (isTileBuffer(alloc))
        allocs.push_back(alloc);
    });
    IRRewriter rewriter(&getContext());
    llvm::SetVector<Block *> blocks;
    for (memref::AllocOp alloc : allocs) {
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      blocks.insert(alloc->getBlock());
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(), alloc.getAlignmentAttr());
    }
    for (Block *block : blocks)
      restoreStackPerIteration(block, rewriter);
  }
};

} // namespace
