//===- NarrowContractionOperands.cpp - bf16/f16 operands, f32 accumulation ===//
// PyTorch runs a bf16 / fp16 model's matmuls with f32 accumulation, and
// torch-mlir spells that as `extf` of each operand to f32 followed by an f32
// matmul: the kernel then reads twice the bytes and cannot use the host's
// bf16 dot-product or matrix units. This pass gives the contraction the
// narrow operands themselves (its body extends them, as named linalg ops do
// for mixed types), and, for `precision=` compiles of f32 models, truncates
// f32 operands to the narrow type first. The accumulator stays f32.
//
// Weight-only quantized layers (cuvil.weight_only: f32 activations times
// `sitofp` of int8 weights) get the same treatment for the integer operand
// alone: the contraction reads the i8 tensor and converts it in its body, so
// the weight stays int8 in memory (a quarter of the f32 bytes) instead of
// being converted once in main_prepack; the f32 operand stays f32.
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
bool isInt8(Type t) { return t.isSignlessInteger(8); }

/// The narrow value an upcast reads: `extf` of bf16 / f16, or `sitofp` of
/// i8 (a weight-only quantized weight); null for anything else.
Value upcastSource(Operation *op) {
  if (auto ext = dyn_cast_or_null<arith::ExtFOp>(op))
    return isNarrowFloat(ext.getIn().getType()) ? ext.getIn() : Value();
  if (auto conv = dyn_cast_or_null<arith::SIToFPOp>(op))
    return isInt8(conv.getIn().getType()) ? conv.getIn() : Value();
  return {};
}

/// How one f32 contraction input becomes narrow.
struct NarrowSource {
  enum Kind { None, Fold, Retype, Truncate, TransposeFold } kind = None;
  Type type;               // the narrow element type
  Value narrow;            // Fold, TransposeFold: the tensor the extension reads
  linalg::GenericOp producer;   // Retype: yields `extf` of a narrow value as `result`
  unsigned result = 0;
  linalg::TransposeOp transpose;   // TransposeFold: transposes the extension's result
};

/// An elementwise linalg.generic whose body is one upcast (torch-mlir's
/// `extf` of a bf16 operand, `sitofp` of an int8 weight): fold it away.
NarrowSource foldableExtension(linalg::GenericOp g, Value v) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = g.getRegion().front();
  Value in = upcastSource(&body.front());
  if (!in || in != body.getArgument(0) || body.getTerminator()->getOperand(0) != body.front().getResult(0))
    return {};
  Value narrow = g.getDpsInputOperand(0)->get();
  if (cast<RankedTensorType>(narrow.getType()).getShape() != cast<RankedTensorType>(v.getType()).getShape())
    return {};
  return {NarrowSource::Fold, in.getType(), narrow, {}, 0};
}

/// A linalg.generic (e.g. a bf16 model's GELU, fused with the upcast of its
/// result) that yields `extf` of a narrow value: when the contraction is its
/// result's only user and the result's init is just a shape, it can yield the
/// narrow value itself, losslessly.
NarrowSource retypableProducer(linalg::GenericOp g, OpResult v) {
  unsigned r = v.getResultNumber();
  Value in = upcastSource(g.getBlock()->getTerminator()->getOperand(r).getDefiningOp());
  if (!in || !v.hasOneUse() ||
      !g.getDpsInitOperand(r)->get().getDefiningOp<tensor::EmptyOp>() ||
      !g.getMatchingBlockArgument(g.getDpsInitOperand(r)).use_empty())
    return {};
  return {NarrowSource::Retype, in.getType(), {}, g, r};
}

NarrowSource narrowSourceOf(Value v) {
  // torch-mlir's nn.Linear transposes the upcast weight (W^T): transposing
  // the narrow tensor instead is the same, and a weight-only transpose.
  if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
    auto g = t.getInput().getDefiningOp<linalg::GenericOp>();
    if (!g || !t.getInput().hasOneUse())
      return {};
    NarrowSource s = foldableExtension(g, t.getInput());
    if (s.kind != NarrowSource::Fold)
      return {};
    s.kind = NarrowSource::TransposeFold;
    s.transpose = t;
    return s;
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g)
    return {};
  NarrowSource s = foldableExtension(g, v);
  return s.kind != NarrowSource::None ? s : retypableProducer(g, cast<OpResult>(v));
}

/// The narrow tensor transposed as `s.transpose` transposes its extension.
Value transposeNarrow(const NarrowSource &s) {
  linalg::TransposeOp t = s.transpose;
  OpBuilder b(t);
  Value init = tensor::EmptyOp::create(b, t.getLoc(), tensor::getMixedSizes(b, t.getLoc(), t.getInit()), s.type);
  return linalg::TransposeOp::create(b, t.getLoc(), s.narrow, init, t.getPermutation())->getResult(0);
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
  Operation *upcast = yield->getOperand(s.result).getDefiningOp();
  yield->setOperand(s.result, upcastSource(upcast));
  if (upcast->use_empty())
    upcast->erase();
  OpResult result = g->getResult(s.result);
  result.setType(narrowInit.getType());
  return result;
}

/// `v` truncated inside the elementwise generic that computes it (through
/// reshapes), when the contraction being narrowed is its only user: the
/// generic yields the narrow value (half the bytes written) and no
/// truncating op follows (BERT-base's GELU output, 128x3072, under
/// precision="bf16": 0.06 ms per layer on Zen 4). Null where it cannot
/// (another user, a reduction, an init the body reads).
Value truncateInProducer(Value v, Type narrow) {
  SmallVector<Operation *> reshapes;   // from the contraction's operand inwards
  Value source = v;
  while (source.hasOneUse() && isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                                   source.getDefiningOp())) {
    reshapes.push_back(source.getDefiningOp());
    source = source.getDefiningOp()->getOperand(0);
  }
  auto result = dyn_cast<OpResult>(source);
  auto g = result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : linalg::GenericOp();
  if (!g || !source.hasOneUse() || !g.hasPureTensorSemantics() || g.getNumReductionLoops() != 0)
    return {};
  OpOperand *init = g.getDpsInitOperand(result.getResultNumber());
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || g.payloadUsesValueFromOperand(init))
    return {};
  OpBuilder b(g);
  Value narrowInit = tensor::EmptyOp::create(b, empty.getLoc(), empty.getMixedSizes(), narrow);
  g.getMatchingBlockArgument(init).setType(narrow);
  init->set(narrowInit);
  Operation *yield = g.getBlock()->getTerminator();
  b.setInsertionPoint(yield);
  Value wide = yield->getOperand(result.getResultNumber());
  yield->setOperand(result.getResultNumber(), arith::TruncFOp::create(b, g.getLoc(), narrow, wide));
  result.setType(narrowInit.getType());
  // Reshapes keep their shapes and take the element type.
  for (Operation *reshape : llvm::reverse(reshapes)) {
    auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
    reshape->getResult(0).setType(type.clone(narrow));
  }
  return v;
}

/// `v` (an f32 tensor) truncated to `narrow` by an elementwise linalg.generic.
Value truncate(OpBuilder &b, Location loc, Value v, Type narrow) {
  if (Value inProducer = truncateInProducer(v, narrow))
    return inProducer;
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

/// The narrow tensor `s` makes of `op`'s input `wide` (itself for None).
Value narrowValue(linalg::LinalgOp op, Value wide, const NarrowSource &s) {
  switch (s.kind) {
  case NarrowSource::None: return wide;
  case NarrowSource::Fold: return s.narrow;
  case NarrowSource::Retype: return retypeProducer(s);
  case NarrowSource::TransposeFold: return transposeNarrow(s);
  case NarrowSource::Truncate: {
    OpBuilder b(op);
    return truncate(b, op.getLoc(), wide, s.type);
  }
  }
  llvm_unreachable("every NarrowSource kind is handled");
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
    Value ext = isInt8(narrow) ? Value(arith::SIToFPOp::create(b, op.getLoc(), wide, arg))
                               : Value(arith::ExtFOp::create(b, op.getLoc(), wide, arg));
    arg.replaceAllUsesExcept(ext, ext.getDefiningOp());
  }
}

/// A batched float contraction with one batch, one m, one n and one k loop
/// (cuvil.matmul's batched form: attention's q.k^T, p.v), mulf + addf.
bool isBatchedFloatContraction(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() != 1 || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || op.getNumLoops() != 4)
    return false;
  Block &body = *op.getBlock();
  return llvm::any_of(body, [](Operation &o) { return isa<arith::MulFOp>(o); }) &&
         llvm::all_of(op.getDpsInputOperands(),
                      [](OpOperand *in) { return getElementTypeOrSelf(in->get().getType()).isF32(); });
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
    SmallVector<linalg::LinalgOp> contractions, batched;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 || op->getNumResults() != 1 ||
          !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        return;
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op))
        contractions.push_back(op);
      // cuvil.matmul's batched form (cuvil-lower-to-linalg), e.g. the
      // grouped products of a weight-only int4 layer: integer weights only.
      else if (isa<linalg::GenericOp>(op) && linalg::isaContractionOpInterface(op))
        batched.push_back(op);
    });
    for (linalg::LinalgOp op : contractions)
      narrow(op, target);
    for (linalg::LinalgOp op : batched) {
      if (batchedContractions && target && isBatchedFloatContraction(op))
        narrow(op, target);
      else
        narrowIntegerWeights(op);
    }
  }

  void narrow(linalg::LinalgOp op, Type target) {
    if (narrowIntegerWeights(op))
      return;
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
    SmallVector<Value> inputs;
    for (auto [in, s] : llvm::zip(op.getDpsInputOperands(), sources))
      inputs.push_back(narrowValue(op, in->get(), s));
    retypeInputs(op, inputs);
  }

  /// f32 x sitofp(i8) (a weight-only quantized layer): the i8 operand is
  /// read as it is, every other operand stays as it is (no `precision=`
  /// truncation: the activations of such a layer stay f32). Whether any
  /// input was such an upcast.
  bool narrowIntegerWeights(linalg::LinalgOp op) {
    SmallVector<Value> inputs;
    bool any = false;
    for (OpOperand *in : op.getDpsInputOperands()) {
      NarrowSource s = getElementTypeOrSelf(in->get().getType()).isF32() ? narrowSourceOf(in->get())
                                                                          : NarrowSource();
      if (s.kind == NarrowSource::None || !isInt8(s.type)) {
        inputs.push_back(in->get());
        continue;
      }
      any = true;
      inputs.push_back(narrowValue(op, in->get(), s));
    }
    if (any)
      retypeInputs(op, inputs);
    return any;
  }
};

} // namespace
