//===- RowChains.h - ops that can run one row tile at a time together -----===//
// Softmax (row max, exp, row sum, division) and layer norm (mean, centering,
// variance, normalization) are chains of linalg ops over the same rows, each
// reading a whole row or one value per row of the ops before it. Outlined as
// one kernel, the elementwise schedule tiles the last op by rows and fuses
// the others into the tile: each row tile's intermediates stay in L1 instead
// of making one pass over memory per op.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TRANSFORMS_ROWCHAINS_H
#define CUVIL_TRANSFORMS_ROWCHAINS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::cuvil {

/// The producers of `root` (in program order) that belong to its row chain:
/// linalg.generic ops over the same rows as `root` (the leading loops of an
/// all-parallel op, or the parallel loops of one reducing its last loop),
/// whose results only ops of the chain read, each through the identity (a
/// whole row) or the projection onto the rows (one value per row). Empty if
/// `root` is not such an op or has no such producers.
llvm::SmallVector<Operation *> rowChainProducers(linalg::GenericOp root);

} // namespace mlir::cuvil

#endif // CUVIL_TRANSFORMS_ROWCHAINS_H
