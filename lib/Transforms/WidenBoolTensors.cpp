//===- WidenBoolTensors.cpp - i1 tensors between linalg ops become i8 -----===//
// The elementwise schedule leaves ops on i1 tensors scalar (i1 memrefs are
// bit-addressed until cuvil-widen-bool-memrefs, which only handles scalar
// loads and stores). torch-mlir's softmax in scaled_dot_product_attention
// reduces each score row to an i1 "all -inf" flag and selects with it: two
// scalar kernels, 5 ms of GPT-2's 225 ms. As i8 (0 or 1), the producer
// yields `extui` of its i1 value and every reader starts with `trunci`, and
// both are vectorized.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILWIDENBOOLTENSORS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

bool isBoolTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.getElementType().isInteger(1);
}

RankedTensorType asBytes(Type t) {
  auto rt = cast<RankedTensorType>(t);
  return RankedTensorType::get(rt.getShape(), IntegerType::get(t.getContext(), 8), rt.getEncoding());
}

/// Retypes `arg` (a block argument of a linalg body) to i8 and gives its
/// users the i1 they expect.
void narrowOnRead(BlockArgument arg) {
  arg.setType(IntegerType::get(arg.getContext(), 8));
  OpBuilder b = OpBuilder::atBlockBegin(arg.getOwner());
  Value bit = arith::TruncIOp::create(b, arg.getLoc(), b.getI1Type(), arg);
  arg.replaceAllUsesExcept(bit, bit.getDefiningOp());
}

/// The i8 version of an i1 init: tensor.empty, or linalg.fill of a constant
/// of tensor.empty. Null when it is something else.
Value bytesInit(OpBuilder &b, Value init) {
  auto type = asBytes(init.getType());
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    return tensor::EmptyOp::create(b, empty.getLoc(), type, empty.getDynamicSizes());
  auto fill = init.getDefiningOp<linalg::FillOp>();
  APInt bit;
  if (!fill || !matchPattern(fill.value(), m_ConstantInt(&bit)))
    return nullptr;
  auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return nullptr;
  Value bytes = tensor::EmptyOp::create(b, empty.getLoc(), type, empty.getDynamicSizes());
  Value v = arith::ConstantOp::create(b, fill.getLoc(), b.getI8IntegerAttr(bit.getZExtValue()));
  return linalg::FillOp::create(b, fill.getLoc(), ValueRange{v}, ValueRange{bytes}).getResult(0);
}

/// Widens result `i` of `producer` when every use of it is an input of a
/// linalg.generic. Returns whether it did.
bool widen(linalg::GenericOp producer, unsigned i) {
  Value result = producer->getResult(i);
  for (OpOperand &use : result.getUses()) {
    auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!reader || !reader.isDpsInput(&use))
      return false;
  }
  OpOperand *initOperand = producer.getDpsInitOperand(i);
  OpBuilder b(producer);
  Value init = bytesInit(b, initOperand->get());
  if (!init)
    return false;

  for (OpOperand &use : llvm::make_early_inc_range(result.getUses()))
    narrowOnRead(cast<linalg::GenericOp>(use.getOwner()).getMatchingBlockArgument(&use));
  initOperand->set(init);
  result.setType(init.getType());
  BlockArgument out = producer.getMatchingBlockArgument(initOperand);
  Operation *yield = producer.getBody()->getTerminator();
  Operation *combiner = yield->getOperand(i).getDefiningOp();
  if (combiner && isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner) && out.hasOneUse() &&
      combiner->hasOneUse() && llvm::is_contained(combiner->getOperands(), Value(out))) {
    // A reduction (`out = out & x`): keep the combiner the only op between
    // the accumulator and the yield, now on i8, so that reduction tiling
    // still recognises it.
    out.setType(b.getI8Type());
    b.setInsertionPoint(combiner);
    for (OpOperand &operand : combiner->getOpOperands())
      if (operand.get() != out)
        operand.set(arith::ExtUIOp::create(b, combiner->getLoc(), b.getI8Type(), operand.get()));
    combiner->getResult(0).setType(b.getI8Type());
    return true;
  }
  if (!out.use_empty())
    narrowOnRead(out);
  else
    out.setType(b.getI8Type());
  b.setInsertionPoint(yield);
  yield->setOperand(i, arith::ExtUIOp::create(b, yield->getLoc(), b.getI8Type(), yield->getOperand(i)));
  return true;
}

struct CuvilWidenBoolTensorsPass : cuvil::impl::CuvilWidenBoolTensorsBase<CuvilWidenBoolTensorsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> producers;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && llvm::any_of(op->getResultTypes(), isBoolTensor))
        producers.push_back(op);
    });
    for (linalg::GenericOp op : producers)
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        if (isBoolTensor(op->getResult(i).getType()))
          (void)widen(op, i);
  }
};

} // namespace
