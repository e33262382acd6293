//===- LowerTMTensor.cpp - torch-mlir's tm_tensor ops -> scf on tensors ----===//
// torch-mlir lowers scatter / index_put, sort and scans to its own tm_tensor
// dialect; Cuvil's MLIR holds them in a stand-in dialect that knows only their
// names (TMTensorStandIn.h). Their semantics (operand order, properties, the
// combiner / comparator regions) are torch-mlir's; see the pass description in
// CuvilPasses.td. Everything here is built from upstream scf / tensor / arith
// ops on tensors, so the rest of the pipeline (bufferization in place of the
// iter_args, lowering) treats them like any loop in @main.
//===----------------------------------------------------------------------===//
#include "RuntimeErrors.h"
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILLOWERTMTENSOR
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// An inherent attribute of a stand-in op: its generic form's properties
/// (`<{...}>`, kept as a dictionary for an op MLIR does not know), or a
/// discardable attribute of that name.
Attribute property(Operation *op, StringRef name) {
  if (auto props = dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    if (Attribute a = props.get(name))
      return a;
  return op->getAttr(name);
}

/// The (ins, outs) operand counts of a destination-style tm_tensor op.
std::optional<std::pair<int32_t, int32_t>> insAndOuts(Operation *op) {
  auto seg = dyn_cast_or_null<DenseI32ArrayAttr>(property(op, "operandSegmentSizes"));
  if (!seg || seg.size() != 2 || seg[0] + seg[1] != static_cast<int32_t>(op->getNumOperands()))
    return std::nullopt;
  return std::make_pair(seg[0], seg[1]);
}

std::optional<int64_t> intProperty(Operation *op, StringRef name) {
  if (auto a = dyn_cast_or_null<IntegerAttr>(property(op, name)))
    return a.getInt();
  return std::nullopt;
}

std::optional<bool> boolProperty(Operation *op, StringRef name) {
  if (auto a = dyn_cast_or_null<BoolAttr>(property(op, name)))
    return a.getValue();
  return std::nullopt;
}

/// The op's single-block region with `numArgs` arguments and a terminator
/// yielding one value, or null.
Block *combinerBlock(Operation *op, unsigned numArgs) {
  if (op->getNumRegions() != 1 || !op->getRegion(0).hasOneBlock())
    return nullptr;
  Block &block = op->getRegion(0).front();
  if (block.getNumArguments() != numArgs || block.empty() ||
      block.back().getName().getStringRef() != "tm_tensor.yield" || block.back().getNumOperands() != 1)
    return nullptr;
  return &block;
}

/// `block`'s ops cloned at the builder with its arguments bound to `args`;
/// the yielded value.
Value inlineBlock(OpBuilder &b, Block &block, ValueRange args) {
  IRMapping map;
  map.map(block.getArguments(), args);
  // Not block.without_terminator(): an op of a dialect without op definitions
  // is not known to be a terminator.
  for (Operation &op : llvm::make_range(block.begin(), std::prev(block.end())))
    b.clone(op, map);
  return map.lookupOrDefault(block.back().getOperand(0));
}

/// torch-mlir orders bools with signed comparisons of i1, where true is -1:
/// before false. Eager orders false before true: the comparator's signed
/// predicates on i1 become unsigned ones.
void orderBoolsAsEager(Block &comparator) {
  comparator.walk([](arith::CmpIOp cmp) {
    if (!cmp.getLhs().getType().isInteger(1))
      return;
    using P = arith::CmpIPredicate;
    switch (cmp.getPredicate()) {
    case P::slt: cmp.setPredicate(P::ult); break;
    case P::sle: cmp.setPredicate(P::ule); break;
    case P::sgt: cmp.setPredicate(P::ugt); break;
    case P::sge: cmp.setPredicate(P::uge); break;
    default: break;
    }
  });
}

/// torch-mlir compares floats with ordered predicates, false whenever a NaN
/// is involved: the merge sort then misplaces NaNs and numbers around them
/// (a silently unsorted result). Eager orders NaN above every number (last
/// ascending, first descending, the largest for topk): each ordered
/// comparison becomes that total order's.
///   ole(a, b) | isnan(b)               olt(a, b) | (!isnan(a) & isnan(b))
///   oge(a, b) | isnan(a)               ogt(a, b) | (isnan(a) & !isnan(b))
void orderNaNsAsEager(Block &comparator) {
  SmallVector<arith::CmpFOp> cmps;
  comparator.walk([&](arith::CmpFOp cmp) { cmps.push_back(cmp); });
  for (arith::CmpFOp cmp : cmps) {
    using P = arith::CmpFPredicate;
    P pred = cmp.getPredicate();
    if (pred != P::OLE && pred != P::OLT && pred != P::OGE && pred != P::OGT)
      continue;
    OpBuilder b(cmp->getContext());
    b.setInsertionPointAfter(cmp);
    Location loc = cmp.getLoc();
    Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
    auto isNaN = [&](Value v) { return arith::CmpFOp::create(b, loc, P::UNO, v, v).getResult(); };
    auto isNumber = [&](Value v) { return arith::CmpFOp::create(b, loc, P::ORD, v, v).getResult(); };
    Value extra;
    switch (pred) {
    case P::OLE: extra = isNaN(rhs); break;
    case P::OGE: extra = isNaN(lhs); break;
    case P::OLT: {
      Value first = isNumber(lhs), second = isNaN(rhs);   // in this order in the IR
      extra = arith::AndIOp::create(b, loc, first, second);
      break;
    }
    default: {
      Value first = isNaN(lhs), second = isNumber(rhs);
      extra = arith::AndIOp::create(b, loc, first, second);
      break;
    }
    }
    Value total = arith::OrIOp::create(b, loc, cmp.getResult(), extra);
    cmp.getResult().replaceAllUsesExcept(total, total.getDefiningOp());
  }
}

/// torch-mlir accumulates bools (index_put / index_add / scatter_add) with
/// arith.addi on i1, where 1 + 1 = 0; eager's bool sum saturates: a logical or.
void addBoolsAsEager(Block &combiner) {
  SmallVector<arith::AddIOp> adds;
  combiner.walk([&](arith::AddIOp add) {
    if (add.getType().isInteger(1))
      adds.push_back(add);
  });
  for (arith::AddIOp add : adds) {
    OpBuilder b(add);
    add.replaceAllUsesWith(arith::OrIOp::create(b, add.getLoc(), add.getLhs(), add.getRhs()).getResult());
    add.erase();
  }
}

SmallVector<Value> sizesOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, tensor, d));
    else
      sizes.push_back(arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)));
  }
  return sizes;
}

Value index(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

/// scf.for loops over [0, ubs) (none: the body runs once), carrying `inits`.
SmallVector<Value> loopNest(OpBuilder &b, Location loc, ValueRange ubs, ValueRange inits,
                            function_ref<scf::ValueVector(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  SmallVector<Value> lbs(ubs.size(), index(b, loc, 0)), steps(ubs.size(), index(b, loc, 1));
  scf::LoopNest nest = scf::buildLoopNest(b, loc, lbs, ubs, steps, inits, body);
  return SmallVector<Value>(nest.results);
}

LogicalResult replaceWith(Operation *op, ValueRange results) {
  op->replaceAllUsesWith(results);
  op->erase();
  return success();
}

bool rankedTensors(ValueRange values) {
  return llvm::all_of(values, [](Value v) { return isa<RankedTensorType>(v.getType()); });
}

//===----------------------------------------------------------------------===//
// tm_tensor.scan dimension(d) inclusive(b) ins(input) outs(output, accumulator)
//   inclusive: out[0] = in[0],  out[i] = f(out[i-1], in[i])
//   exclusive: out[0] = acc,    out[i] = f(out[i-1], in[i-1])
//   the accumulator (input's shape without d) ends holding the last value.
//===----------------------------------------------------------------------===//
LogicalResult lowerScan(Operation *op) {
  auto counts = insAndOuts(op);
  std::optional<int64_t> dim = intProperty(op, "dimension");
  std::optional<bool> inclusive = boolProperty(op, "inclusive");
  Block *body = combinerBlock(op, 2);
  if (!counts || *counts != std::make_pair(1, 2) || !dim || !inclusive || !body ||
      op->getNumResults() != 2 || !rankedTensors(op->getOperands()))
    return op->emitOpError("is not a scan as torch-mlir writes it "
                           "(ins(input) outs(output, accumulator), dimension, inclusive, a combiner)");
  Value input = op->getOperand(0), output = op->getOperand(1), acc = op->getOperand(2);
  int64_t d = *dim;
  if (d < 0 || d >= cast<RankedTensorType>(input.getType()).getRank())
    return op->emitOpError("scans dimension ") << d << ", out of the input's rank";

  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> results = loopNest(
      b, loc, sizesOf(b, loc, input), ValueRange{output, acc},
      [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange args) -> scf::ValueVector {
        SmallVector<Value> accIdx;
        for (auto [i, iv] : llvm::enumerate(ivs))
          if (static_cast<int64_t>(i) != d)
            accIdx.push_back(iv);
        SmallVector<Value> prevIdx(ivs);
        Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ivs[d], index(b, loc, 0));
        auto value = scf::IfOp::create(
            b, loc, first,
            [&](OpBuilder &b, Location loc) {
              Value v = *inclusive ? tensor::ExtractOp::create(b, loc, input, ivs).getResult()
                                   : tensor::ExtractOp::create(b, loc, args[1], accIdx).getResult();
              scf::YieldOp::create(b, loc, v);
            },
            [&](OpBuilder &b, Location loc) {
              prevIdx[d] = arith::SubIOp::create(b, loc, ivs[d], index(b, loc, 1));
              Value prev = tensor::ExtractOp::create(b, loc, args[0], prevIdx);
              Value x = tensor::ExtractOp::create(b, loc, input, *inclusive ? SmallVector<Value>(ivs) : prevIdx);
              scf::YieldOp::create(b, loc, inlineBlock(b, *body, {prev, x}));
            });
        Value v = value.getResult(0);
        Value out = tensor::InsertOp::create(b, loc, v, args[0], ivs);
        Value last = tensor::InsertOp::create(b, loc, v, args[1], accIdx);
        return {out, last};
      });
  return replaceWith(op, results);
}

//===----------------------------------------------------------------------===//
// tm_tensor.scatter {dimension_map} ins(updates, indices) outs(original)
//   for every element u of updates at (n, j...): the j... go to original's
//   trailing dims; index column i (of row n) is added to dim dimension_map[i];
//   original[pos] = f(u, original[pos]).
//===----------------------------------------------------------------------===//
LogicalResult lowerScatter(Operation *op, ModuleOp module) {
  auto counts = insAndOuts(op);
  auto dimMap = dyn_cast_or_null<DenseI64ArrayAttr>(property(op, "dimension_map"));
  Block *body = combinerBlock(op, 2);
  if (!counts || *counts != std::make_pair(2, 1) || !dimMap || !body || op->getNumResults() != 1 ||
      !rankedTensors(op->getOperands()))
    return op->emitOpError("is not a scatter as torch-mlir writes it "
                           "(ins(updates, indices) outs(original), dimension_map, a combiner)");
  Value updates = op->getOperand(0), indices = op->getOperand(1), original = op->getOperand(2);
  auto updType = cast<RankedTensorType>(updates.getType());
  auto idxType = cast<RankedTensorType>(indices.getType());
  auto origType = cast<RankedTensorType>(original.getType());
  int64_t origRank = origType.getRank(), updRank = updType.getRank();
  if (idxType.getRank() != 2 || idxType.isDynamicDim(1) || !isa<IntegerType>(idxType.getElementType()) ||
      idxType.getDimSize(1) != static_cast<int64_t>(dimMap.size()) || updRank < 1 || updRank - 1 > origRank)
    return op->emitOpError("has indices ") << idxType << " and updates " << updType
                                           << " that do not fit its original " << origType;
  for (int64_t dim : dimMap.asArrayRef())
    if (dim < 0 || dim >= origRank)
      return op->emitOpError("maps an index to dimension ") << dim << ", out of the original's rank";

  addBoolsAsEager(*body);
  // Indices the caller passes may be out of range: skipped, and reported.
  func::FuncOp reporter = cuvil::dependsOnCallInputs(indices) ? cuvil::getOrDeclareRuntimeError(module) : nullptr;
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> origSizes = sizesOf(b, loc, original);
  SmallVector<Value> results = loopNest(
      b, loc, sizesOf(b, loc, updates), ValueRange{original},
      [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange args) -> scf::ValueVector {
        Value update = tensor::ExtractOp::create(b, loc, updates, ivs);
        SmallVector<Value> pos(origRank);
        int64_t offset = origRank - (updRank - 1);
        for (int64_t j = 1; j < updRank; ++j)
          pos[offset + j - 1] = ivs[j];
        Value inBounds = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
        for (auto [i, dim] : llvm::enumerate(dimMap.asArrayRef())) {
          Value raw = tensor::ExtractOp::create(b, loc, indices, ValueRange{ivs[0], index(b, loc, i)});
          Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
          if (pos[dim])
            at = arith::AddIOp::create(b, loc, at, pos[dim]);
          pos[dim] = at;
        }
        for (auto [dim, at] : llvm::enumerate(pos)) {
          if (!llvm::is_contained(dimMap.asArrayRef(), static_cast<int64_t>(dim)))
            continue;
          // Python's negative indices count from the end (index_put's x[-1] = v:
          // torch-mlir passes them through); then, unsigned, anything still
          // negative is out of range too.
          Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at, index(b, loc, 0));
          at = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, at, origSizes[dim]), at);
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, origSizes[dim]);
          inBounds = arith::AndIOp::create(b, loc, inBounds, ok);
        }
        auto updated = scf::IfOp::create(
            b, loc, inBounds,
            [&](OpBuilder &b, Location loc) {
              Value old = tensor::ExtractOp::create(b, loc, args[0], pos);
              Value v = inlineBlock(b, *body, {update, old});
              scf::YieldOp::create(b, loc, tensor::InsertOp::create(b, loc, v, args[0], pos).getResult());
            },
            [&](OpBuilder &b, Location loc) {
              if (reporter) {
                Value code = arith::ConstantOp::create(
                    b, loc, b.getI32IntegerAttr(static_cast<int32_t>(cuvil::RuntimeError::IndexOutOfRange)));
                func::CallOp::create(b, loc, reporter, ValueRange{code});
              }
              scf::YieldOp::create(b, loc, args[0]);
            });
        return {updated.getResult(0)};
      });
  return replaceWith(op, results);
}

//===----------------------------------------------------------------------===//
// tm_tensor.sort dimension(d) outs(t0, t1, ...) { (a0, b0, a1, b1, ...) -> i1 }
//   every line along d sorted, all operands permuted alike; the comparator
//   is true when a may stay before b. A bottom-up merge sort (O(n log n):
//   topk over a 32k vocabulary is a sort here): runs of width w of the
//   operands merged into runs of 2w in a scratch tensor and copied back,
//   while w < n; a tie takes from the left run, so the sort is stable.
//===----------------------------------------------------------------------===//
LogicalResult lowerSort(Operation *op) {
  auto counts = insAndOuts(op);
  std::optional<int64_t> dim = intProperty(op, "dimension");
  unsigned n = op->getNumOperands();
  Block *cmp = combinerBlock(op, 2 * n);
  if (!counts || counts->first != 0 || n == 0 || !dim || !cmp || op->getNumResults() != n ||
      !rankedTensors(op->getOperands()))
    return op->emitOpError("is not a sort as torch-mlir writes it (outs(...) only, dimension, a comparator)");
  int64_t d = *dim;
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  if (d < 0 || d >= type.getRank())
    return op->emitOpError("sorts dimension ") << d << ", out of the operands' rank";
  orderBoolsAsEager(*cmp);
  orderNaNsAsEager(*cmp);

  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> sizes = sizesOf(b, loc, op->getOperand(0));
  Value length = sizes[d];
  SmallVector<Value> lineSizes(sizes);
  lineSizes.erase(lineSizes.begin() + d);
  SmallVector<Type> types(op->getOperandTypes());

  // state: width, the sorted-so-far runs (src), the scratch they merge into (dst).
  SmallVector<Value> inits{index(b, loc, 1)};
  inits.append(op->operand_begin(), op->operand_end());
  // The scratch tensors: bufferization.alloc_tensor, not tensor.empty, which
  // CSE would fold into one buffer for operands of one type (an int64 sort's
  // values and indices).
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(size);
  for (Type t : types)
    inits.push_back(bufferization::AllocTensorOp::create(b, loc, cast<RankedTensorType>(t), dynamicSizes));
  SmallVector<Type> stateTypes{b.getIndexType()};
  stateTypes.append(types);
  stateTypes.append(types);

  auto passes = scf::WhileOp::create(
      b, loc, stateTypes, inits,
      [&](OpBuilder &b, Location loc, ValueRange state) {
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, state[0], length);
        scf::ConditionOp::create(b, loc, more, state);
      },
      [&](OpBuilder &b, Location loc, ValueRange state) {
        Value width = state[0];
        ValueRange src = state.slice(1, n), dst = state.slice(1 + n, n);
        Value twice = arith::AddIOp::create(b, loc, width, width);
        SmallVector<Value> merged = loopNest(
            b, loc, lineSizes, dst,
            [&](OpBuilder &b, Location loc, ValueRange lineIvs, ValueRange outs) -> scf::ValueVector {
              auto at = [&](Value i) {
                SmallVector<Value> idx(lineIvs);
                idx.insert(idx.begin() + d, i);
                return idx;
              };
              auto runs = scf::ForOp::create(
                  b, loc, index(b, loc, 0), length, twice, outs,
                  [&](OpBuilder &b, Location loc, Value lo, ValueRange outs) {
                    Value mid = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, lo, width), length);
                    Value hi = arith::MinUIOp::create(b, loc, arith::AddIOp::create(b, loc, lo, twice), length);
                    Value one = index(b, loc, 1);
                    SmallVector<Value> carried{lo, mid};
                    carried.append(outs.begin(), outs.end());
                    auto merge = scf::ForOp::create(
                        b, loc, lo, hi, one, carried,
                        [&](OpBuilder &b, Location loc, Value p, ValueRange st) {
                          Value i = st[0], j = st[1];
                          Value leftLeft = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, mid);
                          Value rightLeft = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, hi);
                          // Read both heads at in-range positions (an exhausted run's
                          // head is clamped: its value is not used).
                          Value li = arith::MinUIOp::create(b, loc, i, arith::SubIOp::create(b, loc, mid, one));
                          Value rj = arith::MinUIOp::create(
                              b, loc, arith::MaxUIOp::create(b, loc, j, mid), arith::SubIOp::create(b, loc, hi, one));
                          SmallVector<Value> args;
                          for (Value t : src) {
                            args.push_back(tensor::ExtractOp::create(b, loc, t, at(li)));
                            args.push_back(tensor::ExtractOp::create(b, loc, t, at(rj)));
                          }
                          Value ordered = inlineBlock(b, *cmp, args);
                          // left if it has one and (right has none, or left may go first)
                          Value rightDone = arith::XOrIOp::create(
                              b, loc, rightLeft, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
                          Value takeLeft = arith::AndIOp::create(
                              b, loc, leftLeft, arith::OrIOp::create(b, loc, rightDone, ordered));
                          Value from = arith::SelectOp::create(b, loc, takeLeft, li, rj);
                          SmallVector<Value> next{
                              arith::SelectOp::create(b, loc, takeLeft, arith::AddIOp::create(b, loc, i, one), i),
                              arith::SelectOp::create(b, loc, takeLeft, j, arith::AddIOp::create(b, loc, j, one))};
                          for (auto [t, out] : llvm::zip(src, st.drop_front(2))) {
                            Value v = tensor::ExtractOp::create(b, loc, t, at(from));
                            next.push_back(tensor::InsertOp::create(b, loc, v, out, at(p)));
                          }
                          scf::YieldOp::create(b, loc, next);
                        });
                    scf::YieldOp::create(b, loc, merge.getResults().drop_front(2));
                  });
              return scf::ValueVector(runs.getResults());
            });
        // The merged runs go back into the operands' buffer: a while loop's
        // iter_args bufferize in place only when each yields its own
        // (swapping src and dst would not bufferize).
        SmallVector<Value> next{twice};
        for (auto [from, to] : llvm::zip(merged, src))
          next.push_back(linalg::CopyOp::create(b, loc, from, to).getResult(0));
        next.append(merged);
        scf::YieldOp::create(b, loc, next);
      });
  return replaceWith(op, passes.getResults().slice(1, n));
}

//===----------------------------------------------------------------------===//
// tm_tensor.topk dimension(d) ins(values [, indices]) outs(top, topIndices)
//   top starts filled with the worst value (kthvalue: +inf); every element
//   along d is carried down the k slots of its line, taking a slot from a
//   worse value (the comparator: true when the first is better) or an equal
//   one of a larger index, and carrying that one on.
//===----------------------------------------------------------------------===//
LogicalResult lowerTopk(Operation *op) {
  auto counts = insAndOuts(op);
  std::optional<int64_t> dim = intProperty(op, "dimension");
  Block *cmp = combinerBlock(op, 2);
  if (!counts || (counts->first != 1 && counts->first != 2) || counts->second != 2 || !dim || !cmp ||
      op->getNumResults() != 2 || !rankedTensors(op->getOperands()))
    return op->emitOpError("is not a topk as torch-mlir writes it "
                           "(ins(values [, indices]) outs(values, indices), dimension, a comparator)");
  int64_t d = *dim;
  Value values = op->getOperand(0);
  Value indices = counts->first == 2 ? op->getOperand(1) : Value();
  Value top = op->getOperand(counts->first), topIndices = op->getOperand(counts->first + 1);
  auto type = cast<RankedTensorType>(values.getType());
  auto indexElement = dyn_cast<IntegerType>(cast<RankedTensorType>(topIndices.getType()).getElementType());
  if (d < 0 || d >= type.getRank() || !indexElement)
    return op->emitOpError("has dimension ") << d << " or indices that are not integers";
  orderBoolsAsEager(*cmp);
  orderNaNsAsEager(*cmp);

  OpBuilder b(op);
  Location loc = op->getLoc();
  Value k = sizesOf(b, loc, top)[d];
  SmallVector<Value> results = loopNest(
      b, loc, sizesOf(b, loc, values), ValueRange{top, topIndices},
      [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange outs) -> scf::ValueVector {
        Value value = tensor::ExtractOp::create(b, loc, values, ivs);
        Value idx = indices ? tensor::ExtractOp::create(b, loc, indices, ivs).getResult()
                            : arith::IndexCastOp::create(b, loc, indexElement, ivs[d]).getResult();
        auto slots = scf::ForOp::create(
            b, loc, index(b, loc, 0), k, index(b, loc, 1), ValueRange{outs[0], outs[1], value, idx},
            [&](OpBuilder &b, Location loc, Value slot, ValueRange state) {
              SmallVector<Value> at(ivs);
              at[d] = slot;
              Value slotValue = tensor::ExtractOp::create(b, loc, state[0], at);
              Value slotIndex = tensor::ExtractOp::create(b, loc, state[1], at);
              Value better = inlineBlock(b, *cmp, {state[2], slotValue});
              Value worse = inlineBlock(b, *cmp, {slotValue, state[2]});
              // Neither better nor worse: a tie, which the smaller index wins.
              Value tie = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, better, worse);
              Value earlier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, state[3], slotIndex);
              Value take = arith::SelectOp::create(b, loc, tie, earlier, better);
              Value newTop = tensor::InsertOp::create(
                  b, loc, arith::SelectOp::create(b, loc, take, state[2], slotValue), state[0], at);
              Value newIndices = tensor::InsertOp::create(
                  b, loc, arith::SelectOp::create(b, loc, take, state[3], slotIndex), state[1], at);
              scf::YieldOp::create(b, loc,
                                   ValueRange{newTop, newIndices,
                                              arith::SelectOp::create(b, loc, take, slotValue, state[2]),
                                              arith::SelectOp::create(b, loc, take, slotIndex, state[3])});
            });
        return {slots.getResult(0), slots.getResult(1)};
      });
  return replaceWith(op, results);
}

struct CuvilLowerTMTensorPass : cuvil::impl::CuvilLowerTMTensorBase<CuvilLowerTMTensorPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      if (name.starts_with("tm_tensor.") && name != "tm_tensor.yield")
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      StringRef name = op->getName().getStringRef();
      LogicalResult lowered = name == "tm_tensor.scan"      ? lowerScan(op)
                              : name == "tm_tensor.scatter" ? lowerScatter(op, module)
                              : name == "tm_tensor.sort"    ? lowerSort(op)
                              : name == "tm_tensor.topk"    ? lowerTopk(op)
                                                            : op->emitOpError("has no lowering in Cuvil "
                                                                              "(scatter, sort, topk and scan have)");
      if (failed(lowered))
        return signalPassFailure();
    }
  }
};

} // namespace
