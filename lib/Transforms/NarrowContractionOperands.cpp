//===- NarrowContractionOperands.cpp - bf16/f16 operands, f32 accumulation ===//
// PyTorch runs a bf16 / fp16 model's matmuls with f32 accumulation, and
// torch-mlir spells that as `extf` of each operand to f32 followed by an f32
// matmul: the kernel then reads twice the bytes and cannot use the host's
// bf16 dot-product or matrix units. This pass gives the contraction the
// narrow operands themselves (its body extends them, as named linalg ops do
// for mixed types), and, for `precision=` compiles of f32 models, truncates
// f32 operands to the narrow type first. The accumulator stays f32.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILNARROWCONTRACTIONOPERANDS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

bool isNarrowFloat(Type t) { return t.isBF16() || t.isF16(); }

/// How one f32 contraction input becomes narrow.
struct NarrowSource {
  enum Kind { None, Fold, Retype, Truncate } kind = None;
  Type type;               // the narrow element type
  Value narrow;            // Fold: the tensor the extension reads
  linalg::GenericOp producer;   // Retype: yields `extf` of a narrow value as `result`
  unsigned result = 0;
};

/// An elementwise linalg.generic whose body is one `arith.extf` of a bf16 /
/// f16 tensor (torch-mlir's upcast of a bf16 operand): fold it away.
NarrowSource foldableExtension(linalg::GenericOp g, Value v) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0) || !isNarrowFloat(ext.getIn().getType()) ||
      body.getTerminator()->getOperand(0) != ext.getResult())
    return {};
  Value narrow = g.getDpsInputOperand(0)->get();
  if (cast<RankedTensorType>(narrow.getType()).getShape() != cast<RankedTensorType>(v.getType()).getShape())
    return {};
  return {NarrowSource::Fold, ext.getIn().getType(), narrow, {}, 0};
}

/// A linalg.generic (e.g. a bf16 model's GELU, fused with the upcast of its
/// result) that yields `extf` of a narrow value: when the contraction is its
/// result's only user and the result's init is just a shape, it can yield the
/// narrow value itself, losslessly.
NarrowSource retypableProducer(linalg::GenericOp g, OpResult v) {
  unsigned r = v.getResultNumber();
  auto ext = g.getBlock()->getTerminator()->getOperand(r).getDefiningOp<arith::ExtFOp>();
  if (!ext || !isNarrowFloat(ext.getIn().getType()) || !v.hasOneUse() ||
      !g.getDpsInitOperand(r)->get().getDefiningOp<tensor::EmptyOp>() ||
      !g.getMatchingBlockArgument(g.getDpsInitOperand(r)).use_empty())
    return {};
  return {NarrowSource::Retype, ext.getIn().getType(), {}, g, r};
}

NarrowSource narrowSourceOf(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g)
    return {};
  NarrowSource s = foldableExtension(g, v);
  return s.kind != NarrowSource::None ? s : retypableProducer(g, cast<OpResult>(v));
}

/// Makes `s.producer` yield its narrow value as result `s.result`.
Value retypeProducer(const NarrowSource &s) {
  linalg::GenericOp g = s.producer;
  OpOperand *init = g.getDpsInitOperand(s.result);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  OpBuilder b(g);
  Value narrowInit = tensor::EmptyOp::create(b, empty.getLoc(), empty.getMixedSizes(), s.type);
  g.getMatchingBlockArgument(init).setType(s.type);
  init->set(narrowInit);
  Operation *yield = g.getBlock()->getTerminator();
  auto ext = yield->getOperand(s.result).getDefiningOp<arith::ExtFOp>();
  yield->setOperand(s.result, ext.getIn());
  if (ext->use_empty())
    ext->erase();
  OpResult result = g->getResult(s.result);
  result.setType(narrowInit.getType());
  return result;
}

/// `v` (an f32 tensor) truncated to `narrow` by an elementwise linalg.generic.
Value truncate(OpBuilder &b, Location loc, Value v, Type narrow) {
  auto type = cast<RankedTensorType>(v.getType());
  Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), narrow);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, ValueRange{v}, ValueRange{empty}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value t = arith::TruncFOp::create(nb, l, narrow, args[0]);
        linalg::YieldOp::create(nb, l, t);
      });
  return g.getResult(0);
}

/// Gives `op` the narrow inputs: their block arguments take the narrow type
/// and are extended back at the start of the body (what a named op built on
/// mixed types holds).
void retypeInputs(linalg::LinalgOp op, ArrayRef<Value> inputs) {
  Block *body = op.getBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  for (auto [i, v] : llvm::enumerate(inputs)) {
    op->setOperand(i, v);
    BlockArgument arg = body->getArgument(i);
    Type wide = arg.getType(), narrow = cast<RankedTensorType>(v.getType()).getElementType();
    if (wide == narrow)
      continue;   // already narrow
    arg.setType(narrow);
    Value ext = arith::ExtFOp::create(b, op.getLoc(), wide, arg);
    arg.replaceAllUsesExcept(ext, ext.getDefiningOp());
  }
}

struct CuvilNarrowContractionOperandsPass
    : cuvil::impl::CuvilNarrowContractionOperandsBase<CuvilNarrowContractionOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    Type target;
    if (elementType == "bf16")
      target = BFloat16Type::get(&getContext());
    else if (elementType == "f16")
      target = Float16Type::get(&getContext());
    else if (!elementType.empty()) {
      getOperation().emitError() << "cuvil-narrow-contraction-operands: element-type must be "
                                    "bf16, f16 or empty, got '" << elementType << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op) &&
          op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        contractions.push_back(op);
    });
    for (linalg::LinalgOp op : contractions)
      narrow(op, target);
  }

  void narrow(linalg::LinalgOp op, Type target) {
    // Per input: how it becomes narrow (an existing narrow operand: None).
    SmallVector<NarrowSource> sources;
    Type common;
    for (OpOperand *in : op.getDpsInputOperands()) {
      Type elem = getElementTypeOrSelf(in->get().getType());
      NarrowSource s;
      if (isNarrowFloat(elem))
        s.type = elem;
      else if (elem.isF32()) {
        s = narrowSourceOf(in->get());
        if (s.kind == NarrowSource::None && target)
          s = {NarrowSource::Truncate, target, {}, {}, 0};
      }
      if (!s.type || (common && common != s.type))
        return;   // not narrowable, or mixed: as it is
      common = s.type;
      sources.push_back(s);
    }
    if (llvm::all_of(sources, [](const NarrowSource &s) { return s.kind == NarrowSource::None; }))
      return;
    OpBuilder b(op);
    SmallVector<Value> inputs;
    for (auto [in, s] : llvm::zip(op.getDpsInputOperands(), sources)) {
      switch (s.kind) {
      case NarrowSource::None: inputs.push_back(in->get()); break;
      case NarrowSource::Fold: inputs.push_back(s.narrow); break;
      case NarrowSource::Retype: inputs.push_back(retypeProducer(s)); break;
      case NarrowSource::Truncate: inputs.push_back(truncate(b, op.getLoc(), in->get(), s.type)); break;
      }
    }
    retypeInputs(op, inputs);
  }
};

} // namespace
