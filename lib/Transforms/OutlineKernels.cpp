//===- OutlineKernels.cpp - one function per kernel, duplicates shared ----===//
// A transformer repeats the same layer N times: the same ops on the same
// shapes, reading different weights. Inline in `main`, every copy is
// scheduled, lowered and code-generated again. Outlined into functions that
// take the weights as arguments, the copies print the same and are kept once.
//===----------------------------------------------------------------------===//
#include "RowChains.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

/// A tensor.pad that a root's result feeds (through static reshapes): the
/// padding in front of the next conv or pool. The root's kernel then writes
/// the padded tensor: the border filled, the root's result computed straight
/// into the interior. Left in `main`, the pad became a buffer of its own,
/// filled whole, and the result was copied into it (ResNet-18 int8: 18 pads,
/// 3 MB filled and copied per call). Other users of the result (a block's
/// output also feeds the next block's residual add) read the interior.
struct PadSink {
  tensor::PadOp pad;
  /// The reshapes from the root's result to the pad's source, in order.
  SmallVector<Operation *> reshapes;
  /// Uses of the root's result (0) or of reshapes[i - 1] (i) other than the
  /// chain's own.
  SmallVector<std::pair<unsigned, OpOperand *>> sideUses;
};

std::optional<PadSink> findPadSink(Operation *root) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(root);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(root);
  if (!dps || !linalgOp || root->getNumResults() != 1 || dps.getNumDpsInits() != 1)
    return std::nullopt;
  // The interior of the padded buffer becomes the root's destination,
  // whatever was there before: the root's init must be an empty tensor it
  // does not read, or the fill of one (a pool's -inf, a sum's zero), which
  // then fills the interior.
  OpOperand *init = dps.getDpsInitOperand(0);
  Value empty = init->get();
  if (auto fill = empty.getDefiningOp<linalg::FillOp>())
    empty = fill.getDpsInitOperand(0)->get();
  else if (linalgOp.payloadUsesValueFromOperand(init))
    return std::nullopt;
  if (!isa_and_nonnull<tensor::EmptyOp>(empty.getDefiningOp()) || !isCloned(init->get()))
    return std::nullopt;
  PadSink sink;
  Value v = root->getResult(0);
  for (unsigned depth = 0;; ++depth) {
    // The chain goes on through the one pad (or else the one static
    // reshape) using v; any other use is a side use.
    tensor::PadOp pad;
    Operation *reshape = nullptr;
    bool ambiguous = false;
    for (Operation *user : v.getUsers()) {
      if (auto p = dyn_cast<tensor::PadOp>(user); p && p.getSource() == v) {
        ambiguous |= bool(pad);
        pad = p;
      } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user) &&
                 isStaticType(user->getResult(0).getType())) {
        ambiguous |= reshape != nullptr;
        reshape = user;
      }
    }
    if (pad) {
      if (ambiguous || pad->getBlock() != root->getBlock() || pad.getNofold() || !pad.getLow().empty() ||
          !pad.getHigh().empty() || !pad.getResultType().hasStaticShape() || !pad.getConstantPaddingValue())
        return std::nullopt;
      // The kernel is called where the root was: a padding value computed
      // after it (not a constant rebuilt in the kernel) is not there yet.
      Value value = pad.getConstantPaddingValue();
      Operation *def = value.getDefiningOp();
      if (!isCloned(value) && def && def->getBlock() == root->getBlock() && !def->isBeforeInBlock(root))
        return std::nullopt;
      sink.pad = pad;
    } else if (!reshape || ambiguous || reshape->getBlock() != root->getBlock()) {
      return std::nullopt;
    }
    Operation *next = pad ? pad.getOperation() : reshape;
    for (OpOperand &use : v.getUses())
      if (use.getOwner() != next)
        sink.sideUses.push_back({depth, &use});
    if (pad)
      return sink;
    sink.reshapes.push_back(reshape);
    v = reshape->getResult(0);
  }
}

/// `dest` (the padded type) with every element outside [low, low + size)
/// set to `value`: two slabs per padded dimension, each a linalg.fill of a
/// slice (the interior is the kernel's to write).
Value fillBorder(OpBuilder &b, Location loc, Value dest, Value value, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> size, ArrayRef<int64_t> padded) {
  int64_t rank = padded.size();
  SmallVector<int64_t> ones(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    for (bool high : {false, true}) {
      int64_t width = high ? padded[d] - low[d] - size[d] : low[d];
      if (width == 0)
        continue;
      SmallVector<int64_t> offsets, sizes;
      for (int64_t j = 0; j < rank; ++j) {
        if (j < d) {
          offsets.push_back(low[j]);
          sizes.push_back(size[j]);
        } else if (j == d) {
          offsets.push_back(high ? low[d] + size[d] : 0);
          sizes.push_back(width);
        } else {
          offsets.push_back(0);
          sizes.push_back(padded[j]);
        }
      }
      MLIRContext *ctx = b.getContext();
      Value slab = tensor::ExtractSliceOp::create(b, loc, dest, getAsIndexOpFoldResult(ctx, offsets),
                                                  getAsIndexOpFoldResult(ctx, sizes), getAsIndexOpFoldResult(ctx, ones));
      Value filled = linalg::FillOp::create(b, loc, value, slab).getResult(0);
      dest = tensor::InsertSliceOp::create(b, loc, filled, dest, getAsIndexOpFoldResult(ctx, offsets),
                                           getAsIndexOpFoldResult(ctx, sizes), getAsIndexOpFoldResult(ctx, ones));
    }
  }
  return dest;
}

/// The reshapes of `reshapes` undone, last first: a value of the pad
/// source's type back to the root result's type.
Value undoReshapes(OpBuilder &b, Location loc, Value v, ArrayRef<Operation *> reshapes) {
  for (Operation *op : llvm::reverse(reshapes)) {
    Type type = op->getOperand(0).getType();
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      v = tensor::ExpandShapeOp::create(b, loc, type, v, collapse.getReassociationIndices());
    else
      v = tensor::CollapseShapeOp::create(b, loc, type, v, cast<tensor::ExpandShapeOp>(op).getReassociationIndices());
  }
  return v;
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
  bool padsIntoProducers;

  KernelOutliner(ModuleOp module, bool rowChains, bool padsIntoProducers)
      : module(module), symbols(module), rowChains(rowChains), padsIntoProducers(padsIntoProducers) {}

  /// Row chains (RowChains.h): the producers outlined with each root, and
  /// every op that is such a producer (not a root of its own).
  llvm::DenseMap<Operation *, SmallVector<Operation *>> chains;
  llvm::DenseSet<Operation *> inChain;

  /// The reshaped views of a padded tensor's interior made for the side
  /// users of a pad sink (PadSink): each has one user.
  llvm::DenseSet<Operation *> interiorViews;

  /// The kernel's ops in program order: absorbed producers, then the root.
  /// An all-parallel generic (a residual add, a gather) also takes in the
  /// view of a padded interior it reads: its kernel gets the padded tensor
  /// and reads it in place. Other kernels get a dense copy, as before.
  void collect(Operation *op, llvm::SetVector<Operation *> &group) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    bool takesViews = generic && generic.getNumLoops() == generic.getNumParallelLoops();
    for (Value v : op->getOperands()) {
      if (v.getDefiningOp() && interiorViews.contains(v.getDefiningOp())) {
        if (takesViews)
          collectView(v.getDefiningOp(), group);
      } else if (isAbsorbed(v) || isBroadcastInit(op, v)) {
        collect(v.getDefiningOp(), group);
      }
    }
    // A gather reads its source in its body (tensor.extract): a strided
    // downsampling conv's window of a block's output.
    if (takesViews) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(op->getRegions(), captured);
      for (Value v : captured)
        if (v.getDefiningOp() && interiorViews.contains(v.getDefiningOp()))
          collectView(v.getDefiningOp(), group);
    }
    group.insert(op);
  }
  void collectView(Operation *view, llvm::SetVector<Operation *> &group) {
    if (Operation *def = view->getOperand(0).getDefiningOp(); def && interiorViews.contains(def))
      collectView(def, group);
    group.insert(view);
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
    std::optional<PadSink> sink;
    if (padsIntoProducers && !chains.contains(root))
      sink = findPadSink(root);

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
    Value padValue = sink ? sink->pad.getConstantPaddingValue() : Value();
    if (sink)
      outside.insert(padValue);
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
    // With a pad sink the destination is the padded tensor, and the root's
    // own empty init becomes a view of its interior.
    Value rootInit;
    if (sink) {
      rootInit = cast<DestinationStyleOpInterface>(root).getDpsInitOperand(0)->get();
      if (auto fill = rootInit.getDefiningOp<linalg::FillOp>())
        rootInit = fill.getDpsInitOperand(0)->get();
      OpBuilder inMain(root);
      RankedTensorType padded = sink->pad.getResultType();
      destinations.clear();
      destinations.insert(
          tensor::EmptyOp::create(inMain, root->getLoc(), padded.getShape(), padded.getElementType()));
    }
    args.append(destinations.begin(), destinations.end());

    OpBuilder b(module.getContext());
    TypeRange resultTypes = root->getResultTypes();
    if (sink)
      resultTypes = sink->pad->getResultTypes();
    auto type = b.getFunctionType(ValueRange(args).getTypes(), resultTypes);
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
    Value padded, interior;
    SmallVector<OpFoldResult> interiorOffsets, interiorSizes, interiorStrides;
    if (sink) {
      if (isCloned(padValue))
        rebuild(padValue);
      tensor::PadOp pad = sink->pad;
      ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
      padded = fillBorder(b, root->getLoc(), body->getArguments().back(), map.lookupOrDefault(padValue),
                          pad.getStaticLow(), sourceShape, pad.getResultType().getShape());
      interiorOffsets = getAsIndexOpFoldResult(b.getContext(), pad.getStaticLow());
      interiorSizes = getAsIndexOpFoldResult(b.getContext(), sourceShape);
      interiorStrides = getAsIndexOpFoldResult(b.getContext(), SmallVector<int64_t>(sourceShape.size(), 1));
      interior = tensor::ExtractSliceOp::create(b, root->getLoc(), padded, interiorOffsets, interiorSizes,
                                                interiorStrides);
      map.map(rootInit, undoReshapes(b, root->getLoc(), interior, sink->reshapes));
    }
    for (Value v : outside)
      if (isCloned(v))
        rebuild(v);
    for (Operation *op : group)
      b.clone(*op, map);
    SmallVector<Value> results;
    for (Value r : root->getResults())
      results.push_back(map.lookup(r));
    if (sink) {
      for (Operation *reshape : sink->reshapes)
        b.clone(*reshape, map);
      Value written = sink->reshapes.empty() ? results.front() : map.lookup(sink->reshapes.back()->getResult(0));
      results = {tensor::InsertSliceOp::create(b, root->getLoc(), written, padded, interiorOffsets, interiorSizes,
                                               interiorStrides)};
    }
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
    if (sink) {
      // Side users read a view of the interior, one slice each (it then goes
      // into the user's kernel, see collect).
      for (auto [depth, use] : sink->sideUses) {
        Value view = tensor::ExtractSliceOp::create(b, root->getLoc(), call.getResult(0), interiorOffsets,
                                                    interiorSizes, interiorStrides);
        Value reshaped = undoReshapes(b, root->getLoc(), view, ArrayRef(sink->reshapes).drop_front(depth));
        use->set(reshaped);
        for (Value w = reshaped;; w = w.getDefiningOp()->getOperand(0)) {
          interiorViews.insert(w.getDefiningOp());
          if (w == view)
            break;
        }
      }
      sink->pad->replaceAllUsesWith(call.getResults());
      sink->pad->erase();
      for (Operation *reshape : llvm::reverse(sink->reshapes))
        reshape->erase();
    } else {
      root->replaceAllUsesWith(call.getResults());
    }
    // The root, then the producers only it used.
    for (Operation *op : llvm::reverse(group))
      if (op->use_empty()) {
        interiorViews.erase(op);   // its address may come back as another op's
        op->erase();
      }
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
    KernelOutliner outliner(module, rowChains, padsIntoProducers);
    for (func::FuncOp fn : publicFns)
      outliner.run(fn);
  }
};

} // namespace
