//===- ShiftedRows.h - an int8 conv as a contraction over shifted rows -*- C++ -*-===//
// cuvil-im2col-conv writes a stride-1 int8 conv as one linalg.generic over
// shifted rows of its padded input (Im2colConv.cpp, shiftedRowsConv); the
// rewrites that take it afterwards (cuvil-fold-unit-extent-dims keeps it
// whole, cuvil-unsigned-int8-lhs flips its input, fold_shifted_rows_taps
// folds its one-tap tiles, cuvil-amx-matmul writes its tiles as tile code)
// know it by the indexing maps written here, once.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_SHIFTEDROWS_H
#define CUVIL_TRANSFORMS_SHIFTEDROWS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include <optional>

namespace mlir::cuvil {

/// The loops [n/64, q, 64, kh, kw, c/4, 4] and maps A[q + kh * rowShift + kw][c/4][4],
/// B[n/64][kh][kw][c/4][64][4], C[q][n/64][64]; `rowShift` is the padded
/// input's width.
SmallVector<AffineMap> shiftedRowsMaps(MLIRContext *ctx, int64_t rowShift);

/// Three parallel loops (n/64, q, 64), then four reductions (kh, kw, c/4, 4).
SmallVector<utils::IteratorType> shiftedRowsIteratorTypes();

/// The row shift of `op` when it has two inputs, one init and the maps and
/// loop kinds above (its tiles keep them, so a tile matches too); else
/// nullopt. Sizes, element types and the body are the caller's to check.
std::optional<int64_t> matchShiftedRowsContraction(linalg::LinalgOp op);

} // namespace mlir::cuvil

#endif // CUVIL_TRANSFORMS_SHIFTEDROWS_H
