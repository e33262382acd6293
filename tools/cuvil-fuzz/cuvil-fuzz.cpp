//===- cuvil-fuzz.cpp - libFuzzer target for Cuvil IR and passes ----------===//
// Each input is MLIR text. It is parsed and verified with every dialect
// cuvil-opt knows; what verifies is then run through each Cuvil pass (and
// canonicalize, which runs the Cuvil folders and patterns), every pass on its
// own clone, with the verifier after each. Diagnostics are the expected
// outcome for bad inputs and are swallowed; a crash, an assertion, an ASan
// report or a hang is a finding. Built only with -DCUVIL_ENABLE_FUZZER=ON and
// clang (scripts/fuzz.sh).
//===----------------------------------------------------------------------===//
#include "cuvil/InitCuvil.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

using namespace mlir;

namespace {
// Every Cuvil pass, with options that make its rewrites fire on the small
// shapes a fuzzer produces (the defaults skip small convolutions).
constexpr const char *kPipelines[] = {
    "func.func(cuvil-strip-asserts)",
    "cuvil-mark-weights",
    "cuvil-lower-to-linalg",
    "func.func(cuvil-raise-linalg)",
    "cuvil-split-prepack",
    "cuvil-prepare-entry-points",
    "cuvil-widen-bool-memrefs",
    "func.func(cuvil-math-approx)",
    "cuvil-outline-kernels",
    "func.func(cuvil-winograd-conv{min-input-channels=1 min-output-channels=1 "
    "min-output-size=1 min-tiles-for-f4=1})",
    "func.func(cuvil-im2col-conv{min-input-channels=1 min-output-channels=1})",
    "func.func(cuvil-collapse-parallel-loops)",
    "func.func(cuvil-partition-parallel-loops{parts=2})",
    "func.func(cuvil-widen-bool-tensors)",
    "func.func(cuvil-check-gather-indices)",
    "cuvil-guard-integer-division",
    "func.func(cuvil-narrow-contraction-operands{element-type=bf16})",
    "func.func(cuvil-narrow-contraction-operands)",
    "cuvil-profile-kernels",
    "func.func(cuvil-early-dealloc)",
    "func.func(cuvil-fold-zero-trip-linalg)",
    "func.func(cuvil-unsigned-int8-lhs)",
    "cuvil-fold-unit-extent-dims",
    "func.func(cuvil-lower-x86-dot)",
    "canonicalize",
};

struct Harness {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  unsigned inputsSinceReset = 0;

  Harness() {
    registerAllPasses();
    cuvil::registerAllCuvilPasses();
    registerAllDialects(registry);
    registerAllExtensions(registry);
    cuvil::registerCuvilDialect(registry);
    reset();
  }
  // Types and attributes are uniqued in the context for its lifetime: a fresh
  // one now and then keeps a long campaign's memory flat.
  void reset() {
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    inputsSinceReset = 0;
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Harness harness;
  if (++harness.inputsSinceReset > 20000)
    harness.reset();
  MLIRContext &context = *harness.context;
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });

  // MLIR's lexer reads up to a terminating NUL, as every buffer it gets from
  // a file or a Python string has; libFuzzer's buffer has none.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  for (const char *pipeline : kPipelines) {
    OwningOpRef<ModuleOp> clone(module->clone());
    PassManager pm(&context);
    if (failed(parsePassPipeline(pipeline, pm)))
      __builtin_trap(); // kPipelines is wrong (a harness bug): stop loudly
    (void)pm.run(*clone);
  }
  return 0;
}
