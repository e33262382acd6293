//===- StripAsserts.cpp - erase cf.assert ---------------------------------===//
// torch-mlir's bounds checks (cf.assert inside linalg.generic bodies) have
// side effects and keep elementwise fusion from merging the ops around them;
// see the pass description in CuvilPasses.td.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSTRIPASSERTS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CuvilStripAssertsPass : cuvil::impl::CuvilStripAssertsBase<CuvilStripAssertsPass> {
  void runOnOperation() override {
    // An assert has no results: erasing it inside the walk is safe.
    getOperation().walk([](cf::AssertOp op) { op.erase(); });
  }
};

} // namespace
