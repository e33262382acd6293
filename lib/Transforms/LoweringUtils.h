//===- LoweringUtils.h - IR-building helpers for Cuvil lowering -*- C++ -*-===//
// Small builders shared by the lowering patterns: dims of (possibly dynamic)
// tensors, zero/neg-inf constants, broadcast indexing maps, and reductions
// along one axis expressed as linalg.generic.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_TRANSFORMS_LOWERINGUTILS_H
#define CUVIL_LIB_TRANSFORMS_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::cuvil {

/// A scalar constant of `type` (float or integer) with value `v`.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double v);
/// The lowest value of a float type (-inf) or integer type (min).
Value lowestConstant(OpBuilder &b, Location loc, Type type);

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
/// as a linalg.generic; `bTransposed` reads `b[B.., j, r]`.
Value batchedContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         bool bTransposed, RankedTensorType resultType,
                         function_ref<Value(unsigned)> dynSize);

/// Numerically stable softmax of `x` along `axis` (three linalg.generics).
Value softmaxAlong(OpBuilder &b, Location loc, Value x, int64_t axis);

} // namespace mlir::cuvil

#endif
