//===- LowerLayouts.h - lowering of Cuvil layout encodings -----*- C++ -*-===//
#ifndef CUVIL_LIB_TRANSFORMS_LOWERLAYOUTS_H
#define CUVIL_LIB_TRANSFORMS_LOWERLAYOUTS_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::cuvil {
/// Rewrites tensors with a Cuvil layout encoding into tensors of their stored
/// values (function signatures included) and lowers the ops that read or
/// write them: to_layout, to_dense, matmul with a sparse_csr lhs, and
/// attention with a block_masked layout. Their loops run over stored
/// entries/blocks only, so cost follows density.
LogicalResult lowerLayouts(ModuleOp module);
} // namespace mlir::cuvil

#endif
