//===- SplitPrepack.cpp - run weight-only computations once at load -------===//
// Weights are runtime arguments (never inlined), so anything computed from
// them alone — transposes, packing, casts — would otherwise run on every
// call. This pass moves that subgraph into `<fn>_prepack`, and with it the
// costly work on constants alone (a DFT's cosine / sine tables): it reads
// no input either, so it too gives the same result on every call.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSPLITPREPACK
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// A broadcast (linalg.broadcast, or a generic that only copies its input
/// along new dimensions) whose every use is the init of a linalg op.
bool isAccumulatorBroadcast(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  bool broadcast = isa<linalg::BroadcastOp>(op) ||
                   (generic && linalg::isaBroadcastOpInterface(generic).has_value());
  if (!broadcast || op->getNumResults() != 1)
    return false;
  return llvm::all_of(op->getResult(0).getUses(), [](OpOperand &use) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return user && user.isDpsInit(&use);
  });
}

/// Work on constants alone that is worth doing once at load instead of on
/// every call: transcendental math (a window's or a DFT table's cosines) or a
/// reduction. Index arithmetic, casts and selects stay where they are: fused
/// into their consumers they cost less than reading a stored table.
bool isCostlyOnConstants(Operation *op) {
  static const llvm::StringSet<> cheapMath = {
      "math.absf",  "math.absi",     "math.copysign", "math.fma",      "math.ceil",
      "math.floor", "math.round",    "math.roundeven", "math.trunc",   "math.ctlz",
      "math.cttz",  "math.ctpop",    "math.isnan",    "math.isinf",    "math.isfinite",
      "math.isnormal"};
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    if (linalgOp.getNumReductionLoops() > 0)
      return true;
  WalkResult found = op->walk([&](Operation *nested) {
    StringRef name = nested->getName().getStringRef();
    return name.starts_with("math.") && !cheapMath.contains(name) ? WalkResult::interrupt()
                                                                   : WalkResult::advance();
  });
  return found.wasInterrupted();
}

std::optional<int64_t> numElements(Value v) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped)
    return 1;
  if (!shaped.hasStaticShape())
    return std::nullopt;
  return shaped.getNumElements();
}

/// Whether an op's results hold many more elements than its largest input (a
/// broadcast: a causal mask from one row of positions): a stored copy would
/// cost memory, and a read per call, that recomputing it fused into its
/// consumer does not. Padding a table to whole 64-column panels (201 -> 256)
/// is not expanding it.
bool expands(Operation *op) {
  SmallVector<Value> inputs;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    llvm::append_range(inputs, dps.getDpsInputs());
  else
    llvm::append_range(inputs, op->getOperands());
  int64_t largestInput = 0;
  for (Value v : inputs) {
    std::optional<int64_t> n = numElements(v);
    if (!n)
      return true;
    largestInput = std::max(largestInput, *n);
  }
  return llvm::any_of(op->getResults(), [&](Value r) {
    std::optional<int64_t> n = numElements(r);
    return !n || *n > 2 * largestInput + 4096;
  });
}

LogicalResult splitPrepack(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  llvm::DenseSet<Value> weightOnly;
  SmallVector<BlockArgument> weights;
  for (BlockArgument arg : body.getArguments())
    if (CuvilDialect::isWeight(fn, arg.getArgNumber())) {
      weightOnly.insert(arg);
      weights.push_back(arg);
    }

  // Forward scan. `free` values (constants, tensor.empty, fills of them,
  // index arithmetic on them) cost little to recompute and are cloned
  // wherever needed. An op is hoisted when it is pure, reads only weights /
  // hoisted / free values (also inside its regions), and either depends on
  // at least one weight, or is costly work on constants (isCostlyOnConstants),
  // or continues such work without broadcasting it (a cast or slice of a
  // table: its broadcast stays in fn, reading the stored table).
  llvm::DenseSet<Value> free, precomputed;
  SmallVector<Operation *> hoisted;
  llvm::DenseSet<Operation *> hoistedSet;
  for (Operation &op : body.without_terminator()) {
    if (!isPure(&op))
      continue;
    bool readsOnlyKnown = true, readsWeight = false, readsPrecomputed = false;
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        if (op.isAncestor(v.getParentRegion()->getParentOp()))
          continue; // defined inside op
        if (weightOnly.contains(v))
          readsWeight = true;
        else if (precomputed.contains(v))
          readsPrecomputed = true;
        else if (!free.contains(v))
          readsOnlyKnown = false;
      }
    });
    if (!readsOnlyKnown)
      continue;
    llvm::DenseSet<Value> *kind = &free;
    if (readsWeight)
      kind = &weightOnly;
    else if (isCostlyOnConstants(&op) || (readsPrecomputed && !expands(&op)))
      kind = &precomputed;
    else if (readsPrecomputed)
      continue; // a broadcast of a table: stays in fn
    // Only tensors cross into main_prepack's results (its callers hold
    // buffers): a scalar read out of a hoisted tensor (quantile's check that
    // all of q lies in [0, 1]) is computed in fn, from the stored tensor.
    if (kind != &free && !llvm::all_of(op.getResultTypes(), llvm::IsaPred<RankedTensorType>))
      continue;
    for (Value r : op.getResults())
      kind->insert(r);
    if (kind != &free) {
      hoisted.push_back(&op);
      hoistedSet.insert(&op);
    }
  }
  // A weight-only broadcast that only initializes accumulators in `fn` (an
  // int8 matmul's zero-point correction, per column, over every row) stays in
  // `fn`: hoisted, it is a full-size packed tensor (1.5 MB for one BERT-base
  // FFN matmul) copied into a fresh accumulator on every call; in `fn`, the
  // matmul's kernel writes it tile by tile, next to the k loop reading it.
  auto usedOnlyInFn = [&](Value r) {
    return llvm::none_of(r.getUsers(), [&](Operation *u) { return hoistedSet.contains(u); });
  };
  for (Operation *op : llvm::make_early_inc_range(llvm::reverse(hoisted)))
    if (isAccumulatorBroadcast(op) && usedOnlyInFn(op->getResult(0))) {
      hoistedSet.erase(op);
      llvm::erase(hoisted, op);
    }
  SmallVector<Value> roots;
  for (Operation *op : hoisted)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !hoistedSet.contains(u); }))
        roots.push_back(r);
  if (roots.empty())
    return success();

  // Build @<fn>_prepack(weights) -> roots.
  OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  SmallVector<Type> weightTypes, rootTypes;
  for (BlockArgument w : weights)
    weightTypes.push_back(w.getType());
  for (Value r : roots)
    rootTypes.push_back(r.getType());
  auto prepack = func::FuncOp::create(b, fn.getLoc(), (fn.getName() + "_prepack").str(),
                                      b.getFunctionType(weightTypes, rootTypes));
  Block *pb = prepack.addEntryBlock();
  IRMapping map;
  for (auto [w, pa] : llvm::zip(weights, pb->getArguments()))
    map.map(w, pa);
  b.setInsertionPointToStart(pb);
  // Free values are cloned (with their own free operands) on first use.
  // Operands include those read inside the op's regions: a generic whose
  // body yields a constant from above (a decode step's position ids) reads it.
  std::function<void(Value)> cloneFree = [&](Value v) {
    if (map.contains(v))
      return;
    Operation *def = v.getDefiningOp();
    def->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!def->isAncestor(operand.getParentRegion()->getParentOp()))
          cloneFree(operand);
    });
    b.clone(*def, map);
  };
  for (Operation *op : hoisted) {
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (free.contains(v))
          cloneFree(v);
    });
    b.clone(*op, map);
  }
  SmallVector<Value> results;
  for (Value r : roots)
    results.push_back(map.lookup(r));
  func::ReturnOp::create(b, fn.getLoc(), results);

  // Replace roots in fn by new arguments; drop the hoisted ops.
  unsigned firstNew = fn.getNumArguments();
  for (auto [i, r] : llvm::enumerate(roots)) {
    DictionaryAttr attrs = b.getDictionaryAttr({CuvilDialect::getPackedAttr(b, i)});
    if (failed(fn.insertArgument(firstNew + i, r.getType(), attrs, r.getLoc())))
      return failure();
    r.replaceAllUsesWith(body.getArgument(firstNew + i));
  }
  for (Operation *op : llvm::reverse(hoisted))
    op->erase();
  // Weights now unused by fn are dropped from its signature.
  llvm::BitVector dead(fn.getNumArguments());
  for (BlockArgument w : weights)
    if (w.use_empty())
      dead.set(w.getArgNumber());
  return fn.eraseArguments(dead);
}

struct CuvilSplitPrepackPass
    : mlir::cuvil::impl::CuvilSplitPrepackBase<CuvilSplitPrepackPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> fns(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp fn : fns)
      if (!fn.isExternal() && failed(splitPrepack(fn)))
        return signalPassFailure();
  }
};

} // namespace
