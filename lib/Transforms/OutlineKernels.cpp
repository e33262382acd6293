//===- OutlineKernels.cpp - one function per kernel, duplicates shared ----===//
// A transformer repeats the same layer N times: the same ops on the same
// shapes, reading different weights. Inline in `main`, every copy is
// scheduled, lowered and code-generated again. Outlined into functions that
// take the weights as arguments, the copies print the same and are kept once.
//===----------------------------------------------------------------------===//
#include "RowChains.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include <functional>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILOUTLINEKERNELS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Kernels are named `cuvil_kernel_<id>_<op>` for whoever reads the IR or a
/// profile; the id itself is the `cuvil.kernel` attribute.
constexpr StringLiteral kKernelPrefix = "cuvil_kernel_";

bool isStaticType(Type t) {
  if (auto tensor = dyn_cast<RankedTensorType>(t))
    return tensor.hasStaticShape();
  return t.isIntOrIndexOrFloat();
}

/// Values cheaper to rebuild inside the kernel than to pass in: scalar and
/// splat constants, empty static tensors and fills of them (a zero fill shared
/// by several matmuls would otherwise be copied for each, and the schedules
/// fuse a fill they can see into the tile loop).
bool isCloned(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    return !dense || dense.isSplat();
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return empty->getNumOperands() == 0;
  // A reshape of one (the VNNI matmuls' [m][n/64][64] accumulator is a
  // 128x768 empty tensor expanded, a row reduction's init a collapsed
  // 1x128x1): without it, the zero fill of BERT-base's 128x12x64
  // accumulators stayed in main, filled once, and was copied for each of
  // the 48 matmuls using it (40 MB of copies per call with the rest).
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
    return isStaticType(v.getType()) && isCloned(def->getOperand(0));
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return fill.hasPureTensorSemantics() && llvm::all_of(def->getOperands(), isCloned);
  return false;
}

/// Producers that belong to their single consumer's kernel: the fill of its
/// init, the padding of its input, the slice it reads (GPT-2's q/k/v columns
/// of one 128x2304 tensor: passed whole, not copied into a dense argument).
bool isAbsorbed(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || isCloned(v) || !v.hasOneUse() ||
      !llvm::all_of(def->getResultTypes(), isStaticType))
    return false;
  return isa<linalg::FillOp, tensor::PadOp, tensor::ExtractSliceOp>(def);
}

/// A linalg op on static tensors (fills excepted: they are rebuilt or absorbed).
bool isOutlinable(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || isa<linalg::FillOp>(op) || !linalgOp.hasPureTensorSemantics())
    return false;
  return llvm::all_of(op->getOperandTypes(), isStaticType) &&
         llvm::all_of(op->getResultTypes(), isStaticType);
}

/// A broadcast that initializes `user`'s accumulator (an int8 matmul's
/// zero-point correction per column, kept out of the prepack function by
/// cuvil-split-prepack): the matmul schedule writes it tile by tile.
bool isBroadcastInit(Operation *user, Value v) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(user);
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!dps || !generic || !v.hasOneUse() || !llvm::is_contained(dps.getDpsInits(), v) ||
      !linalg::isaBroadcastOpInterface(generic) || !generic.hasPureTensorSemantics() ||
      !llvm::all_of(generic->getResultTypes(), isStaticType))
    return false;
  return isOutlinable(user);
}

bool isRoot(Operation &op) {
  if (!isOutlinable(&op))
    return false;
  // A broadcast initializing a kernel's accumulator is outlined with it.
  return !(op.getNumResults() == 1 && op.getResult(0).hasOneUse() &&
           isBroadcastInit(*op.getResult(0).getUsers().begin(), op.getResult(0)));
}

struct KernelOutliner {
  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<func::FuncOp> byBody; // printed body -> kernel
  unsigned created = 0;

  bool rowChains;

  KernelOutliner(ModuleOp module, bool rowChains) : module(module), symbols(module), rowChains(rowChains) {}

  /// Row chains (RowChains.h): the producers outlined with each root, and
  /// every op that is such a producer (not a root of its own).
  llvm::DenseMap<Operation *, SmallVector<Operation *>> chains;
  llvm::DenseSet<Operation *> inChain;

  /// The kernel's ops in program order: absorbed producers, then the root.
  void collect(Operation *op, llvm::SetVector<Operation *> &group) {
    for (Value v : op->getOperands())
      if (isAbsorbed(v) || isBroadcastInit(op, v))
        collect(v.getDefiningOp(), group);
    group.insert(op);
  }
  void collectWithChain(Operation *root, llvm::SetVector<Operation *> &group) {
    for (Operation *producer : chains.lookup(root))
      collect(producer, group);
    collect(root, group);
  }

  /// The chain's ops other than the last write tile-sized intermediates:
  /// an init that is the kernel's destination (main shares one empty tensor
  /// among same-shaped ops) becomes an empty tensor of its own, which the
  /// schedule folds to the tile's size. Left on the destination, the tiles'
  /// intermediates and results would share its memory and bufferization
  /// would copy it.
  void giveChainOwnBuffers(Block *body, Operation *last, unsigned numDestinations) {
    llvm::DenseSet<Operation *> exempt = {last};
    for (Value init : cast<DestinationStyleOpInterface>(last).getDpsInits())
      if (auto fill = init.getDefiningOp<linalg::FillOp>())
        exempt.insert(fill);
    unsigned firstDestination = body->getNumArguments() - numDestinations;
    OpBuilder b = OpBuilder::atBlockBegin(body);
    for (Operation &op : *body) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(&op);
      if (!dps || exempt.contains(&op))
        continue;
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        auto arg = dyn_cast<BlockArgument>(init.get());
        if (!arg || arg.getOwner() != body || arg.getArgNumber() < firstDestination)
          continue;
        auto type = cast<RankedTensorType>(arg.getType());
        init.set(tensor::EmptyOp::create(b, op.getLoc(), type.getShape(), type.getElementType()));
      }
    }
  }

  void outline(Operation *root) {
    llvm::SetVector<Operation *> group;
    collectWithChain(root, group);

    // Everything the group reads from outside (operands and values used in
    // its regions) is either rebuilt inside or becomes an argument.
    llvm::SetVector<Value> outside;
    for (Operation *op : group) {
      for (Value v : op->getOperands())
        outside.insert(v);
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      outside.insert(captured.begin(), captured.end());
    }
    SmallVector<Value> args;
    for (Value v : outside)
      if (!(v.getDefiningOp() && group.contains(v.getDefiningOp())) && !isCloned(v))
        args.push_back(v);
    // Destination passing: the empty tensors the root writes (directly or
    // through a fill) are arguments too, so the result is computed in a
    // buffer the caller allocates (bufferization then drops the equivalent
    // function result) instead of a kernel-local one copied out.
    llvm::SetVector<Value> destinations;
    for (OpOperand &init : cast<DestinationStyleOpInterface>(root).getDpsInitsMutable()) {
      Value v = init.get();
      if (auto fill = v.getDefiningOp<linalg::FillOp>())
        v = fill.getDpsInitOperand(0)->get();
      else if (isBroadcastInit(root, v))
        v = v.getDefiningOp<linalg::GenericOp>().getDpsInitOperand(0)->get();
      // An empty tensor, or a reshape of one: the argument has the type the
      // root writes, so the kernel's result is that argument (a reshape
      // inside would make it a view of it, copied into another out-param).
      if (isa_and_nonnull<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(v.getDefiningOp()) &&
          isCloned(v))
        destinations.insert(v);
    }
    args.append(destinations.begin(), destinations.end());

    OpBuilder b(module.getContext());
    auto type = b.getFunctionType(ValueRange(args).getTypes(), root->getResultTypes());
    auto kernel = func::FuncOp::create(b, root->getLoc(), "cuvil_candidate", type);
    // Read by the elementwise schedule, which fuses the chain row tile by row tile.
    if (chains.contains(root))
      kernel->setAttr("cuvil.row_chain", b.getUnitAttr());
    Block *body = kernel.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping map;
    map.map(args, body->getArguments());
    std::function<void(Value)> rebuild = [&](Value v) {
      if (map.contains(v))
        return;
      for (Value operand : v.getDefiningOp()->getOperands())
        rebuild(operand);
      b.clone(*v.getDefiningOp(), map);
    };
    for (Value v : outside)
      if (isCloned(v))
        rebuild(v);
    for (Operation *op : group)
      b.clone(*op, map);
    SmallVector<Value> results;
    for (Value r : root->getResults())
      results.push_back(map.lookup(r));
    if (chains.contains(root))
      giveChainOwnBuffers(body, results.front().getDefiningOp(), destinations.size());
    func::ReturnOp::create(b, root->getLoc(), results);

    // Identical kernels share one function.
    std::string printed;
    llvm::raw_string_ostream os(printed);
    kernel->print(os, OpPrintingFlags().useLocalScope());
    func::FuncOp callee = byBody.lookup(printed);
    if (callee) {
      kernel.erase();
    } else {
      std::string opName = root->getName().stripDialect().str();
      std::replace(opName.begin(), opName.end(), '.', '_');
      int64_t id = created++;
      kernel.setName((kKernelPrefix + Twine(id) + "_" + opName).str());
      CuvilDialect::setKernelId(kernel, id);
      kernel.setPrivate();
      symbols.insert(kernel); // after the entry points: IR reads top-down
      byBody[printed] = kernel;
      callee = kernel;
    }

    b.setInsertionPoint(root);
    auto call = func::CallOp::create(b, root->getLoc(), callee, args);
    root->replaceAllUsesWith(call.getResults());
    // The root, then the producers only it used.
    for (Operation *op : llvm::reverse(group))
      if (op->use_empty())
        op->erase();
  }

  void run(func::FuncOp fn) {
    // Chains from the last op up: an op in a later op's chain is not a root.
    SmallVector<Operation *> candidates;
    for (Operation &op : fn.getBody().front())
      if (isRoot(op))
        candidates.push_back(&op);
    for (Operation *op : llvm::reverse(candidates)) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!rowChains)
        break;
      if (!generic || inChain.contains(op))
        continue;
      SmallVector<Operation *> producers = rowChainProducers(generic);
      llvm::erase_if(producers, [&](Operation *p) { return inChain.contains(p) || !isRoot(*p); });
      if (producers.empty())
        continue;
      inChain.insert(producers.begin(), producers.end());
      chains[op] = std::move(producers);
    }
    SmallVector<Operation *> roots;
    for (Operation *op : candidates)
      if (!inChain.contains(op))
        roots.push_back(op);
    for (Operation *root : roots)
      outline(root);
    // Fills and constants that were rebuilt inside every kernel using them.
    SmallVector<Operation *> ops;
    for (Operation &op : fn.getBody().front())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }
};

struct CuvilOutlineKernelsPass
    : cuvil::impl::CuvilOutlineKernelsBase<CuvilOutlineKernelsPass> {
  using CuvilOutlineKernelsBase::CuvilOutlineKernelsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> publicFns;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        publicFns.push_back(fn);
    KernelOutliner outliner(module, rowChains);
    for (func::FuncOp fn : publicFns)
      outliner.run(fn);
  }
};

} // namespace
