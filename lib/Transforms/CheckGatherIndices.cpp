//===- CheckGatherIndices.cpp - gathers read in bounds, report the rest ---===//
// torch-mlir lowers embedding, gather, index_select and x[idx] to a
// linalg.generic whose body reads `tensor.extract %table[%i, ...]` with an
// index computed from an input element. Its bounds checks are cf.asserts
// inside the body, which cuvil-strip-asserts must remove (side effects in a
// body block fusion and vectorization): an index out of range would then read
// arbitrary memory. This pass, run before it, clamps every such data-dependent
// index into range (the read is always in bounds) and reports the indices
// that were out of range through the runtime, as a reduction next to the op
// recomputing them (eager raises IndexError; so does the call).
//===----------------------------------------------------------------------===//
#include "RuntimeErrors.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILCHECKGATHERINDICES
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// One data-dependent index of a tensor.extract in a linalg body.
struct GatherIndex {
  tensor::ExtractOp extract;
  unsigned position;           // which index operand
  Value size;                  // the source's size there (defined before the generic)
  SmallVector<Operation *> slice;   // the body ops computing it, in order
  SmallVector<unsigned> inputs;     // the generic's inputs it reads (block argument numbers)
};

/// The body ops computing `v` and the input block arguments they read; false
/// when `v` depends on something a separate reduction cannot recompute (the
/// output argument, an op with side effects, a nested region).
bool computeSlice(linalg::GenericOp generic, Value v, GatherIndex &index) {
  Block *body = generic.getBody();
  SetVector<Operation *> ops;
  SetVector<unsigned> args;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() != body)
        continue;   // defined above the generic
      if (arg.getArgNumber() >= generic.getNumDpsInputs())
        return false;
      args.insert(arg.getArgNumber());
      continue;
    }
    Operation *op = x.getDefiningOp();
    if (op->getBlock() != body)
      continue;   // defined above the generic
    if (!isMemoryEffectFree(op) || op->getNumRegions() || isa<tensor::ExtractOp>(op))
      return false;
    if (ops.insert(op))
      llvm::append_range(work, op->getOperands());
  }
  if (args.empty())
    return false;   // from loop indices and constants only: in range by construction
  index.slice.assign(ops.begin(), ops.end());
  llvm::sort(index.slice, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  index.inputs.assign(args.begin(), args.end());
  llvm::sort(index.inputs);
  return true;
}

SmallVector<GatherIndex> gatherIndices(linalg::GenericOp generic) {
  SmallVector<GatherIndex> found;
  generic.getBody()->walk([&](tensor::ExtractOp extract) {
    Value source = extract.getTensor();
    if (source.getParentBlock() == generic.getBody())
      return;
    for (auto [k, v] : llvm::enumerate(extract.getIndices())) {
      GatherIndex index{extract, static_cast<unsigned>(k), {}, {}, {}};
      if (computeSlice(generic, v, index))
        found.push_back(std::move(index));
    }
  });
  return found;
}

struct CuvilCheckGatherIndicesPass : cuvil::impl::CuvilCheckGatherIndicesBase<CuvilCheckGatherIndicesPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.hasPureTensorSemantics())
        generics.push_back(g);
    });
    for (linalg::GenericOp g : generics) {
      SmallVector<GatherIndex> indices = gatherIndices(g);
      if (!indices.empty())
        check(g, indices);
    }
  }

  void check(linalg::GenericOp g, MutableArrayRef<GatherIndex> all) {
    OpBuilder outside(g);
    SmallVector<GatherIndex *> indices;   // the reported ones
    for (GatherIndex &index : all) {
      index.size = tensor::DimOp::create(outside, g.getLoc(), index.extract.getTensor(), index.position);
      // Reported when it may change between calls (not from weights only).
      if (llvm::any_of(index.inputs, [&](unsigned i) {
            return cuvil::dependsOnCallInputs(g.getDpsInputOperand(i)->get());
          }))
        indices.push_back(&index);
    }
    if (!indices.empty())
      report(g, indices, cuvil::getOrDeclareRuntimeError(getOperation()->getParentOfType<ModuleOp>()));
    clamp(all);
  }

  /// A reduction next to `g` recomputing the indices from the inputs they
  /// come from, and the report if any was out of range.
  void report(linalg::GenericOp g, ArrayRef<GatherIndex *> indices, func::FuncOp reporter) {
    SetVector<unsigned> used;
    for (GatherIndex *index : indices)
      used.insert(index->inputs.begin(), index->inputs.end());
    SmallVector<unsigned> inputs(used.begin(), used.end());
    llvm::sort(inputs);
    SmallVector<OpOperand *> operands;
    for (unsigned i : inputs)
      operands.push_back(g.getDpsInputOperand(i));
    auto outOfRange = [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
      Value any;
      for (GatherIndex *indexPtr : indices) {
        GatherIndex &index = *indexPtr;
        IRMapping map;
        for (auto [i, arg] : llvm::zip(inputs, args))
          map.map(g.getBody()->getArgument(i), arg);
        for (Operation *op : index.slice)
          b.clone(*op, map);
        Value v = map.lookupOrDefault(index.extract.getIndices()[index.position]);
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value bad = arith::OrIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero),
                                         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, index.size));
        any = any ? Value(arith::OrIOp::create(b, loc, any, bad)) : bad;
      }
      return any;
    };
    cuvil::reportIfAny(g, operands, outOfRange, cuvil::RuntimeError::IndexOutOfRange, reporter);
  }

  /// Every read clamped into [0, size - 1]: always in bounds.
  void clamp(MutableArrayRef<GatherIndex> indices) {
    for (GatherIndex &index : indices) {
      OpBuilder b(index.extract);
      Location loc = index.extract.getLoc();
      Value v = index.extract.getIndices()[index.position];
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value last = arith::SubIOp::create(b, loc, index.size, arith::ConstantIndexOp::create(b, loc, 1));
      Value clamped = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, v, last), zero);
      index.extract->setOperand(1 + index.position, clamped);
    }
  }
};

} // namespace
