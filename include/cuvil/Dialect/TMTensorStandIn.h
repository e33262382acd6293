//===- TMTensorStandIn.h - a holder for torch-mlir's tm_tensor ops -*- C++ -*-===//
// torch-mlir lowers scatter / index_put, sort (and topk) and scans (cumsum,
// cumprod) to its own `tm_tensor` dialect, which upstream MLIR does not have.
// Cuvil parses such ops (printed in the generic form by the importer) into
// this stand-in: a dialect of that namespace that accepts any op name and
// knows nothing about them (no verifier, no folding). `cuvil-lower-tm-tensor`,
// first in the raise step, rewrites each into scf loops on tensors; nothing
// else may see them.
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_TMTENSORSTANDIN_H
#define CUVIL_DIALECT_TMTENSORSTANDIN_H

#include "mlir/IR/Dialect.h"

namespace mlir::cuvil {

class TMTensorStandInDialect : public Dialect {
public:
  explicit TMTensorStandInDialect(MLIRContext *context);
  static constexpr StringLiteral getDialectNamespace() { return "tm_tensor"; }
};

} // namespace mlir::cuvil

MLIR_DECLARE_EXPLICIT_TYPE_ID(mlir::cuvil::TMTensorStandInDialect)

#endif
