//===- RuntimeErrors.cpp - reporting errors from compiled code ------------===//
#include "RuntimeErrors.h"
#include "cuvil/Dialect/CuvilDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace mlir::cuvil {

func::FuncOp getOrDeclareRuntimeError(ModuleOp module) {
  constexpr StringLiteral name = "cuvil_runtime_error";
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name, b.getFunctionType({b.getI32Type()}, {}));
  f.setPrivate();
  return f;
}

void reportIf(OpBuilder &b, Location loc, Value flag, RuntimeError code, func::FuncOp reporter) {
  auto ifOp = scf::IfOp::create(b, loc, flag, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value c = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(code)));
  func::CallOp::create(b, loc, reporter, ValueRange{c});
}

void reportIfAny(linalg::GenericOp generic, ArrayRef<OpOperand *> inputs,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> condition, RuntimeError code,
                 func::FuncOp reporter) {
  Location loc = generic.getLoc();
  OpBuilder b(generic);
  b.setInsertionPointAfter(generic);
  Type i8 = b.getI8Type();
  Value zero8 = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i8);
  Value init = linalg::FillOp::create(b, loc, ValueRange{zero8}, ValueRange{empty}).getResult(0);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  unsigned loops = generic.getNumLoops();
  llvm::SmallBitVector unused(loops, true);
  bool permutations = !inputs.empty();
  for (OpOperand *in : inputs) {
    ins.push_back(in->get());
    maps.push_back(generic.getMatchingIndexingMap(in));
    permutations &= maps.back().isProjectedPermutation();
    for (AffineExpr e : maps.back().getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        unused.reset(d.getPosition());
  }
  // The other loops must run at least once (a 0 x N result reads nothing).
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  for (unsigned d : unused.set_bits())
    permutations &= ranges[d] > 0 && !ShapedType::isDynamic(ranges[d]);
  if (permutations) {
    // Only the loops the inputs index, whose sizes they give: an
    // embedding's check runs over its 128 indices, not its 128 x 768
    // outputs (0.2 ms of BERT-base).
    for (AffineMap &map : maps)
      map = compressDims(map, unused);
    loops -= unused.count();
  } else {
    // The op's result, unused in the body, gives the loops their sizes.
    ins.push_back(generic->getResult(0));
    maps.push_back(generic.getIndexingMapMatchingResult(generic->getResult(0)));
  }
  maps.push_back(AffineMap::get(loops, 0, b.getContext()));
  SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::reduction);
  auto any = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value bad = condition(nb, l, args.take_front(inputs.size()));
        Value acc = arith::OrIOp::create(nb, l, args.back(), arith::ExtUIOp::create(nb, l, i8, bad));
        linalg::YieldOp::create(nb, l, acc);
      });
  Value flag = tensor::ExtractOp::create(b, loc, any.getResult(0), ValueRange{});
  reportIf(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, zero8), code, reporter);
}

bool dependsOnCallInputs(Value v) {
  SmallVector<Value> work = {v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (func && arg.getOwner()->isEntryBlock()) {
        std::optional<StringRef> kind = CuvilDialect::getArgKind(func, arg.getArgNumber());
        if (!kind || *kind == CuvilDialect::getUserInputKind())
          return true;   // an input (or a function the importer did not describe)
        continue;
      }
      // A block argument of a nested region (a linalg body): what its op reads.
      work.append(arg.getOwner()->getParentOp()->getOperands().begin(),
                  arg.getOwner()->getParentOp()->getOperands().end());
      continue;
    }
    Operation *op = x.getDefiningOp();
    llvm::append_range(work, op->getOperands());
    SetVector<Value> captured;
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, captured);
    llvm::append_range(work, captured);
  }
  return false;
}

} // namespace mlir::cuvil
