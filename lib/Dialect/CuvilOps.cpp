//===- CuvilOps.cpp - shape inference, verification, folding --------------===//
// Shape rules follow numpy/PyTorch. A dynamic dim (`?`) is assumed to match
// whatever static size it meets; runtime broadcasting of a `?` dim that turns
// out to be 1 is not supported (torch-mlir makes the same assumption).
//===----------------------------------------------------------------------===//
#include "cuvil/Dialect/CuvilOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuvil;

//===----------------------------------------------------------------------===//
// Shared shape helpers
//===----------------------------------------------------------------------===//

/// Emits an error at `loc` when available (verification), else stays silent
/// (type inference probing from builders).
static LogicalResult failAt(std::optional<Location> loc, const Twine &message) {
  if (loc)
    return emitError(*loc) << message;
  return failure();
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

/// Numpy broadcast of two shapes; fails naming both operands on a mismatch.
static FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b, StringRef aName,
                StringRef bName, std::optional<Location> loc) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (ShapedType::isDynamic(da)) {
      out[i] = db;
    } else if (ShapedType::isDynamic(db) || da == db) {
      out[i] = da;
    } else {
      (void)failAt(loc, llvm::formatv("incompatible broadcast: {0} {1} and {2} {3} "
                                      "differ at result dim {4} ({5} vs {6})",
                                      aName, shapeStr(a), bName, shapeStr(b), i,
                                      da, db));
      return failure();
    }
  }
  return out;
}

static bool dimsConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static LogicalResult requireDense(std::optional<Location> loc, Type type,
                                  StringRef name) {
  if (getLayout(type))
    return failAt(loc, Twine(name) + " must be a dense tensor here; convert it "
                                     "with cuvil.to_dense first");
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// The element type a cuvil.matmul of `operand` elements produces: int8
/// products accumulate in i32 (torch._int_mm, x86's int8 dot products), so
/// that a sum of K products does not wrap; other types accumulate in their own.
static Type accumulatorType(Type operand) {
  if (operand.isSignlessInteger(8))
    return IntegerType::get(operand.getContext(), 32);
  return operand;
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return failAt(loc, llvm::formatv("cuvil.matmul needs operands of rank >= 2, "
                                     "got lhs rank {0} and rhs rank {1}",
                                     lhs.getRank(), rhs.getRank()));
  if (lhs.getElementType() != rhs.getElementType())
    return failAt(loc, "cuvil.matmul operands must share an element type (lhs " +
                           llvm::formatv("{0}", lhs.getElementType()).str() +
                           ", rhs " +
                           llvm::formatv("{0}", rhs.getElementType()).str() + ")");
  if (auto layout = getLayout(lhs)) {
    if (!isa<SparseCSRAttr>(layout) || lhs.getRank() != 2)
      return failAt(loc, "cuvil.matmul lhs layout must be a rank-2 #cuvil.sparse_csr");
  }
  if (failed(requireDense(loc, rhs, "cuvil.matmul rhs")))
    return failure();
  bool tb = adaptor.getTransposeB();
  ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape();
  int64_t m = ls[ls.size() - 2], k = ls.back();
  int64_t rk = tb ? rs.back() : rs[rs.size() - 2];
  int64_t n = tb ? rs[rs.size() - 2] : rs.back();
  if (dimsConflict(k, rk))
    return failAt(loc, llvm::formatv("cuvil.matmul contracting dims differ: lhs "
                                     "{0} has K = {1}, rhs {2} has K = {3}{4}",
                                     shapeStr(ls), k, shapeStr(rs), rk,
                                     tb ? " (transpose_b)" : ""));
  auto batch = broadcastShapes(ls.drop_back(2), rs.drop_back(2), "lhs batch",
                               "rhs batch", loc);
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape(*batch);
  shape.append({m, n});
  inferred.push_back(RankedTensorType::get(shape, accumulatorType(lhs.getElementType())));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferBinary(StringRef opName, std::optional<Location> loc,
                                 Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (failed(requireDense(loc, lhs, (opName + " lhs").str())) ||
      failed(requireDense(loc, rhs, (opName + " rhs").str())))
    return failure();
  if (lhs.getElementType() != rhs.getElementType())
    return failAt(loc, llvm::formatv("{0} operands must share an element type "
                                     "(lhs {1}, rhs {2}); insert cuvil.dtype_cast",
                                     opName, lhs.getElementType(),
                                     rhs.getElementType()));
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape(), "lhs", "rhs", loc);
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

enum class Identity { AddZero, SubZero, One };

/// `x op c` folds to `x` when `c` is the identity and no broadcast happens.
/// IEEE: x + (-0.0) == x for every x, but -0.0 + (+0.0) is +0.0, so only
/// -0.0 is the additive identity; x - (+0.0) == x.
static OpFoldResult foldIdentityRhs(Operation *op, Value lhs, Value rhs, Identity identity) {
  if (lhs.getType() != op->getResult(0).getType())
    return {};
  bool matched = false;
  switch (identity) {
  case Identity::AddZero:
    matched = matchPattern(rhs, m_NegZeroFloat()) || matchPattern(rhs, m_Zero());
    break;
  case Identity::SubZero:
    matched = matchPattern(rhs, m_PosZeroFloat()) || matchPattern(rhs, m_Zero());
    break;
  case Identity::One:
    matched = matchPattern(rhs, m_OneFloat()) || matchPattern(rhs, m_One());
    break;
  }
  return matched ? OpFoldResult(lhs) : OpFoldResult();
}

#define CUVIL_BINARY_INFER(OP, NAME)                                            \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, \
                                     Adaptor adaptor,                            \
                                     SmallVectorImpl<Type> &inferred) {          \
    return inferBinary(NAME, loc, adaptor, inferred);                            \
  }
CUVIL_BINARY_INFER(AddOp, "cuvil.add")
CUVIL_BINARY_INFER(SubOp, "cuvil.sub")
CUVIL_BINARY_INFER(MulOp, "cuvil.mul")
CUVIL_BINARY_INFER(DivOp, "cuvil.div")
CUVIL_BINARY_INFER(MaxOp, "cuvil.max")
#undef CUVIL_BINARY_INFER

OpFoldResult AddOp::fold(FoldAdaptor) {
  if (OpFoldResult r = foldIdentityRhs(*this, getLhs(), getRhs(), Identity::AddZero))
    return r;
  return foldIdentityRhs(*this, getRhs(), getLhs(), Identity::AddZero);
}
OpFoldResult SubOp::fold(FoldAdaptor) {
  return foldIdentityRhs(*this, getLhs(), getRhs(), Identity::SubZero);
}
OpFoldResult MulOp::fold(FoldAdaptor) {
  if (OpFoldResult r = foldIdentityRhs(*this, getLhs(), getRhs(), Identity::One))
    return r;
  return foldIdentityRhs(*this, getRhs(), getLhs(), Identity::One);
}
OpFoldResult DivOp::fold(FoldAdaptor) {
  return foldIdentityRhs(*this, getLhs(), getRhs(), Identity::One);
}
OpFoldResult MaxOp::fold(FoldAdaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return {};
}

//===----------------------------------------------------------------------===//
// SoftmaxOp, LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < -rank || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for input of rank "
                         << rank;
  return requireDense(getLoc(), getInput().getType(), "cuvil.softmax input");
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 1)
    return failAt(loc, "cuvil.layer_norm input must have rank >= 1");
  int64_t features = input.getShape().back();
  for (auto [name, value] : {std::pair<StringRef, Value>{"weight", adaptor.getWeight()},
                             {"bias", adaptor.getBias()}}) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() != 1)
      return failAt(loc, llvm::formatv("cuvil.layer_norm {0} must be 1-D, got rank {1}",
                                       name, type.getRank()));
    if (dimsConflict(type.getDimSize(0), features))
      return failAt(loc, llvm::formatv("cuvil.layer_norm {0} has {1} elements but "
                                       "the input's last dim is {2}",
                                       name, type.getDimSize(0), features));
    if (type.getElementType() != input.getElementType())
      return failAt(loc, llvm::formatv("cuvil.layer_norm {0} element type {1} differs "
                                       "from the input's {2}",
                                       name, type.getElementType(),
                                       input.getElementType()));
  }
  inferred.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
  auto k = cast<RankedTensorType>(adaptor.getKey().getType());
  auto v = cast<RankedTensorType>(adaptor.getValue().getType());
  if (q.getRank() < 2 || q.getRank() != k.getRank() || q.getRank() != v.getRank())
    return failAt(loc, llvm::formatv("cuvil.attention query, key and value must "
                                     "have one rank >= 2, got {0}, {1}, {2}",
                                     q.getRank(), k.getRank(), v.getRank()));
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return failAt(loc, "cuvil.attention query, key and value must share an element type");
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (dimsConflict(qs.back(), ks.back()))
    return failAt(loc, llvm::formatv("cuvil.attention head dim differs: query {0} "
                                     "vs key {1}",
                                     shapeStr(qs), shapeStr(ks)));
  if (dimsConflict(ks[ks.size() - 2], vs[vs.size() - 2]))
    return failAt(loc, llvm::formatv("cuvil.attention key and value sequence "
                                     "lengths differ: key {0} vs value {1}",
                                     shapeStr(ks), shapeStr(vs)));
  auto batch = broadcastShapes(qs.drop_back(2), ks.drop_back(2), "query batch",
                               "key batch", loc);
  if (failed(batch))
    return failure();
  auto batch2 = broadcastShapes(*batch, vs.drop_back(2), "query/key batch",
                                "value batch", loc);
  if (failed(batch2))
    return failure();
  SmallVector<int64_t> shape(*batch2);
  shape.append({qs[qs.size() - 2], vs.back()});
  inferred.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType();
  auto k = getKey().getType();
  // Checked before the shapes are read: this verifier can run before the
  // inferred result type is compared (a rank-0 result crashed it; fuzzing).
  int64_t resultRank = getResult().getType().getRank();
  if (q.getRank() < 2 || k.getRank() < 2 || resultRank < 2)
    return emitOpError() << "query, key and result must have rank >= 2, got " << q.getRank()
                         << ", " << k.getRank() << ", " << resultRank;
  int64_t s = q.getDimSize(q.getRank() - 2), t = k.getDimSize(k.getRank() - 2);
  if (Value mask = getMask()) {
    SmallVector<int64_t> scores(getResult().getType().getShape().drop_back(1));
    scores.push_back(t);
    auto maskShape = cast<RankedTensorType>(mask.getType()).getShape();
    auto b = broadcastShapes(maskShape, scores, "mask", "scores", getLoc());
    if (failed(b))
      return failure();
    if (b->size() != scores.size() || llvm::any_of(llvm::zip(*b, scores), [](auto p) {
          return dimsConflict(std::get<0>(p), std::get<1>(p));
        }))
      return emitOpError() << "mask " << shapeStr(maskShape)
                           << " must broadcast to the scores shape "
                           << shapeStr(scores);
  }
  if (auto layout = getLayoutAttr())
    if (failed(layout.verifyAgainstShape({s, t}, [&]() {
          return emitOpError() << "layout does not fit the [S, T] = "
                               << shapeStr({s, t}) << " scores: ";
        })))
      return failure();
  if (auto scale = getScale(); scale && !(scale->convertToDouble() > 0.0))
    return emitOpError() << "scale must be positive, got " << scale->convertToDouble();
  return success();
}

double AttentionOp::getEffectiveScale() {
  if (auto scale = getScale())
    return scale->convertToDouble();
  int64_t d = getQuery().getType().getShape().back();
  return 1.0 / std::sqrt(static_cast<double>(d));
}

//===----------------------------------------------------------------------===//
// DtypeCastOp
//===----------------------------------------------------------------------===//

LogicalResult DtypeCastOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getShape() != out.getShape())
    return emitOpError() << "result shape " << shapeStr(out.getShape())
                         << " must equal input shape " << shapeStr(in.getShape());
  if (in.getEncoding() != out.getEncoding())
    return emitOpError() << "must not change the layout; use cuvil.to_layout / "
                            "cuvil.to_dense";
  return success();
}

OpFoldResult DtypeCastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

/// True when every value of `from` is exactly representable in `to`.
static bool isExactConversion(Type from, Type to) {
  if (from == to)
    return true;
  auto ff = dyn_cast<FloatType>(from), tf = dyn_cast<FloatType>(to);
  if (ff && tf)
    return ff.getFPMantissaWidth() <= tf.getFPMantissaWidth() &&
           ff.getWidth() <= tf.getWidth() &&
           // bf16's exponent range is f32's: f16 -> bf16 widens neither way.
           !(ff.isF16() && tf.isBF16());
  auto fi = dyn_cast<IntegerType>(from);
  if (fi && isa<IntegerType>(to))
    return fi.getWidth() <= to.getIntOrFloatBitWidth();
  if (fi && tf)
    return static_cast<int>(fi.getWidth()) <= tf.getFPMantissaWidth();
  return false;
}

namespace {
/// cast(cast(x : A -> B) -> C) == cast(x : A -> C) when A -> B is exact.
struct FoldExactCastChain : OpRewritePattern<DtypeCastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DtypeCastOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<DtypeCastOp>();
    if (!inner)
      return failure();
    Type a = inner.getInput().getType().getElementType();
    Type b = inner.getResult().getType().getElementType();
    if (!isExactConversion(a, b))
      return failure();
    rewriter.replaceOpWithNewOp<DtypeCastOp>(op, op.getType(), inner.getInput(),
                                             op.getRounding());
    return success();
  }
};
} // namespace

void DtypeCastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldExactCastChain>(context);
}

//===----------------------------------------------------------------------===//
// Layout conversion
//===----------------------------------------------------------------------===//

static LogicalResult verifyLayoutChange(Operation *op, RankedTensorType dense,
                                        RankedTensorType encoded) {
  if (getLayout(dense))
    return op->emitOpError() << "dense side must have no layout encoding";
  if (!getLayout(encoded))
    return op->emitOpError()
           << "encoded side must carry #cuvil.sparse_csr or #cuvil.block_masked";
  if (dense.getShape() != encoded.getShape() ||
      dense.getElementType() != encoded.getElementType())
    return op->emitOpError() << "shapes and element types must match";
  return success();
}

LogicalResult ToLayoutOp::verify() {
  return verifyLayoutChange(*this, getInput().getType(), getResult().getType());
}

OpFoldResult ToLayoutOp::fold(FoldAdaptor) {
  // to_layout(to_dense(x)) == x: x already holds exactly the stored entries.
  if (auto dense = getInput().getDefiningOp<ToDenseOp>())
    if (dense.getInput().getType() == getResult().getType())
      return dense.getInput();
  return {};
}

LogicalResult ToDenseOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  inferred.push_back(RankedTensorType::get(type.getShape(), type.getElementType()));
  return success();
}

LogicalResult ToDenseOp::verify() {
  return verifyLayoutChange(*this, getResult().getType(), getInput().getType());
}

#define GET_OP_CLASSES
#include "cuvil/Dialect/CuvilOps.cpp.inc"
