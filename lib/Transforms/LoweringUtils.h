//===- LoweringUtils.h - IR-building helpers for Cuvil lowering -*- C++ -*-===//
// Small builders shared by the lowering patterns: dims of (possibly dynamic)
// tensors, zero/neg-inf constants, broadcast indexing maps, and reductions
// along one axis expressed as linalg.generic; and which generic bodies read
// by computed index (gathers), which the elementwise passes leave alone.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_TRANSFORMS_LOWERINGUTILS_H
#define CUVIL_LIB_TRANSFORMS_LOWERINGUTILS_H

#include "cuvil/Dialect/CuvilOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::cuvil {

/// A body reading memory by computed position (`tensor.extract`, a gather
/// such as an embedding) or using its loop indices (`linalg.index`): the
/// passes that reshape, fuse or tile elementwise ops by rows leave these as
/// they are.
bool readsByIndex(linalg::GenericOp op);

/// A scalar constant of `type` (float or integer) with value `v`.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double v);
/// The lowest value of a float type (-inf) or integer type (min).
Value lowestConstant(OpBuilder &b, Location loc, Type type);
/// A constant of `type` holding `scalar`: `type` itself a scalar type, or a
/// vector type whose every element is `scalar` (a splat).
Value splatConstant(OpBuilder &b, Location loc, Type type, TypedAttr scalar);

/// tensor.empty of `shape`, taking each dynamic size from `dynSize(i)`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType, function_ref<Value(unsigned)> dynSize);
/// tensor.empty + linalg.fill with `v`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, function_ref<Value(unsigned)> dynSize,
                   Value fill);

/// Map from a rank-`resultRank` iteration space to an operand of `shape`
/// aligned on the right (numpy broadcasting): static size-1 dims that the
/// result stretches read index 0. `resultShape` decides what stretches.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);

/// For a result of `resultShape` broadcast from `operands`, the size of dim
/// `i` as a Value (taken from an operand that has it un-stretched).
Value broadcastDimSize(OpBuilder &b, Location loc, ArrayRef<Value> operands,
                       ArrayRef<int64_t> resultShape, unsigned i);

/// Reduces `input` along `axis` with `combine(acc, x)` starting at `init`.
/// The result drops `axis`.
Value reduceAlong(OpBuilder &b, Location loc, Value input, int64_t axis,
                  Value init,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> combine);

/// Map of the iteration space of `input` (rank r) onto the reduced value
/// (rank r - 1, `axis` dropped).
AffineMap dropAxisMap(MLIRContext *ctx, unsigned rank, int64_t axis);

/// Elementwise linalg.generic over the shape of `like` with `inputs` read
/// through `maps`; `body` gets the scalars and the iteration indices.
Value elementwise(OpBuilder &b, Location loc, Value like, Type elementType,
                  ValueRange inputs, ArrayRef<AffineMap> maps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);

inline bool isFloat(Type t) { return isa<FloatType>(t); }

/// Map for a batched operand: its leading (batch) dims aligned on the right
/// with `resultBatch` (broadcasting), followed by `tail`.
AffineMap batchedMap(MLIRContext *ctx, unsigned numLoops, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> resultBatch, ArrayRef<AffineExpr> tail);

/// Batched contraction `out[B.., i, j] = sum_r a[B.., i, r] * b[B.., r, j]`
/// as a linalg.generic; `bTransposed` reads `b[B.., j, r]`, transposed first
/// into a contiguous copy (see transposeLastTwo) so that the loop nest is
/// B.., i, r, j: the innermost loop walks a row of b and of the output.
Value batchedContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         bool bTransposed, RankedTensorType resultType,
                         function_ref<Value(unsigned)> dynSize);

/// `v` with its last two dims swapped, as a copying linalg.generic (not
/// linalg.transpose, which the CPU schedule expects to be 2-D).
Value transposeLastTwo(OpBuilder &b, Location loc, Value v);

/// Same contraction accumulating into `init` (`init += a * b`), in place:
/// `init`'s shape is the result shape. `reductionInner` puts the reduction
/// loop innermost; otherwise it goes just before the last result dim, so the
/// innermost loop walks the output (no store-to-load chain once lowered to
/// scalar loops).
Value batchedContractionInto(OpBuilder &b, Location loc, Value lhs, Value rhs,
                             bool bTransposed, Value init,
                             bool reductionInner = true);

/// Converts scalar `x` to `to` with the semantics of cuvil.dtype_cast:
/// float narrowing rounds to nearest-even; float -> int rounds per `rounding`
/// and saturates (+-inf included; NaN gives 0); int -> int saturates.
Value castScalar(OpBuilder &b, Location loc, Value x, Type to, RoundingMode rounding);

/// The scale cuvil.attention applies, as a scalar of the element type: the
/// `scale` attribute, else 1/sqrt(head dim). A dynamic head dim is read from
/// `query` at run time (AttentionOp::getEffectiveScale needs it static).
Value attentionScale(OpBuilder &b, Location loc, AttentionOp op, Value query);

/// Numerically stable softmax of `x` along `axis` (three linalg.generics).
/// With `emptyIsZero`, a slice whose entries are all -inf (an attention row
/// with every key masked) gives zeros, like PyTorch's scaled_dot_product_
/// attention and the block-masked lowering, instead of 0/0 = NaN.
Value softmaxAlong(OpBuilder &b, Location loc, Value x, int64_t axis,
                   bool emptyIsZero = false);

} // namespace mlir::cuvil

#endif
