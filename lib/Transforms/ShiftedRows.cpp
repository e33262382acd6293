//===- ShiftedRows.cpp - an int8 conv as a contraction over shifted rows -===//
// See include/cuvil/Transforms/ShiftedRows.h.
//===----------------------------------------------------------------------===//
#include "cuvil/Transforms/ShiftedRows.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;

namespace mlir::cuvil {

SmallVector<AffineMap> shiftedRowsMaps(MLIRContext *ctx, int64_t rowShift) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  return {AffineMap::get(7, 0, {d(1) + d(3) * rowShift + d(4), d(5), d(6)}, ctx),
          AffineMap::get(7, 0, {d(0), d(3), d(4), d(5), d(2), d(6)}, ctx),
          AffineMap::get(7, 0, {d(1), d(0), d(2)}, ctx)};
}

SmallVector<utils::IteratorType> shiftedRowsIteratorTypes() {
  using utils::IteratorType;
  return {IteratorType::parallel,  IteratorType::parallel,  IteratorType::parallel, IteratorType::reduction,
          IteratorType::reduction, IteratorType::reduction, IteratorType::reduction};
}

std::optional<int64_t> matchShiftedRowsContraction(linalg::LinalgOp op) {
  if (op.getNumLoops() != 7 || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getIteratorTypesArray() != shiftedRowsIteratorTypes())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0].getNumResults() != 3)
    return std::nullopt;
  // The row shift: A's first index at kh = 1 and every other loop 0.
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> unitKh(7, getAffineConstantExpr(0, ctx));
  unitKh[3] = getAffineConstantExpr(1, ctx);
  auto shift = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(maps[0].getResult(0).replaceDims(unitKh), 7, 0));
  if (!shift || shift.getValue() < 1)
    return std::nullopt;
  SmallVector<AffineMap> expected = shiftedRowsMaps(ctx, shift.getValue());
  for (auto [map, want] : llvm::zip_equal(maps, expected))
    if (simplifyAffineMap(map) != simplifyAffineMap(want))
      return std::nullopt;
  return shift.getValue();
}

} // namespace mlir::cuvil
