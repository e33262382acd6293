//===- ProfileKernels.cpp - time every outlined kernel call ---------------===//
// The per-kernel profile behind `CompiledModule.profile`: the runtime keeps
// one (calls, nanoseconds) pair per kernel id, the `cuvil.kernel` attribute
// that cuvil-outline-kernels puts on each kernel function.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILPROFILEKERNELS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

constexpr StringLiteral kClock = "cuvil_profile_clock";
constexpr StringLiteral kRecord = "cuvil_profile_record";

/// The private declaration `name` of `type`, created at the module's end if
/// missing. A definition of that name with another type is an error.
FailureOr<func::FuncOp> declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name)) {
    if (fn.getFunctionType() == type)
      return fn;
    return fn.emitOpError() << "is reserved for the kernel profiler and must have type " << type;
  }
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

struct CuvilProfileKernelsPass
    : cuvil::impl::CuvilProfileKernelsBase<CuvilProfileKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::CallOp, int64_t>> calls;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee)
        return;
      if (std::optional<int64_t> id = CuvilDialect::getKernelId(callee))
        calls.emplace_back(call, *id);
    });
    if (calls.empty())
      return;
    Builder types(&getContext());
    Type i64 = types.getI64Type();
    FailureOr<func::FuncOp> clock = declare(module, kClock, types.getFunctionType({}, {i64}));
    FailureOr<func::FuncOp> record =
        declare(module, kRecord, types.getFunctionType({i64, i64}, {}));
    if (failed(clock) || failed(record))
      return signalPassFailure();
    for (auto [call, id] : calls) {
      OpBuilder b(call);
      Location loc = call.getLoc();
      Value start = func::CallOp::create(b, loc, *clock, ValueRange{}).getResult(0);
      b.setInsertionPointAfter(call);
      Value kernel = arith::ConstantIntOp::create(b, loc, id, 64);
      func::CallOp::create(b, loc, *record, ValueRange{kernel, start});
    }
  }
};

} // namespace
