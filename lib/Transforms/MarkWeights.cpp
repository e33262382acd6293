//===- MarkWeights.cpp - @main's model tensors are weights ----------------===//
// The importer describes every argument of @main (`cuvil.kind`); the passes
// after it only ask whether an argument is a weight (`cuvil.weight`).
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILMARKWEIGHTS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// The name of the model's entry point, as the importer writes it.
constexpr StringLiteral kEntryPoint = "main";

struct CuvilMarkWeightsPass : cuvil::impl::CuvilMarkWeightsBase<CuvilMarkWeightsPass> {
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>(kEntryPoint);
    if (!main || !main.isPublic())
      return;
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
      std::optional<StringRef> kind = CuvilDialect::getArgKind(main, i);
      if (kind && *kind != CuvilDialect::getUserInputKind())
        CuvilDialect::setWeight(main, i);
    }
  }
};

} // namespace
