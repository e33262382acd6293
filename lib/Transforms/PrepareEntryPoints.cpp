//===- PrepareEntryPoints.cpp - the ABI of main and main_prepack ----------===//
// What the runtime needs from the functions it calls: a C wrapper taking
// memref descriptors, and arguments that bufferization never writes (see
// the pass description in CuvilPasses.td).
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILPREPAREENTRYPOINTS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Every tensor result of `fn` a value of its own: a value returned a second
/// time is returned as a copy. Each result becomes a caller-allocated buffer,
/// and upstream buffer-results-to-out-params (MLIR 22.1.8) crashes on a
/// function returning one buffer twice (`y = x * 2; return y, y`). The copy
/// is a bufferization.alloc_tensor: an allocation, so CSE does not merge two
/// copies back into one value.
static void makeResultsDistinct(func::FuncOp fn) {
  fn.walk([](func::ReturnOp ret) {
    llvm::SmallPtrSet<Value, 8> seen;
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      if (!isa<RankedTensorType>(v.getType()) || seen.insert(v).second)
        continue;
      auto copy = bufferization::AllocTensorOp::create(b, ret.getLoc(), cast<RankedTensorType>(v.getType()),
                                                       /*dynamicSizes=*/ValueRange{}, /*copy=*/v);
      operand.set(copy);
    }
  });
}

struct CuvilPrepareEntryPointsPass
    : cuvil::impl::CuvilPrepareEntryPointsBase<CuvilPrepareEntryPointsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn.isPublic() || fn.isExternal())
        continue;
      fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, b.getBoolAttr(false));
      makeResultsDistinct(fn);
    }
  }
};

} // namespace
