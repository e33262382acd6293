//===- UnsignedInt8Lhs.cpp - int8 matmuls as u8 x s8 dot products ---------===//
// x86's int8 dot product (AVX512-VNNI / AVX-VNNI `vpdpbusd`) multiplies
// *unsigned* bytes of one operand by signed bytes of the other; Cuvil's int8
// matmuls are signed x signed (PT2E's activations are moved to int8, see
// python/cuvil/importer_quantized.py). The identity
//
//   sum_k a[m][k] * b[k][n] = sum_k (a[m][k] + 128) * b[k][n] - 128 * sum_k b[k][n]
//
// with a + 128 = a xor 0x80 read as unsigned, gives the dot product its
// operands: this pass rewrites each VNNI-packed int8 contraction (the rank-5
// linalg.generic C[m][n/64][64] += A[m][k/4][4] * B[n/64][k/4][64][4] that
// transform_scripts/pack_cpu.mlir makes of an int8 matmul) to read
// `A xor 0x80` zero-extended, and subtracts 128 x the column sums of B. When
// C starts from zero (a zero fill, the matmul's own), the correction is C's
// starting value instead: the contraction accumulates onto -128 x the sums
// (broadcast over the rows), so no pass over C follows it and the shared
// zero-filled buffer is not copied for it; otherwise a pass after it
// subtracts. The column sums read B only: for a weight they are computed
// once, in @main_prepack (cuvil-split-prepack), and so is their -128 x. The
// result is exact: i32 arithmetic wraps, so both sides agree modulo 2^32, and
// the signed sum fits in i32. With `shifted-rows`, the same for
// cuvil-im2col-conv's int8 convs over shifted rows (rank 7, A the padded
// input as rows of pixels), whose B sums over the taps too.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/Passes.h"
#include "cuvil/Transforms/ShiftedRows.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILUNSIGNEDINT8LHS
#include "cuvil/Dialect/CuvilPasses.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

bool isInt(Value v, unsigned width) {
  return getElementTypeOrSelf(v.getType()).isSignlessInteger(width);
}

/// The body `acc + extsi(a) * extsi(b)` (i8 x i8 -> i32; the add's operands in
/// either order, the multiply's as the inputs are).
bool isSignedInt8DotBody(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2), product;
  if (add.getLhs() == acc)
    product = add.getRhs();
  else if (add.getRhs() == acc)
    product = add.getLhs();
  else
    return false;
  auto mul = product.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  auto lhs = mul.getLhs().getDefiningOp<arith::ExtSIOp>();
  auto rhs = mul.getRhs().getDefiningOp<arith::ExtSIOp>();
  return lhs && rhs && lhs.getIn() == body.getArgument(0) && rhs.getIn() == body.getArgument(1) &&
         body.getOperations().size() == 5;
}

/// A contraction of `loops` loops on tensors, i8 A and B -> i32 C, with a
/// static B of rank `bRank` whose last dimension is a VNNI quad (4) and a
/// static C[m][n/64][64].
bool hasInt8VnniOperands(linalg::GenericOp g, unsigned loops, int64_t bRank) {
  if (!g.hasPureTensorSemantics() || g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != loops)
    return false;
  Value a = g.getDpsInputOperand(0)->get(), b = g.getDpsInputOperand(1)->get();
  Value c = g.getDpsInitOperand(0)->get();
  if (!isInt(a, 8) || !isInt(b, 8) || !isInt(c, 32))
    return false;
  auto bType = cast<RankedTensorType>(b.getType());
  auto cType = cast<RankedTensorType>(c.getType());
  return bType.hasStaticShape() && cType.hasStaticShape() && bType.getRank() == bRank && cType.getRank() == 3 &&
         bType.getShape().back() == 4;
}

/// The rank-5 VNNI int8 contraction of pack_cpu.mlir (see the file header).
bool isPackedInt8Contraction(linalg::GenericOp g) {
  if (!hasInt8VnniOperands(g, /*loops=*/5, /*bRank=*/4))
    return false;
  SmallVector<utils::IteratorType> it = g.getIteratorTypesArray();
  using utils::IteratorType;
  // loops [m, n/64, k/4, 64, 4]
  if (it[0] != IteratorType::parallel || it[1] != IteratorType::parallel || it[2] != IteratorType::reduction ||
      it[3] != IteratorType::parallel || it[4] != IteratorType::reduction)
    return false;
  MLIRContext *ctx = g.getContext();
  AffineExpr m, np, kq, j, v;
  bindDims(ctx, m, np, kq, j, v);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  return maps[0] == AffineMap::get(5, 0, {m, kq, v}, ctx) &&
         maps[1] == AffineMap::get(5, 0, {np, kq, j, v}, ctx) &&
         maps[2] == AffineMap::get(5, 0, {m, np, j}, ctx) && isSignedInt8DotBody(g);
}

/// cuvil-im2col-conv's int8 conv over shifted rows of its padded input:
/// rank 7, loops [n/64, q, 64, kh, kw, c/4, 4], A[q + kh * WP + kw][c/4][4],
/// B[n/64][kh][kw][c/4][64][4], C[q][n/64][64].
bool isShiftedRowsInt8Contraction(linalg::GenericOp g) {
  return hasInt8VnniOperands(g, /*loops=*/7, /*bRank=*/6) && cuvil::matchShiftedRowsContraction(g) &&
         isSignedInt8DotBody(g);
}

/// The all-parallel linalg.generic with one i8 result that writes the
/// packed lhs `v` through reshapes and constant-valued pads (the packing's
/// zero k rows, or a model's own), when every value on the way has one use
/// (so changing what it yields changes nothing else); else null. The pads
/// met on the way are added to `pads`: their padding value flips too.
linalg::GenericOp soleParallelProducer(Value v, SmallVectorImpl<tensor::PadOp> &pads) {
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto pad = dyn_cast<tensor::PadOp>(def)) {
      if (!pad.getConstantPaddingValue())
        return {};
      pads.push_back(pad);
    } else if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      auto g = dyn_cast<linalg::GenericOp>(def);
      if (!g || g->getNumResults() != 1 || g.getNumParallelLoops() != g.getNumLoops() || !isInt(v, 8))
        return {};
      return g;
    }
    v = def->getOperand(0);
  }
  return {};
}

/// `x xor 0x80` at the point `b` is set to.
Value flip(OpBuilder &b, Location loc, Value x) {
  Value bit = arith::ConstantOp::create(b, loc, b.getIntegerAttr(b.getI8Type(), -128));
  return arith::XOrIOp::create(b, loc, x, bit);
}

linalg::GenericOp elementwise(OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                              Value init, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
                                   [&](OpBuilder &nb, Location l, ValueRange args) {
                                     linalg::YieldOp::create(nb, l, body(nb, l, args));
                                   });
}

/// Whether `c` is a zero fill (through reshapes: the packing expands C).
bool isZeroFill(Value c) {
  while (auto reshape = c.getDefiningOp<tensor::ExpandShapeOp>())
    c = reshape.getSrc();
  auto fill = c.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_Zero());
}

void rewrite(linalg::GenericOp g) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  MLIRContext *ctx = g.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  Value a = g.getDpsInputOperand(0)->get(), bp = g.getDpsInputOperand(1)->get();
  Value c = g.getDpsInitOperand(0)->get();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bp.getType());

  // A xor 0x80: the same bits as a + 128 read as unsigned. Folded into the
  // op that writes A when the contraction is all that reads it (an im2col
  // gather, a quantize: no extra pass over A), else an op of its own.
  Value aFlip = a;
  SmallVector<tensor::PadOp> pads;
  if (linalg::GenericOp producer = soleParallelProducer(a, pads)) {
    Operation *yield = producer.getBlock()->getTerminator();
    OpBuilder yb(yield);
    yield->setOperand(0, flip(yb, yield->getLoc(), yield->getOperand(0)));
    // Every element of A flips, the padding too (the packing's zero k rows
    // meet B's zero rows either way; a model's own pad meets real weights).
    for (tensor::PadOp pad : pads) {
      Operation *padYield = pad.getRegion().front().getTerminator();
      OpBuilder pb(padYield);
      padYield->setOperand(0, flip(pb, padYield->getLoc(), pad.getConstantPaddingValue()));
    }
  } else {
    Value aEmpty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, a), i8);
    aFlip = elementwise(b, loc, {a}, {b.getMultiDimIdentityMap(aType.getRank())}, aEmpty,
                        [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                          return flip(nb, l, args[0]);
                        }).getResult(0);
  }

  // Column sums of B in C's packed layout: S[n/64][64] = the sum over every
  // dimension of B but its first (n/64) and second-to-last (the 64 columns):
  // [n/64][k/4][64][4], or [n/64][kh][kw][c/4][64][4] for shifted rows.
  const unsigned bRank = bType.getRank(), column = bRank - 2;
  SmallVector<int64_t> sumShape = {bType.getShape()[0], bType.getShape()[column]};
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, 0));
  Value sumEmpty = tensor::EmptyOp::create(b, loc, sumShape, i32);
  Value sumInit = linalg::FillOp::create(b, loc, zero, sumEmpty).getResult(0);
  SmallVector<AffineMap> sumMaps = {
      b.getMultiDimIdentityMap(bRank),
      AffineMap::get(bRank, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(column, ctx)}, ctx)};
  using utils::IteratorType;
  SmallVector<IteratorType> sumIterators(bRank, IteratorType::reduction);
  sumIterators[0] = sumIterators[column] = IteratorType::parallel;
  Value sums = linalg::GenericOp::create(
                   b, loc, TypeRange{sumInit.getType()}, ValueRange{bp}, ValueRange{sumInit}, sumMaps,
                   sumIterators,
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     Value w = arith::ExtSIOp::create(nb, l, i32, args[0]);
                     linalg::YieldOp::create(nb, l, ValueRange{arith::AddIOp::create(nb, l, args[1], w)});
                   })
                   .getResult(0);

  // The contraction on the unsigned lhs.
  g->setOperand(0, aFlip);
  Block &body = g.getRegion().front();
  auto mul = cast<arith::MulIOp>(*llvm::find_if(body, [](Operation &op) { return isa<arith::MulIOp>(op); }));
  auto lhsExt = mul.getLhs().getDefiningOp<arith::ExtSIOp>();
  OpBuilder bb(lhsExt);
  Value unsignedLhs = arith::ExtUIOp::create(bb, lhsExt.getLoc(), i32, lhsExt.getIn());
  lhsExt.replaceAllUsesWith(unsignedLhs);
  lhsExt.erase();

  AffineExpr m, n2, j2;
  bindDims(ctx, m, n2, j2);
  Value outEmpty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, c), i32);
  if (isZeroFill(c)) {
    // C starts at -128 * S[n/64][64] (broadcast over m) instead of zero.
    Value negEmpty = tensor::EmptyOp::create(b, loc, sumShape, i32);
    Value negSums = elementwise(b, loc, {sums}, {b.getMultiDimIdentityMap(2)}, negEmpty,
                                [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                  Value k = arith::ConstantOp::create(nb, l, nb.getIntegerAttr(i32, -128));
                                  return arith::MulIOp::create(nb, l, args[0], k);
                                }).getResult(0);
    Value init = elementwise(b, loc, {negSums}, {AffineMap::get(3, 0, {n2, j2}, ctx)}, outEmpty,
                             [&](OpBuilder &, Location, ValueRange args) -> Value { return args[0]; })
                     .getResult(0);
    g.getDpsInitOperand(0)->set(init);
    return;
  }

  // C = P - 128 * S[n/64][64], into a fresh tensor of C's shape.
  b.setInsertionPointAfter(g);
  auto fix = elementwise(b, loc, {g.getResult(0), sums},
                         {b.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {n2, j2}, ctx)}, outEmpty,
                         [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                           Value k128 = arith::ConstantOp::create(nb, l, nb.getIntegerAttr(i32, 128));
                           Value s = arith::MulIOp::create(nb, l, args[1], k128);
                           return arith::SubIOp::create(nb, l, args[0], s);
                         });
  g.getResult(0).replaceAllUsesExcept(fix.getResult(0), fix);
}

struct CuvilUnsignedInt8LhsPass : cuvil::impl::CuvilUnsignedInt8LhsBase<CuvilUnsignedInt8LhsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> contractions;
    getOperation().walk([&](linalg::GenericOp g) {
      if (isPackedInt8Contraction(g) || (shiftedRows && isShiftedRowsInt8Contraction(g)))
        contractions.push_back(g);
    });
    for (linalg::GenericOp g : contractions)
      rewrite(g);
  }
};

} // namespace
